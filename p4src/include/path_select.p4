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
//
// Dead paths (liveness.p4) get nothing new: a packet whose path is not alive
// goes to another alive weighted path (failover.p4). A route may instead pin
// the packet to one path (routing's route_via_path); it then skips all of
// this but takes the same next hop lookup and counting. A packet placed onto
// a path (meta.on_path) then gets its path tag (path_tag.p4).
// Unrolled for MAX_PATHS == 4, plus paths 5..8 under `#if MAX_PATHS > 4`.
#ifndef __PATH_SELECT__
#define __PATH_SELECT__

#include "headers.p4"
#include "sizes.p4"
#include "failover.p4"
#include "liveness.p4"
#include "mvqs.p4"

control PathSelect(inout headers_t hdr,
                   inout local_metadata_t meta,
                   inout standard_metadata_t std_meta) {

    // Packets (and bytes) this switch placed onto each path, by path id;
    // index 0 counts packets for which no path could be chosen (no weights,
    // every weight 0) or whose path has no next hop; those are dropped.
    counter(PATH_COUNTER_SIZE, CounterType.packets_and_bytes) path_tx;

    // Flowlet state by flow-hash slot: when the flow last sent (µs) and its path.
    register<timestamp_t>(FLOWLET_SLOTS) flowlet_ts;
    register<path_id_t>(FLOWLET_SLOTS) flowlet_path;
    // Round robin: the path of each class's previous packet.
    register<path_id_t>(MAX_CLASSES) rr_last;

    PathFailover() failover;
    Mvqs() mvqs;

    bit<17> bound_1 = 0;
    bit<17> bound_2 = 0;
    bit<17> bound_3 = 0;
    bit<17> bound_4 = 0;
#if MAX_PATHS > 4
    bit<17> bound_5 = 0;
    bit<17> bound_6 = 0;
    bit<17> bound_7 = 0;
    bit<17> bound_8 = 0;
#endif
    policy_mode_t class_mode = policy_mode_t.HASH;
    timestamp_t gap = 0;

    action drop() {
        mark_to_drop(std_meta);
    }

    // The placement of a class: cumulative bucket ends end_i (0..65536,
    // non-decreasing), the mode, and the idle gap (µs) after which a flow's
    // next packet starts a new flowlet (FLOWLET and VQ modes).
    action set_weights(bit<17> end_1, bit<17> end_2, bit<17> end_3, bit<17> end_4,
#if MAX_PATHS > 4
                       bit<17> end_5, bit<17> end_6, bit<17> end_7, bit<17> end_8,
#endif
                       policy_mode_t mode, bit<32> flowlet_gap_us) {
        bound_1 = end_1;
        bound_2 = end_2;
        bound_3 = end_3;
        bound_4 = end_4;
#if MAX_PATHS > 4
        bound_5 = end_5;
        bound_6 = end_6;
        bound_7 = end_7;
        bound_8 = end_8;
#endif
        class_mode = mode;
        gap = (timestamp_t)flowlet_gap_us;
    }

    // No weights for this class: no path can be chosen.
    action no_weights() {
        bound_4 = 0;
#if MAX_PATHS > 4
        bound_8 = 0;
#endif
    }

    // Purpose: the weights, mode and flowlet gap of each traffic class.
    // Miss: no_weights, the packet is counted at index 0 and dropped.
    table path_weights {
        key = {
            meta.class_id: exact;
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
    }

    // Purpose: the egress port of each path (weighted and pinned traffic).
    // Miss: the packet is dropped (path not configured) and counted at
    // path_tx[0].
    table path_nexthop {
        key = {
            meta.path_id: exact;
        }
        actions = {
            set_path_port;
            @defaultonly drop;
        }
        const default_action = drop();
        size = PATH_NEXTHOP_TABLE_SIZE;
    }

    // Is path i alive at time now (liveness.p4)?
    action check_alive(in bit<32> i, in timestamp_t now, out bit<1> alive) {
        timestamp_t seen;
        timestamp_t after;
        path_last_seen.read(seen, i);
        path_dead_after.read(after, i);
        alive = (after == 0 || now - seen <= after) ? 1w1 : 1w0;
    }

    // The alive bits of every path (bit i-1: path i).
    action all_alive(in timestamp_t now, out bit<8> mask) {
        bit<1> a1;
        bit<1> a2;
        bit<1> a3;
        bit<1> a4;
        check_alive(1, now, a1);
        check_alive(2, now, a2);
        check_alive(3, now, a3);
        check_alive(4, now, a4);
#if MAX_PATHS > 4
        bit<1> a5;
        bit<1> a6;
        bit<1> a7;
        bit<1> a8;
        check_alive(5, now, a5);
        check_alive(6, now, a6);
        check_alive(7, now, a7);
        check_alive(8, now, a8);
        mask = a8 ++ a7 ++ a6 ++ a5 ++ a4 ++ a3 ++ a2 ++ a1;
#else
        mask = (bit<8>)(a4 ++ a3 ++ a2 ++ a1);
#endif
    }

    // The path owning bucket b.
    action by_bucket(in bit<17> b) {
        if (b < bound_1) {
            meta.path_id = 1;
        } else if (b < bound_2) {
            meta.path_id = 2;
        } else if (b < bound_3) {
            meta.path_id = 3;
        } else if (b < bound_4) {
            meta.path_id = 4;
#if MAX_PATHS > 4
        } else if (b < bound_5) {
            meta.path_id = 5;
        } else if (b < bound_6) {
            meta.path_id = 6;
        } else if (b < bound_7) {
            meta.path_id = 7;
        } else if (b < bound_8) {
            meta.path_id = 8;
#endif
        } else {
            meta.path_id = 0;
        }
    }

    apply {
        timestamp_t now = std_meta.ingress_global_timestamp;
        if (!meta.pinned) {
            path_weights.apply();
            bit<8> weighted = 0;
            if (bound_1 > 0) { weighted = weighted | 1; }
            if (bound_2 > bound_1) { weighted = weighted | 2; }
            if (bound_3 > bound_2) { weighted = weighted | 4; }
            if (bound_4 > bound_3) { weighted = weighted | 8; }
#if MAX_PATHS > 4
            if (bound_5 > bound_4) { weighted = weighted | 16; }
            if (bound_6 > bound_5) { weighted = weighted | 32; }
            if (bound_7 > bound_6) { weighted = weighted | 64; }
            if (bound_8 > bound_7) { weighted = weighted | 128; }
#endif
            bit<8> alive_mask = 0;
            bit<1> alive = 1;      // 0: the chosen path is dead, fail over
            bit<16> spread = 0;    // the failover's draw (failover.p4)
            bool flowlets = class_mode == policy_mode_t.FLOWLET ||
                            class_mode == policy_mode_t.VQ;
            bool fresh = false;    // the packet continues its flow's flowlet
            bit<32> slot = 0;
            if (class_mode == policy_mode_t.RR) {
                all_alive(now, alive_mask);
                bit<8> usable = alive_mask & weighted;
                if (usable == 0) {
                    usable = weighted;
                }
                bit<32> index = (bit<32>)meta.class_id;
                path_id_t q;
                rr_last.read(q, index);
                path_id_t next = 0;
                // the first of q+1, q+2, ... (cyclically over 1..MAX_PATHS) in
                // usable: MAX_PATHS tries
                q = (q >= MAX_PATHS) ? 8w1 : q + 1;
                if ((usable & (8w1 << (q - 1))) != 0) { next = q; }
                q = (q >= MAX_PATHS) ? 8w1 : q + 1;
                if (next == 0 && (usable & (8w1 << (q - 1))) != 0) { next = q; }
                q = (q >= MAX_PATHS) ? 8w1 : q + 1;
                if (next == 0 && (usable & (8w1 << (q - 1))) != 0) { next = q; }
                q = (q >= MAX_PATHS) ? 8w1 : q + 1;
                if (next == 0 && (usable & (8w1 << (q - 1))) != 0) { next = q; }
#if MAX_PATHS > 4
                q = (q >= MAX_PATHS) ? 8w1 : q + 1;
                if (next == 0 && (usable & (8w1 << (q - 1))) != 0) { next = q; }
                q = (q >= MAX_PATHS) ? 8w1 : q + 1;
                if (next == 0 && (usable & (8w1 << (q - 1))) != 0) { next = q; }
                q = (q >= MAX_PATHS) ? 8w1 : q + 1;
                if (next == 0 && (usable & (8w1 << (q - 1))) != 0) { next = q; }
                q = (q >= MAX_PATHS) ? 8w1 : q + 1;
                if (next == 0 && (usable & (8w1 << (q - 1))) != 0) { next = q; }
#endif
                meta.path_id = next;
                rr_last.write(index, next);
            } else if (class_mode == policy_mode_t.HASH) {
                hash(meta.bucket, HashAlgorithm.crc32, 16w0,
                     { hdr.ipv4.src_addr, hdr.ipv4.dst_addr, hdr.ipv4.protocol,
                       meta.l4_src_port, meta.l4_dst_port },
                     32w65536);
                by_bucket((bit<17>)meta.bucket);
                if (meta.path_id != 0) {
                    check_alive((bit<32>)meta.path_id, now, alive);
                    if (alive == 0) {
                        hash(spread, HashAlgorithm.crc16, 16w0,
                             { hdr.ipv4.src_addr, hdr.ipv4.dst_addr, hdr.ipv4.protocol,
                               meta.l4_src_port, meta.l4_dst_port },
                             32w65536);
                    }
                }
            } else {
                // FLOWLET and VQ: continue the flow's flowlet, or start one
                hash(slot, HashAlgorithm.crc16, 32w0,
                     { hdr.ipv4.src_addr, hdr.ipv4.dst_addr, hdr.ipv4.protocol,
                       meta.l4_src_port, meta.l4_dst_port },
                     (bit<32>)FLOWLET_SLOTS);
                timestamp_t last;
                path_id_t p;
                flowlet_ts.read(last, slot);
                flowlet_path.read(p, slot);
                fresh = p != 0 && p <= MAX_PATHS && now - last <= gap &&
                        (weighted & (8w1 << (p - 1))) != 0;
                if (fresh) {
                    bit<1> p_alive;
                    check_alive((bit<32>)p, now, p_alive);
                    fresh = p_alive == 1;
                }
                if (fresh) {
                    meta.path_id = p;
                } else if (class_mode == policy_mode_t.FLOWLET) {
                    random(meta.bucket, 16w0, 16w65535);
                    by_bucket((bit<17>)meta.bucket);
                    if (meta.path_id != 0) {
                        check_alive((bit<32>)meta.path_id, now, alive);
                        if (alive == 0) {
                            random(spread, 16w0, 16w65535);
                        }
                    }
                }
            }
            if (alive == 0) {
                // The chosen path is dead: another alive weighted path.
                all_alive(now, alive_mask);
                failover.apply(meta.path_id, alive_mask & weighted, spread);
            }
            if (class_mode == policy_mode_t.VQ) {
                // A new flowlet takes the least time factor; every packet
                // joins its path's virtual queue.
                bit<8> usable = 0;
                if (!fresh) {
                    all_alive(now, alive_mask);
                    usable = alive_mask & weighted;
                    if (usable == 0) {
                        usable = weighted;
                    }
                }
                mvqs.apply(meta.class_id, now, std_meta.packet_length, !fresh, usable,
                           meta.path_id);
            }
            if (flowlets) {
                flowlet_ts.write(slot, now);
                flowlet_path.write(slot, meta.path_id);
            }
        }
        // A pinned path id outside 1..MAX_PATHS has no counter: drop it
        // rather than forward traffic nobody counts.
        if (meta.path_id == 0 || meta.path_id > MAX_PATHS) {
            path_tx.count(0);
            drop();
        } else if (path_nexthop.apply().hit) {
            path_tx.count((bit<32>)meta.path_id);
        } else {
            path_tx.count(0);
        }
    }
}

#endif
