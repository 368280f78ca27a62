// Passive TCP measurement at the ingress edge: RTT per (destination edge,
// path) (data segment -> the ACK that covers it), retransmissions seen and
// bytes in flight per (destination edge, path); exported as rate-bounded
// rtt_report_t digests that name the destination edge. A flow's path is the
// pair (destination edge, path id) its data was placed on, kept as its
// EDGE_PATH cell (sizes.p4): the ACKs that come back count for it whatever
// tag or port they arrive with. (Cells are read from registers and from
// meta.path_cell, never computed here: p4c would copy a computed index into
// a temporary metadata field per use, each a field write per packet.)
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
// Bytes in flight, per (destination edge, path), approximate: sent = bytes by which data
// segments advanced their flow's highest sequence end (a flow's first
// segment counts whole), acked = bytes by which ACKs advanced their flow's
// last ACK; inflight = sent - acked, 0 if negative. ACKs count for the
// flow's current path, so when a data segment moves its flow to another
// path (a new flowlet), the flow's unacknowledged bytes (highest sequence
// end - last ACK) move too: acked on the old path, sent on the new one. A
// flow that loses its slot to a colliding flow has its unacknowledged
// bytes counted as acked on its path (its ACKs no longer match). Exact for
// flows that keep their path and slot; on a move the bytes still queued on
// the old path count on the new one from the move on. ACKs that take
// another return switch are not seen. Per-path counters are 32-bit, wrap.
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

// One RTT sample of the ingress edge, sent at most once per (peer edge,
// path) per that cell's rtt_config interval. retrans and inflight_bytes
// are the (peer edge, path)'s state at the time of the report (retrans
// cumulative since the pipeline push, wraps).
struct rtt_report_t {
    path_id_t path_id;         // path the sampled data segment was placed on
    edge_id_t peer_edge;       // the edge it was placed towards (its tag's dst_edge)
    bit<32>   rtt_us;          // data segment -> ACK covering it, this switch's clock
    bit<32>   retrans;         // retransmitted data segments seen on the path
    bit<32>   inflight_bytes;  // sent - acked on the path (approximation, see above)
}

// RttMonitor's locals (headers.p4, "Locals in headers").
header rtt_monitor_vars_t {
    bit<32>      slot;
    bit<32>      sig;
    bit<32>      stored_sig;
    bit<32>      payload;
    bit<32>      seq_end;
    bit<32>      advance;
    bit<32>      highest;
    bit<32>      d;
    bit<32>      n;
    bit<32>      sent;
    bit<32>      ack;
    bit<32>      last_ack;
    bit<32>      acked;
    bit<32>      expected;
    bit<32>      e;
    bit<32>      n_retrans;
    bit<32>      inflight;
    bit<32>      outstanding;  // the slot's flow: highest seq end - last ACK
    bit<32>      carry;        // bytes moved onto this path with the flow
    timestamp_t  now;
    timestamp_t  ts;
    timestamp_t  last;
    timestamp_t  rtt_interval;
    bit<16>      sig16;
    bit<16>      hdr_len;
    edge_path_t  fpath;        // the slot's flow's cell (EDGE_PATH)
    edge_path_t  scell;        // the pending sample's cell
    edge_id_t    sedge;        // the pending sample's destination edge (rtt_config's key)
    bool         rtt_reporting;  // rtt_config: this cell's RTT is reported
    bool         retrans;        // the data segment is a retransmission
    bit<6>       pad;            // BMv2 wants headers of whole bytes
}

control RttMonitor(inout headers_t hdr,
                   inout local_metadata_t meta,
                   inout standard_metadata_t std_meta) {

    rtt_monitor_vars_t v;
    flow_key_t flow;

    // Per flow slot.
    register<bit<32>, bit<32>>(RTT_SLOTS) flow_sig;        // 0x10000 | crc16 of the tuple; 0: free
    register<bit<32>, bit<32>>(RTT_SLOTS) flow_seq_end;    // highest seq + payload sent
    register<bit<32>, bit<32>>(RTT_SLOTS) flow_ack;        // last ACK number seen
    // A flow's path is its (destination edge, path) cell: an ACK counts for
    // the pair its data was placed on.
    register<edge_path_t, bit<32>>(RTT_SLOTS) flow_path;     // cell of the flow's latest data
    register<bit<32>, bit<32>>(RTT_SLOTS) sample_ack;      // expected ACK of the pending sample
    register<timestamp_t, bit<32>>(RTT_SLOTS) sample_ts;   // its time stamp; 0: no sample
    register<path_id_t, bit<32>>(RTT_SLOTS) sample_path;   // its path id
    register<edge_path_t, bit<32>>(RTT_SLOTS) sample_cell;   // its cell
    register<edge_id_t, bit<32>>(RTT_SLOTS) sample_edge;   // its destination edge
    // Per (destination edge, path), by EDGE_PATH (sizes.p4).
    register<bit<32>, edge_path_t>(EDGE_PATH_REGISTER_SIZE) path_retrans;
    register<bit<32>, edge_path_t>(EDGE_PATH_REGISTER_SIZE) path_sent;
    register<bit<32>, edge_path_t>(EDGE_PATH_REGISTER_SIZE) path_acked;
    register<timestamp_t, edge_path_t>(EDGE_PATH_REGISTER_SIZE) rtt_last_report_ts;

    // Report RTT samples of this (destination edge, path) at most once per
    // interval_us µs.
    action set_rtt_interval(timestamp_t interval_us) {
        v.rtt_interval = interval_us;
        v.rtt_reporting = true;
    }

    // No reports for this (destination edge, path).
    action no_reports() {
        v.rtt_interval = 0;
        v.rtt_reporting = false;
    }

    // Purpose: the RTT report interval of each path towards each destination
    // edge (the pending sample's), settable at run time: the controller sets
    // each pair of edges' paths apart (docs/fabric-dataplane.md, "Report intervals").
    // Miss: no_reports, the cell's samples are taken but never reported.
    table rtt_config {
        key = {
            v.sedge: exact @name("peer_edge");
            meta.rtt_path_id: exact @name("path_id");
        }
        actions = {
            set_rtt_interval;
            @defaultonly no_reports;
        }
        const default_action = no_reports();
        size = RTT_CONFIG_TABLE_SIZE;
    }

    apply {
        v.setValid();
        v.now = std_meta.ingress_global_timestamp;
        // The flow's 5-tuple in the data's direction.
        flow.setValid();
        flow.protocol = hdr.ipv4.protocol;
        if (meta.on_path) {
            flow.src_addr = hdr.ipv4.src_addr;
            flow.dst_addr = hdr.ipv4.dst_addr;
            flow.src_port = hdr.tcp.src_port;
            flow.dst_port = hdr.tcp.dst_port;
        } else {
            flow.src_addr = hdr.ipv4.dst_addr;
            flow.dst_addr = hdr.ipv4.src_addr;
            flow.src_port = hdr.tcp.dst_port;
            flow.dst_port = hdr.tcp.src_port;
        }
        hash(v.slot, HashAlgorithm.crc32, 32w0, flow, (bit<32>)RTT_SLOTS);
        hash(v.sig16, HashAlgorithm.crc16, 16w0, flow, 32w65536);
        v.sig = 32w0x10000 | (bit<32>)v.sig16;
        flow_sig.read(v.stored_sig, v.slot);

        if (meta.on_path) {
            // Data placed onto path meta.path_id towards meta.dst_edge,
            // cell meta.path_cell (path_select.p4 admitted both).
            v.hdr_len = (((bit<16>)hdr.ipv4.ihl) << 2) +
                        (((bit<16>)hdr.tcp.data_offset) << 2);
            if (hdr.tcp.data_offset >= 5 && hdr.ipv4.total_len > v.hdr_len) {
                v.payload = (bit<32>)(hdr.ipv4.total_len - v.hdr_len);
                v.seq_end = hdr.tcp.seq_no + v.payload;
                v.advance = v.payload;
                v.carry = 0;
                v.retrans = false;
                flow_seq_end.read(v.highest, v.slot);
                if (v.stored_sig != 0) {
                    // The slot's flow so far: its path and unacknowledged bytes.
                    flow_path.read(v.fpath, v.slot);
                    flow_ack.read(v.last_ack, v.slot);
                    v.outstanding = v.highest - v.last_ack;
                    if (v.outstanding[31:31] == 1) {
                        v.outstanding = 0;
                    }
                    if (v.stored_sig != v.sig || v.fpath != meta.path_cell) {
                        // Moved or taken over: the old path is done with them.
                        path_acked.read(v.acked, v.fpath);
                        path_acked.write(v.fpath, v.acked + v.outstanding);
                        if (v.stored_sig == v.sig) {
                            v.carry = v.outstanding;
                        }
                    }
                }
                if (v.stored_sig == v.sig) {
                    v.d = v.seq_end - v.highest;
                    if (v.d == 0 || v.d[31:31] == 1) {
                        v.retrans = true;
                        v.advance = 0;
                    } else {
                        v.advance = v.d;
                        flow_seq_end.write(v.slot, v.seq_end);
                    }
                    sample_ts.read(v.ts, v.slot);
                } else {
                    // A new flow (or one taking the slot over).
                    flow_sig.write(v.slot, v.sig);
                    flow_seq_end.write(v.slot, v.seq_end);
                    flow_ack.write(v.slot, hdr.tcp.seq_no);
                    v.ts = 0;
                }
                flow_path.write(v.slot, meta.path_cell);
                path_sent.read(v.sent, meta.path_cell);
                path_sent.write(meta.path_cell, v.sent + v.advance + v.carry);
                if (v.retrans) {
                    path_retrans.read(v.n, meta.path_cell);
                    path_retrans.write(meta.path_cell, v.n + 1);
                } else if (v.ts == 0 || v.now - v.ts > RTT_SAMPLE_TIMEOUT_US) {
                    sample_ack.write(v.slot, v.seq_end);
                    sample_ts.write(v.slot, v.now);
                    sample_path.write(v.slot, meta.path_id);
                    sample_cell.write(v.slot, meta.path_cell);
                    sample_edge.write(v.slot, meta.dst_edge);
                }
            }
        } else if ((hdr.tcp.flags & TCP_FLAG_ACK) != 0 && v.stored_sig == v.sig) {
            // An ACK from a path for data this switch placed onto a path.
            v.ack = hdr.tcp.ack_no;
            flow_ack.read(v.last_ack, v.slot);
            v.d = v.ack - v.last_ack;
            if (v.d != 0 && v.d[31:31] == 0) {
                flow_path.read(v.fpath, v.slot);
                path_acked.read(v.acked, v.fpath);
                path_acked.write(v.fpath, v.acked + v.d);
                flow_ack.write(v.slot, v.ack);
            }
            sample_ts.read(v.ts, v.slot);
            sample_ack.read(v.expected, v.slot);
            v.e = v.ack - v.expected;
            if (v.ts != 0 && v.e[31:31] == 0) {
                sample_ts.write(v.slot, 0);
                sample_path.read(meta.rtt_path_id, v.slot);
                sample_edge.read(v.sedge, v.slot);
                rtt_config.apply();
                if (v.rtt_reporting) {
                    sample_cell.read(v.scell, v.slot);
                    rtt_last_report_ts.read(v.last, v.scell);
                    if (v.now - v.last >= v.rtt_interval) {
                        rtt_last_report_ts.write(v.scell, v.now);
                        path_retrans.read(v.n_retrans, v.scell);
                        path_sent.read(v.sent, v.scell);
                        path_acked.read(v.acked, v.scell);
                        v.inflight = v.sent - v.acked;
                        if (v.inflight[31:31] == 1) {
                            v.inflight = 0;
                        }
                        digest<rtt_report_t>(DIGEST_RTT_REPORT, {
                            meta.rtt_path_id, v.sedge, (bit<32>)(v.now - v.ts), v.n_retrans,
                            v.inflight });
                    }
                }
            }
        }
    }
}

#endif
