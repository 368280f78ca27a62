// The ingress pipeline: validation, the tag checks and transit forwarding
// (edge_config.p4), path arrival accounting, path measurement and tag removal
// (egress edge), routing and, for traffic to another edge, path selection and
// tag push (ingress edge).
//
// Validation comes first (the rule): a packet that RFC 1812 5.2.2 says a
// router must discard (IPv4 version, IHL, total length, header checksum),
// a truncated one, and one that is neither IPv4 nor a path tag are dropped
// and counted (validate.p4) before any stage runs, so they change no
// scheduling state: no counter (path_rx, path_tx, pin hits), no register
// (liveness, sequence numbers and loss, per-flow order, flowlets, round
// robin, virtual queues, RTT slots) and no digest (path, RTT, MPTCP). Every
// stage below may assume a valid IPv4 header (or a probe without one);
// a stage added later must stay below the validation. The drops after it
// are counted where they happen: a tag from a host port (before anything is
// written), TTL expiry and no route (routing.p4, which ends the ingress:
// before classification, MPTCP, path selection, tag push and RTT), a packet
// from a path bound for the paths, no path (path_select.p4). A TTL-expired
// packet arriving tagged from a path is a valid packet that crossed the
// path: the egress edge measures it (path_rx, liveness, path_monitor) before
// routing drops it, else its sequence number would count as lost.
//
// State: each stage keeps its own registers and counters. The few that two
// stages share are declared here, in the control over both, and lent to
// each as a constructor argument, so that only those two can touch them
// (not every stage, as at the top level): the owner writes, the other reads.
//   drop_reason       every stage that drops (and this control) counts here
//   path_last_seen,   written by liveness.p4, read by path_select.p4 (the
//   path_dead_after   chosen path's, and every path's on failover); per
//                     (peer edge, path)
//   tx_seq            written by path_tag.p4, read by probe_gate.p4; per
//                     (destination edge, path)
//   cg_*              congestion metrics measured here, per (source edge,
//                     path): written by
//                     path_monitor.p4 (CongestionMeter), fed back by
//                     path_tag.p4 (FeedbackPush)
//   ca_*              congestion metrics fed back by the other edges, per
//                     (destination edge, path): written
//                     by path_monitor.p4 (FeedbackStore), read by
//                     path_select.p4 (CaSelect)
//   fb_span           per source edge, the highest path id measured from
//                     it: written by path_monitor.p4, read by path_tag.p4
//                     (FeedbackPush)
// (congestion.p4 describes the metrics, liveness.p4 and path_tag.p4 theirs.)
//
// Ports: a path tag arriving on a host port (not in path_ingress) is
// dropped: hosts never send tags. A tagged arrival from a fabric port is
// keyed by its tag's (src_edge, path_id), not by the port (path_ingress.p4).
// An untagged IPv4 packet arriving on a fabric port is forwarded as before
// but neither measured nor counted, so an edge without tags on the other
// side (mixed deployments) keeps working.
#ifndef __INGRESS__
#define __INGRESS__

#include "headers.p4"
#include "validate.p4"
#include "edge_config.p4"
#include "routing.p4"
#include "path_ingress.p4"
#include "path_select.p4"
#include "path_monitor.p4"
#include "path_tag.p4"
#include "probe_gate.p4"
#include "rtt_monitor.p4"
#include "liveness.p4"
#include "classify.p4"
#include "mptcp.p4"
#include "port_counters.p4"

control MpIngress(inout headers_t hdr,
                  inout local_metadata_t meta,
                  inout standard_metadata_t std_meta) {

    // Packets (and bytes) dropped, by drop reason (DROP_<NAME>, defines.p4).
    // The annotation lists the reasons' names and codes for the P4Info, from
    // the same list as the constants.
    @drop_reasons[DROP_REASONS(DROP_REASON_KV, P4_COMMA)]
    counter<drop_reason_t>(DROP_REASON_COUNT + 1, CounterType.packets_and_bytes) drop_reason;
    // Liveness of each path of each peer edge, by EDGE_PATH (liveness.p4).
    register<timestamp_t, edge_path_t>(EDGE_PATH_SPACE) path_last_seen;
    register<timestamp_t, edge_path_t>(EDGE_PATH_SPACE) path_dead_after;
    // Next sequence number of each path to each destination edge, by
    // EDGE_PATH(dst_edge, path_id) (path_tag.p4, sizes.p4).
    register<path_seq_t, edge_path_t>(EDGE_PATH_REGISTER_SIZE) tx_seq;
#ifndef NO_CONGESTION
    // Congestion metrics per (peer edge, path), by EDGE_PATH (congestion.p4,
    // "State"; sizes.p4).
    register<bit<32>, edge_path_t>(EDGE_PATH_REGISTER_SIZE) cg_qdelay;
    register<bit<32>, edge_path_t>(EDGE_PATH_REGISTER_SIZE) cg_loss;
    register<bit<32>, edge_path_t>(EDGE_PATH_REGISTER_SIZE) cg_rate;
    register<timestamp_t, edge_path_t>(EDGE_PATH_REGISTER_SIZE) cg_updated;
    register<bit<32>, edge_path_t>(EDGE_PATH_REGISTER_SIZE) ca_qdelay;
    register<bit<16>, edge_path_t>(EDGE_PATH_REGISTER_SIZE) ca_loss;
    register<bit<16>, edge_path_t>(EDGE_PATH_REGISTER_SIZE) ca_rate;
    register<timestamp_t, edge_path_t>(EDGE_PATH_REGISTER_SIZE) ca_ts;
    // Per source edge: the highest path id measured from it, over which the
    // feedback to it rotates (congestion.p4, "State").
    register<path_id_t, edge_id_t>(MAX_EDGES + 1) fb_span;
#endif

    EdgeConfig(drop_reason) edge_config;
    PathIngress() path_ingress;
    Routing(drop_reason) routing;
#ifdef NO_CONGESTION
    PathSelect(path_last_seen, path_dead_after, drop_reason) path_select;
    PathMonitor() path_monitor;
    PathTagPush(tx_seq) path_tag;
#else
    PathSelect(path_last_seen, path_dead_after, drop_reason,
               ca_qdelay, ca_loss, ca_rate, ca_ts) path_select;
    PathMonitor(cg_qdelay, cg_loss, cg_rate, cg_updated,
                ca_qdelay, ca_loss, ca_rate, ca_ts, fb_span) path_monitor;
    PathTagPush(tx_seq, cg_qdelay, cg_loss, cg_rate, cg_updated, fb_span) path_tag;
#endif
    ProbeGate(tx_seq) probe_gate;
#ifndef NO_RTT_MONITOR
    RttMonitor() rtt_monitor;
#endif
    Liveness(path_last_seen, path_dead_after) liveness;
    Classify() classify;
#ifndef NO_MPTCP
    Mptcp() mptcp;
#endif
    Validate(drop_reason) validate;

    apply {
        // Invalid packets (see the rule above) and non-IPv4 traffic:
        // counted by reason and dropped, never forwarded. One condition for
        // every packet; the reason is sorted out only for the dropped ones.
        // (`exit` ends the ingress; p4c turns a `return` into a flag that
        // every packet sets and tests.) Probes (PacketOuts to send, tagged
        // arrivals) carry no IPv4.
        if (std_meta.parser_error != error.NoError ||
                std_meta.checksum_error == 1 ||
                (hdr.ipv4.isValid() && IPV4_TOTAL_LEN_BEYOND_FRAME) ||
                (!hdr.ipv4.isValid() && !hdr.packet_out.isValid() &&
                 !hdr.path_tag.isValid())) {
            validate.apply(hdr, std_meta);
            exit;
        }
        // local_metadata_t starts zeroed for every packet (BMv2 resets the
        // user metadata): to_paths, pinned, on_path false; class 0; path 0.
        // The edge id; malformed tags dropped, tags of other edges forwarded
        // (transit): both end the ingress here (edge_config.p4).
        edge_config.apply(hdr, meta, std_meta);
        path_ingress.apply(hdr, meta, std_meta);
        if (hdr.path_tag.isValid() && !meta.from_fabric) {
            // A tag from a host port: hosts never send tags.
            drop_reason.count(DROP_TAG_FROM_HOST);
            mark_to_drop(std_meta);
            exit;
        }
        liveness.apply(hdr, meta, std_meta);
        if (hdr.packet_out.isValid()) {
            // A probe from the switch agent: onto its path like a pinned
            // packet, tagged with PATH_FLAG_PROBE below, unless the path
            // carried this switch's traffic since the previous probe
            // (probe_gate.p4: dropped and counted there).
            probe_gate.apply(hdr, meta, std_meta);
        } else {
            if (hdr.path_tag.isValid()) {
                bool probe = (hdr.path_tag.flags & PATH_FLAG_PROBE) != 0;
                // A SYN's copy (path_select.p4, syn_copy): path_monitor pops its
                // tag without measuring it.
                meta.tag_copy = (hdr.path_tag.flags & PATH_FLAG_COPY) != 0;
                path_monitor.apply(hdr, meta, std_meta);
                if (probe) {
                    // Probes end here: liveness and path_monitor updated.
                    mark_to_drop(std_meta);
                    exit;
                }
            }
            routing.apply(hdr, meta, std_meta);
        }
        if (meta.to_paths) {
            if (meta.from_fabric) {
                // Never bounce a packet from one path onto another.
                drop_reason.count(DROP_PATH_BOUNCE);
                mark_to_drop(std_meta);
            } else {
                if (!meta.pinned) {
                    classify.apply(hdr, meta, std_meta);
#ifndef NO_MPTCP
                    if (hdr.tcp.isValid()) {
                        // MPTCP handshake reports and subflow pins.
                        mptcp.apply(hdr, meta, std_meta);
                    }
#endif
                }
                path_select.apply(hdr, meta, std_meta);
                if (meta.on_path) {
                    path_tag.apply(hdr, meta, std_meta);
                    if (hdr.packet_out.isValid()) {
                        hdr.path_tag.flags = PATH_FLAG_PROBE;
                    }
                }
            }
        }
        // TCP data placed onto a path, or coming back from one to a host:
        // RTT, retransmissions, bytes in flight (rtt_monitor.p4).
#ifndef NO_RTT_MONITOR
        if (hdr.tcp.isValid() && !meta.tag_copy &&
                (meta.on_path || (meta.from_fabric && !meta.to_paths))) {
            meta.rtt_path_id = 0;
            rtt_monitor.apply(hdr, meta, std_meta);
        }
#endif
    }
}

// The egress pipeline counts what leaves each port (port_counters.p4).
control MpEgress(inout headers_t hdr,
                 inout local_metadata_t meta,
                 inout standard_metadata_t std_meta) {
    PortCounters() port_counters;

    apply {
        port_counters.apply(std_meta);
        // The copy of a SYN (path_select.p4, syn_copy): the original, tagged
        // for its path, is cloned after this pipeline (E2E) to the clone
        // session of (destination edge, copy path), whose one replica leaves
        // on that path's port (the controller keeps the sessions in step with
        // path_nexthop); the clone passes here again and takes the copy
        // path's id and the COPY flag. Only SYNs pay for more than the first
        // condition.
        if (meta.copy_path != 0) {
            if (std_meta.instance_type == PKT_INSTANCE_TYPE_NORMAL) {
                clone_preserving_field_list(CloneType.E2E,
                    (bit<32>)EDGE_PATH(meta.dst_edge, meta.copy_path), COPY_FIELD_LIST);
            } else if (std_meta.instance_type == PKT_INSTANCE_TYPE_EGRESS_CLONE) {
                hdr.path_tag.path_id = meta.copy_path;
                hdr.path_tag.flags = hdr.path_tag.flags | PATH_FLAG_COPY;
            }
        }
    }
}

#endif
