// Passive TCP measurement at the ingress edge: RTT per path (data segment ->
// the ACK that covers it), retransmissions seen per path, bytes in flight per
// path; exported as rate-bounded rtt_report_t digests.
//
// Flow state lives in register slots indexed by a CRC32 hash of the flow's
// 5-tuple in the DATA direction (src, dst, proto, sport, dport). An ACK
// coming back from a path hashes its tuple reversed, so it lands in the slot
// of the data it acknowledges. A CRC16 signature of the same tuple (bit 16
// set = slot in use) tells the owner from colliding flows; a new flow takes
// a slot over (newest wins), and ACKs whose signature does not match are
// ignored.
//
// Per slot:
//  - highest sequence end sent (seq + payload): a data segment ending at or
//    below it (signed 32-bit difference, wrap-aware) is a retransmission;
//  - last ACK number seen: an ACK advancing it adds the advance to the
//    acked bytes of the flow's current path;
//  - one pending RTT sample (expected ACK = seq end, time stamp, path),
//    taken from a data segment that is not a retransmission (Karn) when the
//    slot holds no sample or its sample is older than RTT_SAMPLE_TIMEOUT_US;
//    an ACK >= the expected ACK completes it and frees it.
//
// Bytes in flight, per path, approximate: sent = bytes by which data
// segments advanced their flow's highest sequence end (a flow's first
// segment counts whole), acked = bytes by which ACKs advanced their flow's
// last ACK; inflight = sent - acked, 0 if negative. Exact for flows that
// keep their path and slot. Limits: a flow taken over by a colliding flow
// leaves its unacknowledged bytes counted forever; a flow that moves to
// another path credits ACKs of data sent on the old path to the new one
// (the old path keeps them as in flight); ACKs that take another return
// switch are not seen. All per-path counters are 32-bit and wrap.
//
// Only TCP with a sane header counts: data offset >= 5 and a payload (IPv4
// total length minus IHL*4 minus data offset*4) above 0 for data; the ACK
// flag for ACKs. Truncated packets never get here (the parser drops them).
#ifndef __RTT_MONITOR__
#define __RTT_MONITOR__

#include "headers.p4"
#include "sizes.p4"

// Receiver id of the RTT digest (rtt_report_t).
const bit<32> DIGEST_RTT_REPORT = 2;
// A pending sample older than this is replaced by a new one (lost segment
// or ACK, or a flow that ended).
const timestamp_t RTT_SAMPLE_TIMEOUT_US = 1000000;

// One RTT sample of the ingress edge, sent at most once per the path's
// rtt_config interval. retrans and inflight_bytes are the path's state at
// the time of the report (retrans cumulative since the pipeline push, wraps).
struct rtt_report_t {
    path_id_t path_id;         // path the sampled data segment was placed on
    bit<32>   rtt_us;          // data segment -> ACK covering it, this switch's clock
    bit<32>   retrans;         // retransmitted data segments seen on the path
    bit<32>   inflight_bytes;  // sent - acked on the path (approximation, see above)
}

control RttMonitor(inout headers_t hdr,
                   inout local_metadata_t meta,
                   inout standard_metadata_t std_meta) {

    // Per flow slot.
    register<bit<32>>(RTT_SLOTS) flow_sig;        // 0x10000 | crc16 of the tuple; 0: free
    register<bit<32>>(RTT_SLOTS) flow_seq_end;    // highest seq + payload sent
    register<bit<32>>(RTT_SLOTS) flow_ack;        // last ACK number seen
    register<path_id_t>(RTT_SLOTS) flow_path;     // path of the flow's latest data
    register<bit<32>>(RTT_SLOTS) sample_ack;      // expected ACK of the pending sample
    register<timestamp_t>(RTT_SLOTS) sample_ts;   // its time stamp; 0: no sample
    register<path_id_t>(RTT_SLOTS) sample_path;   // its path
    // Per path, by path id.
    register<bit<32>>(PATH_REGISTER_SIZE) path_retrans;
    register<bit<32>>(PATH_REGISTER_SIZE) path_sent;
    register<bit<32>>(PATH_REGISTER_SIZE) path_acked;
    register<timestamp_t>(PATH_REGISTER_SIZE) rtt_last_report_ts;

    timestamp_t rtt_interval = 0;
    bool rtt_reporting = false;

    // Report RTT samples of this path at most once per interval_us µs.
    action set_rtt_interval(timestamp_t interval_us) {
        rtt_interval = interval_us;
        rtt_reporting = true;
    }

    // Purpose: the RTT report interval of each path (by path id).
    // Miss: NoAction, the path's samples are taken but never reported.
    table rtt_config {
        key = {
            meta.rtt_path_id: exact;
        }
        actions = {
            set_rtt_interval;
            @defaultonly NoAction;
        }
        const default_action = NoAction();
        size = RTT_CONFIG_TABLE_SIZE;
    }

    apply {
        timestamp_t now = std_meta.ingress_global_timestamp;
        bit<32> slot;
        bit<16> sig16;
        if (meta.on_path) {
            hash(slot, HashAlgorithm.crc32, 32w0,
                 { hdr.ipv4.src_addr, hdr.ipv4.dst_addr, hdr.ipv4.protocol,
                   hdr.tcp.src_port, hdr.tcp.dst_port }, (bit<32>)RTT_SLOTS);
            hash(sig16, HashAlgorithm.crc16, 16w0,
                 { hdr.ipv4.src_addr, hdr.ipv4.dst_addr, hdr.ipv4.protocol,
                   hdr.tcp.src_port, hdr.tcp.dst_port }, 32w65536);
        } else {
            hash(slot, HashAlgorithm.crc32, 32w0,
                 { hdr.ipv4.dst_addr, hdr.ipv4.src_addr, hdr.ipv4.protocol,
                   hdr.tcp.dst_port, hdr.tcp.src_port }, (bit<32>)RTT_SLOTS);
            hash(sig16, HashAlgorithm.crc16, 16w0,
                 { hdr.ipv4.dst_addr, hdr.ipv4.src_addr, hdr.ipv4.protocol,
                   hdr.tcp.dst_port, hdr.tcp.src_port }, 32w65536);
        }
        bit<32> sig = 32w0x10000 | (bit<32>)sig16;
        bit<32> stored_sig;
        flow_sig.read(stored_sig, slot);

        if (meta.on_path) {
            // Data placed onto path meta.path_id.
            bit<16> hdr_len = (((bit<16>)hdr.ipv4.ihl) << 2) +
                              (((bit<16>)hdr.tcp.data_offset) << 2);
            if (hdr.tcp.data_offset >= 5 && hdr.ipv4.total_len > hdr_len) {
                bit<32> payload = (bit<32>)(hdr.ipv4.total_len - hdr_len);
                bit<32> seq_end = hdr.tcp.seq_no + payload;
                bit<32> path_index = (bit<32>)meta.path_id;
                bit<32> advance = payload;
                bool retrans = false;
                timestamp_t ts;
                if (stored_sig == sig) {
                    bit<32> highest;
                    flow_seq_end.read(highest, slot);
                    bit<32> d = seq_end - highest;
                    if (d == 0 || d[31:31] == 1) {
                        retrans = true;
                        advance = 0;
                    } else {
                        advance = d;
                        flow_seq_end.write(slot, seq_end);
                    }
                    sample_ts.read(ts, slot);
                } else {
                    // A new flow (or one taking the slot over).
                    flow_sig.write(slot, sig);
                    flow_seq_end.write(slot, seq_end);
                    flow_ack.write(slot, hdr.tcp.seq_no);
                    ts = 0;
                }
                flow_path.write(slot, meta.path_id);
                if (retrans) {
                    bit<32> n;
                    path_retrans.read(n, path_index);
                    path_retrans.write(path_index, n + 1);
                } else {
                    bit<32> sent;
                    path_sent.read(sent, path_index);
                    path_sent.write(path_index, sent + advance);
                    if (ts == 0 || now - ts > RTT_SAMPLE_TIMEOUT_US) {
                        sample_ack.write(slot, seq_end);
                        sample_ts.write(slot, now);
                        sample_path.write(slot, meta.path_id);
                    }
                }
            }
        } else if ((hdr.tcp.flags & TCP_FLAG_ACK) != 0 && stored_sig == sig) {
            // An ACK from a path for data this switch placed onto a path.
            bit<32> ack = hdr.tcp.ack_no;
            bit<32> last_ack;
            flow_ack.read(last_ack, slot);
            bit<32> d = ack - last_ack;
            if (d != 0 && d[31:31] == 0) {
                path_id_t fpath;
                flow_path.read(fpath, slot);
                bit<32> acked;
                path_acked.read(acked, (bit<32>)fpath);
                path_acked.write((bit<32>)fpath, acked + d);
                flow_ack.write(slot, ack);
            }
            timestamp_t ts;
            sample_ts.read(ts, slot);
            bit<32> expected;
            sample_ack.read(expected, slot);
            bit<32> e = ack - expected;
            if (ts != 0 && e[31:31] == 0) {
                sample_ts.write(slot, 0);
                sample_path.read(meta.rtt_path_id, slot);
                rtt_config.apply();
                if (rtt_reporting) {
                    bit<32> index = (bit<32>)meta.rtt_path_id;
                    timestamp_t last;
                    rtt_last_report_ts.read(last, index);
                    if (now - last >= rtt_interval) {
                        rtt_last_report_ts.write(index, now);
                        bit<32> n_retrans;
                        bit<32> sent;
                        bit<32> acked;
                        path_retrans.read(n_retrans, index);
                        path_sent.read(sent, index);
                        path_acked.read(acked, index);
                        bit<32> inflight = sent - acked;
                        if (inflight[31:31] == 1) {
                            inflight = 0;
                        }
                        digest<rtt_report_t>(DIGEST_RTT_REPORT, {
                            meta.rtt_path_id, (bit<32>)(now - ts), n_retrans, inflight });
                    }
                }
            }
        }
    }
}

#endif
