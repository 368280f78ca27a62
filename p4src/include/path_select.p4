// Path selection at the ingress edge: the 5-tuple hash of a flow falls into
// a bucket in [0, 65536); controller-written cumulative weights map the
// bucket to a path, and the path to its egress port. The weights are action
// data of one table entry per traffic class, so a weight change is a single,
// atomic P4Runtime MODIFY. A route may instead pin the packet to one path
// (routing's route_via_path); it then skips the weights but takes the same
// next hop lookup and counting. A packet placed onto a path (meta.on_path)
// then gets its path tag (path_tag.p4).
#ifndef __PATH_SELECT__
#define __PATH_SELECT__

#include "headers.p4"
#include "sizes.p4"
#include "failover.p4"

control PathSelect(inout headers_t hdr,
                   inout local_metadata_t meta,
                   inout standard_metadata_t std_meta) {

    // Packets (and bytes) this switch placed onto each path, by path id;
    // index 0 counts packets for which no path could be chosen (no weights,
    // every weight 0) or whose path has no next hop; those are dropped.
    counter(PATH_COUNTER_SIZE, CounterType.packets_and_bytes) path_tx;

    PathFailover() failover;

    // Cumulative bucket ends: path i owns the buckets [bound_{i-1}, bound_i).
    bit<17> bound_1 = 0;
    bit<17> bound_2 = 0;
    bit<17> bound_3 = 0;
    bit<17> bound_4 = 0;

    action drop() {
        mark_to_drop(std_meta);
    }

    // Weighted hashing over the paths of a class. end_i are the cumulative
    // bucket ends (0..65536, non-decreasing); a path with weight 0 has
    // end_i == end_{i-1} and never matches.
    action set_weights(bit<17> end_1, bit<17> end_2, bit<17> end_3, bit<17> end_4) {
        bound_1 = end_1;
        bound_2 = end_2;
        bound_3 = end_3;
        bound_4 = end_4;
        hash(meta.bucket, HashAlgorithm.crc32, 16w0,
             { hdr.ipv4.src_addr, hdr.ipv4.dst_addr, hdr.ipv4.protocol,
               meta.l4_src_port, meta.l4_dst_port },
             32w65536);
    }

    // No weights for this class: no path can be chosen.
    action no_weights() {
        bound_4 = 0;
    }

    // Purpose: the path weights of each traffic class.
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

    apply {
        if (!meta.pinned) {
            path_weights.apply();
            bit<17> bucket = (bit<17>)meta.bucket;
            if (bucket < bound_1) {
                meta.path_id = 1;
            } else if (bucket < bound_2) {
                meta.path_id = 2;
            } else if (bucket < bound_3) {
                meta.path_id = 3;
            } else if (bucket < bound_4) {
                meta.path_id = 4;
            } else {
                meta.path_id = 0;
            }
            if (meta.path_id != 0) {
                // Paths with a nonzero weight (bit i-1: path i) may take
                // over from a dead one (failover.p4). Pins do not fail over.
                bit<8> weighted = 0;
                if (bound_1 > 0) { weighted = weighted | 1; }
                if (bound_2 > bound_1) { weighted = weighted | 2; }
                if (bound_3 > bound_2) { weighted = weighted | 4; }
                if (bound_4 > bound_3) { weighted = weighted | 8; }
                failover.apply(meta, weighted);
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
