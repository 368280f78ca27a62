// Congestion-aware path choice per flowlet (mode CA, path_select.p4): a new
// flowlet takes, among the usable paths (alive, with a weight), one whose cost
//     cost_i = offset_i + (fresh_i ? live_i : 0)
//     live_i = (c_qdelay * qdelay_i + c_loss * loss_i + c_util * util_i) >> 8
//     util_i = (rate_i * inv_capacity_i) >> 16
// is at most the least cost + epsilon, drawn uniformly at random among them
// (so that flowlets started at the same moment do not all herd onto the one
// least-loaded path, the oscillation CONGA and HULA warn about). qdelay_i (µs),
// loss_i (fraction x 65536) and rate_i are the metrics the other edge fed back
// (congestion.p4); fresh_i: they were measured less than max_age_us ago. A
// path with stale or no metrics counts its offset only: it is tried, and so
// measured again. The controller writes, per class, the coefficients (8.8
// fixed point: 256 = 1 µs of cost per unit), epsilon, max_age_us, and per
// path the offset (µs) and the capacity's inverse (util_i = 65536 at the
// path's capacity: inv_capacity_i = 2^32 * unit / capacity bytes per window).
// The paper policies become these numbers (docs/scheduling.md). Costs are
// 64-bit; ties and near-ties are the epsilon rule's.
// Unrolled for MAX_PATHS == 4, plus paths 5..8 under `#if MAX_PATHS > 4`.
#ifndef __CA_SELECT__
#define __CA_SELECT__

#include "headers.p4"
#include "sizes.p4"
#include "congestion.p4"

#define CA_UNITS_KV rate_window_us = RATE_WINDOW_US, rate_unit_bytes = FB_RATE_UNIT_BYTES, \
    loss_one = 65536, util_one = 65536, coef_one = 256, \
    fb_qdelay_unit_us = (1 << FB_QDELAY_UNIT_SHIFT), fb_age_unit_us = (1 << FB_AGE_UNIT_SHIFT)

// CaSelect's locals (headers.p4, "Locals in headers"): the class's
// parameters (set_ca), each path's cost, and the working values.
header ca_select_vars_t {
    bit<32> c_qdelay;
    bit<32> c_loss;
    bit<32> c_util;
    bit<32> epsilon;
    bit<32> max_age;
    bit<32> off_1;  bit<32> off_2;  bit<32> off_3;  bit<32> off_4;
    bit<32> inv_1;  bit<32> inv_2;  bit<32> inv_3;  bit<32> inv_4;
    bit<64> cost_1;  bit<64> cost_2;  bit<64> cost_3;  bit<64> cost_4;
#if MAX_PATHS > 4
    bit<32> off_5;  bit<32> off_6;  bit<32> off_7;  bit<32> off_8;
    bit<32> inv_5;  bit<32> inv_6;  bit<32> inv_7;  bit<32> inv_8;
    bit<64> cost_5;  bit<64> cost_6;  bit<64> cost_7;  bit<64> cost_8;
#endif
    bit<64>     best;    // least cost among the usable paths
    bit<64>     limit;   // best + epsilon
    bit<64>     live;    // path_cost(): the live part
    timestamp_t ts;      // path_cost(): when the metrics were measured
    bit<32>     qdelay;  // path_cost(): the metrics
    bit<16>     loss;
    bit<16>     rate;
    bit<16>     spread;  // the random draw among the candidates
    bit<8>      cand;    // bit i-1: path i is a candidate
    bit<32>     n;       // how many
    bit<32>     k;       // rank of the choice among them
    bit<32>     rank;    // rank of the path being looked at
}

// class_id: the packet's class; now: its time stamp (µs); usable: the
// alive, weighted paths (bit i-1: path i); path_id: the choice (unchanged
// when no path is usable). The metrics are FeedbackStore's, lent read-only
// (congestion.p4, "State").
control CaSelect(in edge_id_t dst_edge,
                 in class_id_t class_id,
                 in timestamp_t now,
                 in bit<8> usable,
                 inout path_id_t path_id)
                (register<bit<32>, edge_path_t> ca_qdelay,
                 register<bit<16>, edge_path_t> ca_loss,
                 register<bit<16>, edge_path_t> ca_rate,
                 register<timestamp_t, edge_path_t> ca_ts) {

    ca_select_vars_t v;

    // The cost parameters of a class (see the header comment). Per-path
    // parameters are grouped by kind (offset_1..N, inv_capacity_1..N).
    action set_ca(bit<32> c_qdelay, bit<32> c_loss, bit<32> c_util, bit<32> epsilon,
                  bit<32> max_age_us,
                  bit<32> offset_1, bit<32> offset_2, bit<32> offset_3, bit<32> offset_4,
#if MAX_PATHS > 4
                  bit<32> offset_5, bit<32> offset_6, bit<32> offset_7, bit<32> offset_8,
#endif
                  bit<32> inv_capacity_1, bit<32> inv_capacity_2, bit<32> inv_capacity_3, bit<32> inv_capacity_4
#if MAX_PATHS > 4
                  , bit<32> inv_capacity_5, bit<32> inv_capacity_6, bit<32> inv_capacity_7, bit<32> inv_capacity_8
#endif
                  ) {
        v.c_qdelay = c_qdelay;
        v.c_loss = c_loss;
        v.c_util = c_util;
        v.epsilon = epsilon;
        v.max_age = max_age_us;
        v.off_1 = offset_1; v.off_2 = offset_2; v.off_3 = offset_3; v.off_4 = offset_4;
        v.inv_1 = inv_capacity_1; v.inv_2 = inv_capacity_2; v.inv_3 = inv_capacity_3; v.inv_4 = inv_capacity_4;
#if MAX_PATHS > 4
        v.off_5 = offset_5; v.off_6 = offset_6; v.off_7 = offset_7; v.off_8 = offset_8;
        v.inv_5 = inv_capacity_5; v.inv_6 = inv_capacity_6; v.inv_7 = inv_capacity_7; v.inv_8 = inv_capacity_8;
#endif
    }

    // No parameters for this class: every cost 0, every usable path a
    // candidate (a uniform random choice: LetFlow).
    action no_ca() {
        v.c_qdelay = 0;
        v.c_loss = 0;
        v.c_util = 0;
        v.epsilon = 0;
        v.max_age = 0;
        v.off_1 = 0; v.off_2 = 0; v.off_3 = 0; v.off_4 = 0;
        v.inv_1 = 0; v.inv_2 = 0; v.inv_3 = 0; v.inv_4 = 0;
#if MAX_PATHS > 4
        v.off_5 = 0; v.off_6 = 0; v.off_7 = 0; v.off_8 = 0;
        v.inv_5 = 0; v.inv_6 = 0; v.inv_7 = 0; v.inv_8 = 0;
#endif
    }

    // Purpose: per destination edge and class, the cost coefficients,
    // epsilon, metric age limit and per-path offsets and inverse capacities
    // the controller derives from its estimates every control period (units in @ca_units, for the
    // controller, from the same defines as the data plane's).
    // Miss: no_ca, a uniform random choice among the usable paths.
    @ca_units[CA_UNITS_KV]
    table ca_params {
        key = {
            dst_edge: exact @name("dst_edge");
            class_id: exact @name("class_id");
        }
        actions = {
            set_ca;
            @defaultonly no_ca;
        }
        const default_action = no_ca();
        size = CA_PARAMS_TABLE_SIZE;
    }

    // Path i's cost.
    action path_cost(in path_id_t i, in bit<32> offset, in bit<32> inv, in timestamp_t at,
                     out bit<64> cost) {
        ca_ts.read(v.ts, EDGE_PATH(dst_edge, i));
        ca_qdelay.read(v.qdelay, EDGE_PATH(dst_edge, i));
        ca_loss.read(v.loss, EDGE_PATH(dst_edge, i));
        ca_rate.read(v.rate, EDGE_PATH(dst_edge, i));
        v.live = ((bit<64>)v.c_qdelay * (bit<64>)v.qdelay
                  + (bit<64>)v.c_loss * (bit<64>)v.loss
                  + (bit<64>)v.c_util * (((bit<64>)v.rate * (bit<64>)inv) >> 16)) >> 8;
        cost = (bit<64>)offset
               + ((v.ts != 0 && at - v.ts <= (timestamp_t)v.max_age) ? v.live : 64w0);
    }

    apply {
        v.setValid();
        ca_params.apply();
        path_cost(1, v.off_1, v.inv_1, now, v.cost_1);
        path_cost(2, v.off_2, v.inv_2, now, v.cost_2);
        path_cost(3, v.off_3, v.inv_3, now, v.cost_3);
        path_cost(4, v.off_4, v.inv_4, now, v.cost_4);
#if MAX_PATHS > 4
        path_cost(5, v.off_5, v.inv_5, now, v.cost_5);
        path_cost(6, v.off_6, v.inv_6, now, v.cost_6);
        path_cost(7, v.off_7, v.inv_7, now, v.cost_7);
        path_cost(8, v.off_8, v.inv_8, now, v.cost_8);
#endif
        v.best = 64w0xFFFFFFFFFFFFFFFF;
        if ((usable & 1) != 0 && v.cost_1 < v.best) { v.best = v.cost_1; }
        if ((usable & 2) != 0 && v.cost_2 < v.best) { v.best = v.cost_2; }
        if ((usable & 4) != 0 && v.cost_3 < v.best) { v.best = v.cost_3; }
        if ((usable & 8) != 0 && v.cost_4 < v.best) { v.best = v.cost_4; }
#if MAX_PATHS > 4
        if ((usable & 16) != 0 && v.cost_5 < v.best) { v.best = v.cost_5; }
        if ((usable & 32) != 0 && v.cost_6 < v.best) { v.best = v.cost_6; }
        if ((usable & 64) != 0 && v.cost_7 < v.best) { v.best = v.cost_7; }
        if ((usable & 128) != 0 && v.cost_8 < v.best) { v.best = v.cost_8; }
#endif
        v.limit = v.best + (bit<64>)v.epsilon;
        v.cand = 0;
        v.n = 0;
        if ((usable & 1) != 0 && v.cost_1 <= v.limit) { v.cand = v.cand | 1; v.n = v.n + 1; }
        if ((usable & 2) != 0 && v.cost_2 <= v.limit) { v.cand = v.cand | 2; v.n = v.n + 1; }
        if ((usable & 4) != 0 && v.cost_3 <= v.limit) { v.cand = v.cand | 4; v.n = v.n + 1; }
        if ((usable & 8) != 0 && v.cost_4 <= v.limit) { v.cand = v.cand | 8; v.n = v.n + 1; }
#if MAX_PATHS > 4
        if ((usable & 16) != 0 && v.cost_5 <= v.limit) { v.cand = v.cand | 16; v.n = v.n + 1; }
        if ((usable & 32) != 0 && v.cost_6 <= v.limit) { v.cand = v.cand | 32; v.n = v.n + 1; }
        if ((usable & 64) != 0 && v.cost_7 <= v.limit) { v.cand = v.cand | 64; v.n = v.n + 1; }
        if ((usable & 128) != 0 && v.cost_8 <= v.limit) { v.cand = v.cand | 128; v.n = v.n + 1; }
#endif
        if (v.n != 0) {
            // the k-th candidate in path id order, k uniform in 0..n-1
            random(v.spread, 16w0, 16w65535);
            v.k = ((bit<32>)v.spread * v.n) >> 16;
            v.rank = 0;
            if ((v.cand & 1) != 0) {
                if (v.rank == v.k) { path_id = 1; }
                v.rank = v.rank + 1;
            }
            if ((v.cand & 2) != 0) {
                if (v.rank == v.k) { path_id = 2; }
                v.rank = v.rank + 1;
            }
            if ((v.cand & 4) != 0) {
                if (v.rank == v.k) { path_id = 3; }
                v.rank = v.rank + 1;
            }
            if ((v.cand & 8) != 0) {
                if (v.rank == v.k) { path_id = 4; }
                v.rank = v.rank + 1;
            }
#if MAX_PATHS > 4
            if ((v.cand & 16) != 0) {
                if (v.rank == v.k) { path_id = 5; }
                v.rank = v.rank + 1;
            }
            if ((v.cand & 32) != 0) {
                if (v.rank == v.k) { path_id = 6; }
                v.rank = v.rank + 1;
            }
            if ((v.cand & 64) != 0) {
                if (v.rank == v.k) { path_id = 7; }
                v.rank = v.rank + 1;
            }
            if ((v.cand & 128) != 0) {
                if (v.rank == v.k) { path_id = 8; }
                v.rank = v.rank + 1;
            }
#endif
        }
    }
}

#endif
