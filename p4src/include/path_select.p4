// Path selection at the ingress edge, per traffic class (classify.p4).
//
// A class's path_weights entry holds its weights, its mode (policy_mode_t)
// and its flowlet gap, so a policy change is a single, atomic P4Runtime
// MODIFY. Flowlets in progress keep their paths while those keep a weight;
// in hash mode a flow moves when its bucket changes owner.
// The weights are cumulative bucket ends in [0, 65536]: path i owns the
// buckets [end_{i-1}, end_i); a path with weight 0 owns none, and only paths
// with a weight are "weighted" (eligible) in the class.
//
// - HASH: the flow's 5-tuple hash is its bucket: one path per flow (ECMP/WCMP).
// - FLOWLET: a flow-hash slot remembers the flow's path and when the flow
//   last sent; a packet more than the gap after the previous one starts a new
//   flowlet, which draws a random bucket (weighted random choice, LetFlow when
//   the weights are equal). A flowlet whose path lost its weight or died also
//   starts anew.
// - RR: each packet takes the next alive weighted path after the class's
//   previous one (per-packet round robin).
// - VQ: like FLOWLET, but a new flowlet takes the alive weighted path with the
//   least MVQS time factor (mvqs.p4).
// - CA: like FLOWLET, but a new flowlet takes an alive weighted path of least
//   live congestion cost, at random among those within epsilon of the least
//   (ca_select.p4, from the metrics of congestion.p4). Built without that
//   stage (NO_CONGESTION), CA draws by the weights as FLOWLET does.
//
// Dead paths (liveness.p4) get nothing new: a packet whose path is not alive
// goes to another alive weighted path (failover.p4); when no weighted path is
// alive, to the least dead one, the weighted path whose last sign of life is
// the latest (docs/fabric.md, "Liveness"). A route may instead pin
// the packet to one path (routing's route_via_path); it then skips all of
// this but takes the same next hop lookup and counting. A pinned MPTCP
// subflow (mptcp.p4) skips the class's choice but not the liveness check and
// failover. A packet placed onto
// a path (meta.on_path) then gets its path tag (path_tag.p4).
// Unrolled for MAX_PATHS == 4, plus paths 5..8 under `#if MAX_PATHS > 4`.
#ifndef __PATH_SELECT__
#define __PATH_SELECT__

#include "headers.p4"
#include "sizes.p4"
#include "failover.p4"
#include "liveness.p4"
#include "mvqs.p4"
#ifndef NO_CONGESTION
#include "ca_select.p4"
#endif

// Modes whose new flowlets draw a random bucket by the weights.
#ifdef NO_CONGESTION
#define DRAWS_BY_WEIGHT(m) ((m) == policy_mode_t.FLOWLET || (m) == policy_mode_t.CA)
#else
#define DRAWS_BY_WEIGHT(m) ((m) == policy_mode_t.FLOWLET)
#endif

// PathSelect's locals (headers.p4, "Locals in headers").
header path_select_vars_t {
    // the class's placement (set_weights): cumulative bucket ends
    bit<17>        bound_1;
    bit<17>        bound_2;
    bit<17>        bound_3;
    bit<17>        bound_4;
#if MAX_PATHS > 4
    bit<17>        bound_5;
    bit<17>        bound_6;
    bit<17>        bound_7;
    bit<17>        bound_8;
#endif
    bit<8>         weighted;    // bit i-1: path i has a weight (eligible)
    policy_mode_t  class_mode;
    timestamp_t    gap;         // flowlet gap (µs)
    timestamp_t    now;
    bit<32>        slot;        // flowlet slot of the flow
    timestamp_t    last;        // when the flow last sent
    timestamp_t    seen;        // a path's last arrival (liveness)
    timestamp_t    after;       // a path's dead-after (liveness)
    edge_path_t    cell;        // the chosen path's liveness cell (EDGE_PATH)
    bit<8>         alive_mask;  // bit i-1: path i is alive
    bit<8>         usable;      // alive and weighted (none alive: the least dead weighted)
    timestamp_t    latest;      // the latest sign of life of a weighted path
    bit<8>         least_dead;  // bit i-1: path i is the weighted path of that sign
    path_id_t      q;           // round robin: candidate
    path_id_t      next;        // round robin: choice
    bit<16>        spread;      // failover: hash or random draw
    bit<8>         syn_copy;    // the class's placement: 1 = copy SYNs onto a second path
    bit<8>         others;      // usable paths other than the chosen one (the copy's)
#if MAX_PATHS <= 4
    bit<4>         pad;         // BMv2 wants headers of whole bytes
#endif
}

// The path whose bucket range holds bucket b (bit<17>): 1 + the number of
// the class's bucket ends at or below b, as one expression. (A chain of
// branches, or an action called from apply, would be a table apply of its
// own per packet on BMv2.) With no weights every end is 0 and the result,
// MAX_PATHS + 1, is dropped.
#if MAX_PATHS > 4
#define BUCKET_PATH(b) (1 + (path_id_t)(bit<1>)(v.bound_1 <= (b)) \
                          + (path_id_t)(bit<1>)(v.bound_2 <= (b)) \
                          + (path_id_t)(bit<1>)(v.bound_3 <= (b)) \
                          + (path_id_t)(bit<1>)(v.bound_4 <= (b)) \
                          + (path_id_t)(bit<1>)(v.bound_5 <= (b)) \
                          + (path_id_t)(bit<1>)(v.bound_6 <= (b)) \
                          + (path_id_t)(bit<1>)(v.bound_7 <= (b)) \
                          + (path_id_t)(bit<1>)(v.bound_8 <= (b)))
#else
#define BUCKET_PATH(b) (1 + (path_id_t)(bit<1>)(v.bound_1 <= (b)) \
                          + (path_id_t)(bit<1>)(v.bound_2 <= (b)) \
                          + (path_id_t)(bit<1>)(v.bound_3 <= (b)) \
                          + (path_id_t)(bit<1>)(v.bound_4 <= (b)))
#endif

// Lent by MpIngress (ingress.p4): the liveness registers (liveness.p4 writes
// them), the drop_reason counter (validate.p4) and, with the congestion
// stage, the metrics the other edge fed back (congestion.p4, "State"), for
// ca_select.p4.
control PathSelect(inout headers_t hdr,
                   inout local_metadata_t meta,
                   inout standard_metadata_t std_meta)
                  (register<timestamp_t, edge_path_t> path_last_seen,
                   register<timestamp_t, edge_path_t> path_dead_after,
                   counter<drop_reason_t> drop_reason
#ifndef NO_CONGESTION
                   , register<bit<32>, edge_path_t> ca_qdelay,
                   register<bit<16>, edge_path_t> ca_loss,
                   register<bit<16>, edge_path_t> ca_rate,
                   register<timestamp_t, edge_path_t> ca_ts
#endif
                   ) {

    // Packets (and bytes) this switch placed onto each path towards each
    // destination edge, by EDGE_PATH(dst_edge, path_id) (sizes.p4); index 0
    // counts packets for which no path could be chosen (no weights, every
    // weight 0) or whose path has no next hop; those are dropped. The other
    // cells of edge 0 and path 0 stay 0.
    counter<edge_path_t>(EDGE_PATH_REGISTER_SIZE, CounterType.packets_and_bytes) path_tx;

    // Flowlet state by flow-hash slot: when the flow last sent (µs) and its path.
    register<timestamp_t, bit<32>>(FLOWLET_SLOTS) flowlet_ts;
    register<path_id_t, bit<32>>(FLOWLET_SLOTS) flowlet_path;
    // Round robin: the path of each class's previous packet, per destination
    // edge (RR_CELL(dst_edge, class_id), sizes.p4).
    register<path_id_t, bit<16>>(RR_CELLS) rr_last;

    PathFailover() failover;
    Mvqs() mvqs;
#ifndef NO_CONGESTION
    CaSelect(ca_qdelay, ca_loss, ca_rate, ca_ts) ca_select;
#endif

    // The control's locals (headers.p4, "Locals in headers").
    path_select_vars_t v;
    flow_key_t flow;

    // The placement of a class: cumulative bucket ends end_i (0..65536,
    // non-decreasing), the paths with a weight (bit i-1: end_i > end_{i-1};
    // the controller derives both from the same weights), the mode, the
    // idle gap (µs) after which a flow's next packet starts a new flowlet
    // (FLOWLET and VQ modes), and syn_copy: 1 = a TCP SYN (or SYN-ACK) also
    // goes, as a copy, onto another usable path (below), so that a drop on
    // one path does not cost the connection a retransmission timeout of 1 s
    // (RFC 6298 §2.1's initial RTO, which Linux keeps for SYNs).
    action set_weights(bit<17> end_1, bit<17> end_2, bit<17> end_3, bit<17> end_4,
#if MAX_PATHS > 4
                       bit<17> end_5, bit<17> end_6, bit<17> end_7, bit<17> end_8,
#endif
                       bit<8> weighted_paths, policy_mode_t mode, bit<32> flowlet_gap_us,
                       bit<8> syn_copy) {
        v.bound_1 = end_1;
        v.bound_2 = end_2;
        v.bound_3 = end_3;
        v.bound_4 = end_4;
#if MAX_PATHS > 4
        v.bound_5 = end_5;
        v.bound_6 = end_6;
        v.bound_7 = end_7;
        v.bound_8 = end_8;
#endif
        v.weighted = weighted_paths;
        v.class_mode = mode;
        v.gap = (timestamp_t)flowlet_gap_us;
        v.syn_copy = syn_copy;
    }

    // No weights for this class: no path can be chosen.
    action no_weights() {
        v.bound_1 = 0;
        v.bound_2 = 0;
        v.bound_3 = 0;
        v.bound_4 = 0;
#if MAX_PATHS > 4
        v.bound_5 = 0;
        v.bound_6 = 0;
        v.bound_7 = 0;
        v.bound_8 = 0;
#endif
        v.weighted = 0;
        v.class_mode = policy_mode_t.HASH;
        v.gap = 0;
        v.syn_copy = 0;
    }

    // Purpose: the weights, mode, flowlet gap and syn_copy of each traffic class
    // towards each destination edge (its paths are numbered per edge).
    // Miss: no_weights, the packet is counted at index 0 and dropped.
    table path_weights {
        key = {
            meta.dst_edge: exact @name("dst_edge");
            meta.class_id: exact @name("class_id");
        }
        actions = {
            set_weights;
            @defaultonly no_weights;
        }
        const default_action = no_weights();
        size = PATH_WEIGHTS_TABLE_SIZE;
    }

    action set_path_port(port_t port) {
        std_meta.egress_spec = port;
        meta.on_path = true;
        meta.path_cell = EDGE_PATH(meta.dst_edge, meta.path_id);
        path_tx.count(meta.path_cell);
    }

    // A path without a next hop: counted at path_tx[0] and dropped.
    action unconfigured() {
        path_tx.count(0);
        drop_reason.count(DROP_NO_PATH);
        mark_to_drop(std_meta);
    }

    // Purpose: the egress port of each path to each destination edge
    // (weighted and pinned traffic; path ids are per destination edge).
    // Miss: the packet is dropped (path not configured) and counted at
    // path_tx[0].
    table path_nexthop {
        key = {
            meta.dst_edge: exact @name("dst_edge");
            meta.path_id: exact @name("path_id");
        }
        actions = {
            set_path_port;
            @defaultonly unconfigured;
        }
        const default_action = unconfigured();
        size = PATH_NEXTHOP_TABLE_SIZE;
    }

    // Each register read, hash and table below has a single call site, and the
    // locals live in headers (v, flow): see headers.p4, "Locals in headers".
    apply {
        // (p4c sets v and flow invalid here, as declared headers; these
        // two statements share that block, so they cost no table apply.)
        v.setValid();
        v.now = std_meta.ingress_global_timestamp;
        if (!meta.pinned) {
            path_weights.apply();
            flow.setValid();
            flow.src_addr = hdr.ipv4.src_addr;
            flow.dst_addr = hdr.ipv4.dst_addr;
            flow.protocol = hdr.ipv4.protocol;
            flow.src_port = meta.l4_src_port;
            flow.dst_port = meta.l4_dst_port;
            // A pinned MPTCP subflow (mptcp.p4) keeps its pin's path
            // unless that path is dead.
            bool placed = !meta.subflow_pinned;
            bool flowlets = placed && (v.class_mode == policy_mode_t.FLOWLET ||
                                       v.class_mode == policy_mode_t.VQ ||
                                       v.class_mode == policy_mode_t.CA);
            // Every local is set here, in one block with the flow key: on
            // BMv2 each block of statements between two conditions is a
            // table apply of its own.
            bool fresh = false;    // the packet continues its flow's flowlet
            v.slot = 0;
            v.alive_mask = 0;
            if (flowlets) {
                hash(v.slot, HashAlgorithm.crc16, 32w0, flow, (bit<32>)FLOWLET_SLOTS);
                flowlet_ts.read(v.last, v.slot);
                flowlet_path.read(meta.path_id, v.slot);
                fresh = meta.path_id != 0 && meta.path_id <= MAX_PATHS && v.now - v.last <= v.gap &&
                        (v.weighted & (8w1 << (meta.path_id - 1))) != 0;
                if (!fresh) {
                    meta.path_id = 0;
                }
            }
            // The weighted choice: the flow's hash (hash mode) or a random
            // draw (a new flowlet in flowlet mode) picks a bucket.
            if (placed && v.class_mode == policy_mode_t.HASH) {
                hash(meta.bucket, HashAlgorithm.crc32, 16w0, flow, 32w65536);
                meta.path_id = BUCKET_PATH((bit<17>)meta.bucket);
            } else if (flowlets && DRAWS_BY_WEIGHT(v.class_mode) && !fresh) {
                random(meta.bucket, 16w0, 16w65535);
                meta.path_id = BUCKET_PATH((bit<17>)meta.bucket);
            }
            // Liveness of the chosen (or continued) path towards the
            // destination edge (liveness.p4: per (peer edge, path)). Path 0
            // and ids above MAX_PATHS (dropped below) read cell (edge, 0),
            // never written: dead_after 0, never dead. (The cell goes into
            // v: an index computed in each read would be a temporary
            // metadata field per read.)
            v.cell = EDGE_PATH(meta.dst_edge, (meta.path_id <= MAX_PATHS ? meta.path_id : 8w0));
            path_last_seen.read(v.seen, v.cell);
            path_dead_after.read(v.after, v.cell);
            bool dead = v.after != 0 && v.now - v.seen > v.after;
            // Usable paths: the weighted ones, or the weighted alive ones
            // where every path's liveness is needed (round robin, a new VQ or
            // CA flowlet, a failover) and one of them is alive.
            v.usable = v.weighted;
            v.latest = 0;
            v.least_dead = 0;
            if (dead || (placed && (v.class_mode == policy_mode_t.RR ||
                                    ((v.class_mode == policy_mode_t.VQ ||
                                      v.class_mode == policy_mode_t.CA) && !fresh)))) {
                path_last_seen.read(v.seen, EDGE_PATH(meta.dst_edge, 1));
                path_dead_after.read(v.after, EDGE_PATH(meta.dst_edge, 1));
                if (v.after == 0 || v.now - v.seen <= v.after) { v.alive_mask = v.alive_mask | 1; }
                if ((v.weighted & 1) != 0 && v.seen > v.latest) { v.latest = v.seen; v.least_dead = 1; }
                path_last_seen.read(v.seen, EDGE_PATH(meta.dst_edge, 2));
                path_dead_after.read(v.after, EDGE_PATH(meta.dst_edge, 2));
                if (v.after == 0 || v.now - v.seen <= v.after) { v.alive_mask = v.alive_mask | 2; }
                if ((v.weighted & 2) != 0 && v.seen > v.latest) { v.latest = v.seen; v.least_dead = 2; }
                path_last_seen.read(v.seen, EDGE_PATH(meta.dst_edge, 3));
                path_dead_after.read(v.after, EDGE_PATH(meta.dst_edge, 3));
                if (v.after == 0 || v.now - v.seen <= v.after) { v.alive_mask = v.alive_mask | 4; }
                if ((v.weighted & 4) != 0 && v.seen > v.latest) { v.latest = v.seen; v.least_dead = 4; }
                path_last_seen.read(v.seen, EDGE_PATH(meta.dst_edge, 4));
                path_dead_after.read(v.after, EDGE_PATH(meta.dst_edge, 4));
                if (v.after == 0 || v.now - v.seen <= v.after) { v.alive_mask = v.alive_mask | 8; }
                if ((v.weighted & 8) != 0 && v.seen > v.latest) { v.latest = v.seen; v.least_dead = 8; }
#if MAX_PATHS > 4
                path_last_seen.read(v.seen, EDGE_PATH(meta.dst_edge, 5));
                path_dead_after.read(v.after, EDGE_PATH(meta.dst_edge, 5));
                if (v.after == 0 || v.now - v.seen <= v.after) { v.alive_mask = v.alive_mask | 16; }
                if ((v.weighted & 16) != 0 && v.seen > v.latest) { v.latest = v.seen; v.least_dead = 16; }
                path_last_seen.read(v.seen, EDGE_PATH(meta.dst_edge, 6));
                path_dead_after.read(v.after, EDGE_PATH(meta.dst_edge, 6));
                if (v.after == 0 || v.now - v.seen <= v.after) { v.alive_mask = v.alive_mask | 32; }
                if ((v.weighted & 32) != 0 && v.seen > v.latest) { v.latest = v.seen; v.least_dead = 32; }
                path_last_seen.read(v.seen, EDGE_PATH(meta.dst_edge, 7));
                path_dead_after.read(v.after, EDGE_PATH(meta.dst_edge, 7));
                if (v.after == 0 || v.now - v.seen <= v.after) { v.alive_mask = v.alive_mask | 64; }
                if ((v.weighted & 64) != 0 && v.seen > v.latest) { v.latest = v.seen; v.least_dead = 64; }
                path_last_seen.read(v.seen, EDGE_PATH(meta.dst_edge, 8));
                path_dead_after.read(v.after, EDGE_PATH(meta.dst_edge, 8));
                if (v.after == 0 || v.now - v.seen <= v.after) { v.alive_mask = v.alive_mask | 128; }
                if ((v.weighted & 128) != 0 && v.seen > v.latest) { v.latest = v.seen; v.least_dead = 128; }
#endif
                if ((v.alive_mask & v.weighted) != 0) {
                    v.usable = v.alive_mask & v.weighted;
                } else if (v.least_dead != 0) {
                    // None alive: the one whose last sign of life is latest. A live path
                    // whose news comes late (feedback queued behind congestion on the way
                    // back) is far likelier to deliver than one silent since it failed,
                    // and the others' stale metrics would make them look cheapest to CA.
                    v.usable = v.least_dead;
                }
            }
            if (placed && v.class_mode == policy_mode_t.RR) {
                // the first of q+1, q+2, ... (cyclically over 1..MAX_PATHS) in usable
                rr_last.read(v.q, RR_CELL(meta.dst_edge, meta.class_id));
                v.next = 0;
                if (v.q >= MAX_PATHS) { v.q = 1; } else { v.q = v.q + 1; }
                if ((v.usable & (8w1 << (v.q - 1))) != 0) { v.next = v.q; }
                if (v.q >= MAX_PATHS) { v.q = 1; } else { v.q = v.q + 1; }
                if (v.next == 0 && (v.usable & (8w1 << (v.q - 1))) != 0) { v.next = v.q; }
                if (v.q >= MAX_PATHS) { v.q = 1; } else { v.q = v.q + 1; }
                if (v.next == 0 && (v.usable & (8w1 << (v.q - 1))) != 0) { v.next = v.q; }
                if (v.q >= MAX_PATHS) { v.q = 1; } else { v.q = v.q + 1; }
                if (v.next == 0 && (v.usable & (8w1 << (v.q - 1))) != 0) { v.next = v.q; }
#if MAX_PATHS > 4
                if (v.q >= MAX_PATHS) { v.q = 1; } else { v.q = v.q + 1; }
                if (v.next == 0 && (v.usable & (8w1 << (v.q - 1))) != 0) { v.next = v.q; }
                if (v.q >= MAX_PATHS) { v.q = 1; } else { v.q = v.q + 1; }
                if (v.next == 0 && (v.usable & (8w1 << (v.q - 1))) != 0) { v.next = v.q; }
                if (v.q >= MAX_PATHS) { v.q = 1; } else { v.q = v.q + 1; }
                if (v.next == 0 && (v.usable & (8w1 << (v.q - 1))) != 0) { v.next = v.q; }
                if (v.q >= MAX_PATHS) { v.q = 1; } else { v.q = v.q + 1; }
                if (v.next == 0 && (v.usable & (8w1 << (v.q - 1))) != 0) { v.next = v.q; }
#endif
                meta.path_id = v.next;
                rr_last.write(RR_CELL(meta.dst_edge, meta.class_id), v.next);
            } else if (dead) {
                // The chosen path is dead: another alive weighted path, by a
                // second hash of the flow (hash mode: the same fallback for
                // the whole flow) or a random draw (flowlets).
                if (v.class_mode == policy_mode_t.HASH) {
                    hash(v.spread, HashAlgorithm.crc16, 16w0, flow, 32w65536);
                } else {
                    random(v.spread, 16w0, 16w65535);
                }
                failover.apply(meta.path_id, v.usable, v.spread);
                fresh = false;
            }
            if (placed && v.class_mode == policy_mode_t.VQ) {
                // A new flowlet takes the least time factor; every packet
                // joins its path's virtual queue.
                mvqs.apply(meta.dst_edge, meta.class_id, v.now, std_meta.packet_length, !fresh, v.usable,
                           meta.path_id);
            }
#ifndef NO_CONGESTION
            else if (placed && v.class_mode == policy_mode_t.CA && !fresh) {
                // A new flowlet (or one whose path died): least live cost.
                ca_select.apply(meta.dst_edge, meta.class_id, v.now, v.usable, meta.path_id);
            }
#endif
            if (flowlets) {
                flowlet_ts.write(v.slot, v.now);
                flowlet_path.write(v.slot, meta.path_id);
            }
            // A SYN of a class with syn_copy: its copy takes the first usable
            // path after the chosen one (cyclically over 1..MAX_PATHS), none
            // when no other path is usable; the egress makes the copy
            // (ingress.p4). Only SYNs pay for these conditions.
            if (v.syn_copy != 0 && hdr.tcp.isValid() && (hdr.tcp.flags & TCP_FLAG_SYN) != 0 &&
                    meta.path_id >= 1 && meta.path_id <= MAX_PATHS) {
                v.others = v.usable & ~(8w1 << (meta.path_id - 1));
                v.q = meta.path_id;
                v.next = 0;
                if (v.q >= MAX_PATHS) { v.q = 1; } else { v.q = v.q + 1; }
                if (v.next == 0 && (v.others & (8w1 << (v.q - 1))) != 0) { v.next = v.q; }
                if (v.q >= MAX_PATHS) { v.q = 1; } else { v.q = v.q + 1; }
                if (v.next == 0 && (v.others & (8w1 << (v.q - 1))) != 0) { v.next = v.q; }
                if (v.q >= MAX_PATHS) { v.q = 1; } else { v.q = v.q + 1; }
                if (v.next == 0 && (v.others & (8w1 << (v.q - 1))) != 0) { v.next = v.q; }
#if MAX_PATHS > 4
                if (v.q >= MAX_PATHS) { v.q = 1; } else { v.q = v.q + 1; }
                if (v.next == 0 && (v.others & (8w1 << (v.q - 1))) != 0) { v.next = v.q; }
                if (v.q >= MAX_PATHS) { v.q = 1; } else { v.q = v.q + 1; }
                if (v.next == 0 && (v.others & (8w1 << (v.q - 1))) != 0) { v.next = v.q; }
                if (v.q >= MAX_PATHS) { v.q = 1; } else { v.q = v.q + 1; }
                if (v.next == 0 && (v.others & (8w1 << (v.q - 1))) != 0) { v.next = v.q; }
                if (v.q >= MAX_PATHS) { v.q = 1; } else { v.q = v.q + 1; }
                if (v.next == 0 && (v.others & (8w1 << (v.q - 1))) != 0) { v.next = v.q; }
#endif
                meta.copy_path = v.next;
            }
        }
        // A pinned path id outside 1..MAX_PATHS, or a route's edge outside
        // 1..MAX_EDGES, has no counter: drop it rather than forward traffic
        // nobody counts.
        if (meta.path_id == 0 || meta.path_id > MAX_PATHS ||
                meta.dst_edge == 0 || meta.dst_edge > MAX_EDGES) {
            unconfigured();
        } else {
            path_nexthop.apply();
        }
    }
}

#endif
