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
#ifndef NO_CONGESTION
#include "congestion.p4"
#endif

// A packet more than this many sequence numbers behind its path's expected
// one, or more than this many µs of the ingress clock behind its flow's
// newest, comes from a restarted ingress edge, not from reordering.
const bit<32> SEQ_RESTART_WINDOW = 65536;
const timestamp_t ORDER_RESTART_US = 2000000;

// PathMonitor's locals (headers.p4, "Locals in headers").
header path_monitor_vars_t {
    bit<32>      packets;
    bit<32>      bytes;
    bit<32>      n_lost;
    bit<32>      n_reordered;
    bit<32>      d;
    bit<32>      n_ooo;
    bit<32>      gap;         // sequence numbers skipped just now (losses)
    bit<32>      slot;
    path_seq_t   seq;
    path_seq_t   expected;
    timestamp_t  rx_ts;
    timestamp_t  newest;
    timestamp_t  last;
    timestamp_t  report_interval;
    bit<16>      sig;
    bit<16>      slot_sig;
    path_id_t    path_id;
    edge_path_t  idx;         // the registers' cell: EDGE_PATH(src_edge, path_id)
    path_id_t    span;        // fb_span of the source edge (congestion.p4)
    bool         reporting;   // report_config: this path is reported
    bit<7>       pad;         // BMv2 wants headers of whole bytes
}

// Built with the congestion stage, PathMonitor is lent the congestion
// metrics it writes (congestion.p4, "State"): its meter's, which path_tag.p4
// feeds back, and the other edge's, which ca_select.p4 reads.
control PathMonitor(inout headers_t hdr,
                    inout local_metadata_t meta,
                    inout standard_metadata_t std_meta)
#ifndef NO_CONGESTION
                   (register<bit<32>, edge_path_t> cg_qdelay,
                    register<bit<32>, edge_path_t> cg_loss,
                    register<bit<32>, edge_path_t> cg_rate,
                    register<timestamp_t, edge_path_t> cg_updated,
                    register<bit<32>, edge_path_t> ca_qdelay,
                    register<bit<16>, edge_path_t> ca_loss,
                    register<bit<16>, edge_path_t> ca_rate,
                    register<timestamp_t, edge_path_t> ca_ts,
                    register<path_id_t, edge_id_t> fb_span)
#endif
{

    path_monitor_vars_t v;
    flow_key_t flow;
#ifndef NO_CONGESTION
    CongestionMeter(cg_qdelay, cg_loss, cg_rate, cg_updated) congestion_meter;
    FeedbackStore(ca_qdelay, ca_loss, ca_rate, ca_ts) feedback;
#endif

    // Per-path state of each source edge, by EDGE_PATH(src_edge, path_id)
    // (the tag's; sizes.p4): the paths of each pair of edges are numbered
    // and measured apart. The controller does not read the registers: their
    // values travel in the digest.
    register<bit<32>, edge_path_t>(EDGE_PATH_REGISTER_SIZE) rx_packets;
    register<bit<32>, edge_path_t>(EDGE_PATH_REGISTER_SIZE) rx_bytes;
    register<path_seq_t, edge_path_t>(EDGE_PATH_REGISTER_SIZE) expected_seq;
    register<bit<32>, edge_path_t>(EDGE_PATH_REGISTER_SIZE) lost;
    register<bit<32>, edge_path_t>(EDGE_PATH_REGISTER_SIZE) reordered;
    register<timestamp_t, edge_path_t>(EDGE_PATH_REGISTER_SIZE) last_report_ts;
#ifndef NO_FLOW_ORDER
    register<bit<32>, edge_path_t>(EDGE_PATH_REGISTER_SIZE) flow_ooo;
    // Per flow slot: signature and newest tx_ts received.
    register<bit<16>, bit<32>>(FLOW_ORDER_SLOTS) order_sig;
    register<timestamp_t, bit<32>>(FLOW_ORDER_SLOTS) order_ts;
#endif

    // Report this (source edge, path) at most once per interval_us µs.
    action set_report_interval(timestamp_t interval_us) {
        v.report_interval = interval_us;
        v.reporting = true;
    }

    // No reports for this (source edge, path).
    action no_reports() {
        v.report_interval = 0;
        v.reporting = false;
    }

    // Purpose: the report interval of each path of each source edge (the
    // tag's src_edge and path_id), settable at run time: the controller
    // sets each pair of edges' paths apart, an idle pair's seldom
    // (docs/fabric-dataplane.md, "Report intervals").
    // Miss: no_reports, the path is measured but never reported.
    table report_config {
        key = {
            hdr.path_tag.src_edge: exact @name("peer_edge");
            hdr.path_tag.path_id: exact @name("path_id");
        }
        actions = {
            set_report_interval;
            @defaultonly no_reports;
        }
        const default_action = no_reports();
        size = REPORT_CONFIG_TABLE_SIZE;
    }

    apply {
        v.setValid();
        v.path_id = hdr.path_tag.path_id;
        // Measure only tags from a fabric port (path_ingress.p4), by the
        // tag's (src_edge, path_id), and not a SYN's copy (ingress.p4,
        // tag_copy: its sequence number and time stamp are the original's
        // path's); the tag is removed in any case.
        if (meta.from_fabric && !meta.tag_copy) {
            // edge_config.p4 admitted src_edge (1..MAX_EDGES) and path_id
            // (1..MAX_PATHS)
            v.idx = EDGE_PATH(hdr.path_tag.src_edge, v.path_id);
            v.seq = hdr.path_tag.seq;
            v.rx_ts = std_meta.ingress_global_timestamp;
            rx_packets.read(v.packets, v.idx);
            rx_bytes.read(v.bytes, v.idx);
            expected_seq.read(v.expected, v.idx);
            lost.read(v.n_lost, v.idx);
            reordered.read(v.n_reordered, v.idx);

            v.d = v.seq - v.expected;
            v.gap = 0;
            if (v.packets == 0 || v.d == 0) {
                v.expected = v.seq + 1;
            } else if (v.d[31:31] == 0) {
                v.gap = v.d;
                v.n_lost = v.n_lost + v.d;
                v.expected = v.seq + 1;
            } else if (v.expected - v.seq > SEQ_RESTART_WINDOW) {
                v.expected = v.seq + 1;
            } else {
                v.n_reordered = v.n_reordered + 1;
                if (v.n_lost != 0) {
                    v.n_lost = v.n_lost - 1;
                }
            }
            v.packets = v.packets + 1;
            v.bytes = v.bytes + std_meta.packet_length;
#ifdef NO_FLOW_ORDER
            v.n_ooo = 0;
#else
            flow_ooo.read(v.n_ooo, v.idx);
            if (hdr.ipv4.isValid()) {
                flow.setValid();
                flow.src_addr = hdr.ipv4.src_addr;
                flow.dst_addr = hdr.ipv4.dst_addr;
                flow.protocol = hdr.ipv4.protocol;
                flow.src_port = meta.l4_src_port;
                flow.dst_port = meta.l4_dst_port;
                hash(v.slot, HashAlgorithm.crc16, 32w0, flow, (bit<32>)FLOW_ORDER_SLOTS);
                hash(v.sig, HashAlgorithm.crc32, 16w0, flow, 32w65536);
                order_sig.read(v.slot_sig, v.slot);
                order_ts.read(v.newest, v.slot);
                if (v.slot_sig != v.sig || hdr.path_tag.tx_ts >= v.newest ||
                        v.newest - hdr.path_tag.tx_ts > ORDER_RESTART_US) {
                    order_sig.write(v.slot, v.sig);
                    order_ts.write(v.slot, hdr.path_tag.tx_ts);
                } else {
                    v.n_ooo = v.n_ooo + 1;
                    flow_ooo.write(v.idx, v.n_ooo);
                }
            }
#endif

            rx_packets.write(v.idx, v.packets);
            rx_bytes.write(v.idx, v.bytes);
            expected_seq.write(v.idx, v.expected);
            lost.write(v.idx, v.n_lost);
            reordered.write(v.idx, v.n_reordered);

#ifndef NO_CONGESTION
            // This path's congestion metrics (as its egress edge), and the
            // feedback the other edge sent about one of its paths.
            congestion_meter.apply(v.idx, hdr.path_tag.tx_ts, v.rx_ts, v.gap, std_meta.packet_length);
            fb_span.read(v.span, hdr.path_tag.src_edge);
            if (v.path_id > v.span) {
                fb_span.write(hdr.path_tag.src_edge, v.path_id);
            }
            if (hdr.path_tag.fb_path != 0 && hdr.path_tag.fb_path <= MAX_PATHS) {
                feedback.apply(hdr, v.rx_ts);
            }
#endif
            report_config.apply();
            if (v.reporting) {
                last_report_ts.read(v.last, v.idx);
                if (v.rx_ts - v.last >= v.report_interval) {
                    last_report_ts.write(v.idx, v.rx_ts);
                    digest<path_report_t>(DIGEST_PATH_REPORT, {
                        v.path_id, hdr.path_tag.src_edge, v.seq, hdr.path_tag.tx_ts, v.rx_ts,
                        v.packets, v.bytes, v.n_lost, v.n_reordered, v.n_ooo });
                }
            }
        }
        // Pop: restore the original ether type.
        hdr.ethernet.ether_type = hdr.path_tag.next_type;
        hdr.path_tag.setInvalid();
    }
}

#endif
