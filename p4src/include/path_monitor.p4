// Path measurement at the egress edge: a tagged packet arriving from a path
// updates its path's receive counters, loss and reordering (from the tag's
// sequence number), may trigger a rate-bounded path_report_t digest, and
// loses its tag before it goes on towards a host.
//
// Sequence numbers are compared by their signed 32-bit difference d to the
// path's expected next one, so wrap-around is harmless:
//   d == 0: in order;
//   d > 0:  d packets are missing: lost += d, expected = seq + 1;
//   d < 0:  a late packet that filled a gap counted before: reordered += 1,
//           lost -= 1 (not below 0: a duplicate does not make lost wrap);
//   d < -SEQ_RESTART_WINDOW: no packet is that late; the ingress edge was
//           restarted (its sequence numbers start again at 0): expected =
//           seq + 1, nothing counted.
// The first tagged packet of a path after the pipeline push only
// synchronises expected (no loss is counted before it).
//
// Per-flow order across paths (LM3's receiver buffer blocking): a flow's
// packets carry the ingress edge's time stamps (tx_ts, one clock for every
// path), so a packet whose tx_ts is older than the newest one already
// received for its flow was overtaken by a later packet of the same flow on
// another (faster) path: flow_ooo of the late packet's path counts it.
// TCP retransmissions are new transmissions with new time stamps and do not
// count. Flows share FLOW_ORDER_SLOTS slots by 5-tuple hash; a slot records
// a 16-bit flow signature and restarts when another flow takes it over, or
// when a tx_ts lies more than ORDER_RESTART_US behind the newest (the
// ingress edge's clock restarted with the switch: no packet is that late).
#ifndef __PATH_MONITOR__
#define __PATH_MONITOR__

#include "headers.p4"
#include "sizes.p4"

// A packet more than this many sequence numbers behind its path's expected
// one, or more than this many µs of the ingress clock behind its flow's
// newest, comes from a restarted ingress edge, not from reordering.
const bit<32> SEQ_RESTART_WINDOW = 65536;
const timestamp_t ORDER_RESTART_US = 2000000;

control PathMonitor(inout headers_t hdr,
                    inout local_metadata_t meta,
                    inout standard_metadata_t std_meta) {

    // Per-path state, by path id (the tag's). The controller does not read
    // the registers: their values travel in the digest.
    register<bit<32>>(PATH_REGISTER_SIZE) rx_packets;
    register<bit<32>>(PATH_REGISTER_SIZE) rx_bytes;
    register<path_seq_t>(PATH_REGISTER_SIZE) expected_seq;
    register<bit<32>>(PATH_REGISTER_SIZE) lost;
    register<bit<32>>(PATH_REGISTER_SIZE) reordered;
    register<timestamp_t>(PATH_REGISTER_SIZE) last_report_ts;
    register<bit<32>>(PATH_REGISTER_SIZE) flow_ooo;
    // Per flow slot: signature and newest tx_ts received.
    register<bit<16>>(FLOW_ORDER_SLOTS) order_sig;
    register<timestamp_t>(FLOW_ORDER_SLOTS) order_ts;

    timestamp_t report_interval = 0;
    bool reporting = false;

    // Report this path at most once per interval_us µs.
    action set_report_interval(timestamp_t interval_us) {
        report_interval = interval_us;
        reporting = true;
    }

    // Purpose: the report interval of each path (by path id), settable at
    // run time.
    // Miss: NoAction, the path is measured but never reported.
    table report_config {
        key = {
            hdr.path_tag.path_id: exact;
        }
        actions = {
            set_report_interval;
            @defaultonly NoAction;
        }
        const default_action = NoAction();
        size = REPORT_CONFIG_TABLE_SIZE;
    }

    apply {
        path_id_t path_id = hdr.path_tag.path_id;
        // Measure only tags from a path port, with a path id the registers
        // cover; the tag is removed in any case.
        if (meta.from_path != 0 && path_id != 0 && path_id <= MAX_PATHS) {
            bit<32> index = (bit<32>)path_id;
            path_seq_t seq = hdr.path_tag.seq;
            timestamp_t rx_ts = std_meta.ingress_global_timestamp;

            bit<32> packets;
            bit<32> bytes;
            path_seq_t expected;
            bit<32> n_lost;
            bit<32> n_reordered;
            rx_packets.read(packets, index);
            rx_bytes.read(bytes, index);
            expected_seq.read(expected, index);
            lost.read(n_lost, index);
            reordered.read(n_reordered, index);

            bit<32> d = seq - expected;
            if (packets == 0 || d == 0) {
                expected = seq + 1;
            } else if (d[31:31] == 0) {
                n_lost = n_lost + d;
                expected = seq + 1;
            } else if (expected - seq > SEQ_RESTART_WINDOW) {
                expected = seq + 1;
            } else {
                n_reordered = n_reordered + 1;
                if (n_lost != 0) {
                    n_lost = n_lost - 1;
                }
            }
            packets = packets + 1;
            bytes = bytes + std_meta.packet_length;

            bit<32> n_ooo;
            flow_ooo.read(n_ooo, index);
            if (hdr.ipv4.isValid()) {
                bit<32> slot;
                bit<16> sig;
                hash(slot, HashAlgorithm.crc16, 32w0,
                     { hdr.ipv4.src_addr, hdr.ipv4.dst_addr, hdr.ipv4.protocol,
                       meta.l4_src_port, meta.l4_dst_port },
                     (bit<32>)FLOW_ORDER_SLOTS);
                hash(sig, HashAlgorithm.crc32, 16w0,
                     { hdr.ipv4.src_addr, hdr.ipv4.dst_addr, hdr.ipv4.protocol,
                       meta.l4_src_port, meta.l4_dst_port },
                     32w65536);
                bit<16> slot_sig;
                timestamp_t newest;
                order_sig.read(slot_sig, slot);
                order_ts.read(newest, slot);
                if (slot_sig != sig || hdr.path_tag.tx_ts >= newest ||
                        newest - hdr.path_tag.tx_ts > ORDER_RESTART_US) {
                    order_sig.write(slot, sig);
                    order_ts.write(slot, hdr.path_tag.tx_ts);
                } else {
                    n_ooo = n_ooo + 1;
                    flow_ooo.write(index, n_ooo);
                }
            }

            rx_packets.write(index, packets);
            rx_bytes.write(index, bytes);
            expected_seq.write(index, expected);
            lost.write(index, n_lost);
            reordered.write(index, n_reordered);

            report_config.apply();
            if (reporting) {
                timestamp_t last;
                last_report_ts.read(last, index);
                if (rx_ts - last >= report_interval) {
                    last_report_ts.write(index, rx_ts);
                    digest<path_report_t>(DIGEST_PATH_REPORT, {
                        path_id, seq, hdr.path_tag.tx_ts, rx_ts,
                        packets, bytes, n_lost, n_reordered, n_ooo });
                }
            }
        }
        // Pop: restore the original ether type.
        hdr.ethernet.ether_type = hdr.path_tag.next_type;
        hdr.path_tag.setInvalid();
    }
}

#endif
