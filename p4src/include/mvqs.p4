// FD-MVQS multipath virtual queues in the data plane (docs/scheduling.md "FD-MVQS",
// src/mpsched/controller/policies/fdmvqs.py), for traffic classes in mode VQ.
//
// Each path p keeps a virtual queue VQ_p: the bytes of VQ-mode packets placed
// onto p, drained at the rate the controller writes (cap_p). The queue is
// brought up to date lazily, when it is read:
//     VQ_p <- max(0, VQ_p - (now - vq_ts_p) * drain_p / 1024) ,  vq_ts_p <- now
// (drain_p in bytes per 1024 µs, so the division is a shift). A new flowlet
// goes to the usable path with the least time factor
//     T_p = pad_p                                    if VQ_p <= bdp_p
//     T_p = pad_p + (VQ_p - bdp_p) * k_p / 1024      otherwise
// with pad_p the predicted arrival delay (µs, CTADP) and k_p = srtt_p /
// (w_p * bdp_p) in µs per 1024 bytes, the controller's parameters. This is
// the continuous form of the paper's ceil(VQ_p / (w_p bdp_p)) * srtt_p + PAD_p.
// Ties go to the lower path id. Every VQ-mode packet is then added to its
// path's queue. The queues are per (destination edge, path) (EDGE_PATH,
// sizes.p4), shared by every VQ class; each
// packet drains them with its own class's rates (the controller writes the
// same path rates for every class).
// Unrolled for MAX_PATHS == 4, plus paths 5..8 under `#if MAX_PATHS > 4`.
#ifndef __MVQS__
#define __MVQS__

#include "headers.p4"
#include "sizes.p4"

// class_id: the packet's class; now: its time stamp (µs); len: its length;
// choose: a new flowlet, pick the path among `usable` (bit i-1: path i);
// path_id: the chosen (or continued) path.
// Mvqs's locals (headers.p4, "Locals in headers"): the class's parameters
// per path (set_mvqs), the drained queues q_i and time factors t_i of a
// choice, and the working values of the update.
header mvqs_vars_t {
    bit<32> pad_1;   bit<32> pad_2;   bit<32> pad_3;   bit<32> pad_4;
    bit<32> bdp_1;   bit<32> bdp_2;   bit<32> bdp_3;   bit<32> bdp_4;
    bit<32> k_1;     bit<32> k_2;     bit<32> k_3;     bit<32> k_4;
    bit<32> drain_1; bit<32> drain_2; bit<32> drain_3; bit<32> drain_4;
    bit<32> q1;      bit<32> q2;      bit<32> q3;      bit<32> q4;
    bit<64> t1;      bit<64> t2;      bit<64> t3;      bit<64> t4;
#if MAX_PATHS > 4
    bit<32> pad_5;   bit<32> pad_6;   bit<32> pad_7;   bit<32> pad_8;
    bit<32> bdp_5;   bit<32> bdp_6;   bit<32> bdp_7;   bit<32> bdp_8;
    bit<32> k_5;     bit<32> k_6;     bit<32> k_7;     bit<32> k_8;
    bit<32> drain_5; bit<32> drain_6; bit<32> drain_7; bit<32> drain_8;
    bit<32> q5;      bit<32> q6;      bit<32> q7;      bit<32> q8;
    bit<64> t5;      bit<64> t6;      bit<64> t7;      bit<64> t8;
#endif
    path_id_t best;    // the choice so far
    bit<64>   best_t;  // its time factor
    bit<32>   drain;   // the chosen path's drain rate
    bit<32>   q;       // its drained queue
    bit<32>   stored;  // drained(): the queue as stored
    timestamp_t ts;    // drained(): when it was last drained
    bit<64>   gone;    // drained(): bytes drained since
}

control Mvqs(in edge_id_t dst_edge,
             in class_id_t class_id,
             in timestamp_t now,
             in bit<32> len,
             in bool choose,
             in bit<8> usable,
             inout path_id_t path_id) {

    // Per (destination edge, path), by EDGE_PATH: virtual queue (bytes) and
    // when it was last drained (µs).
    register<bit<32>, edge_path_t>(EDGE_PATH_REGISTER_SIZE) vq_bytes;
    register<timestamp_t, edge_path_t>(EDGE_PATH_REGISTER_SIZE) vq_ts;

    // The control's locals (headers.p4, "Locals in headers").
    mvqs_vars_t v;

    // The MVQS parameters of every path for one class (see the header comment).
    // Parameters are grouped by kind (pad_us_1..N, bdp_bytes_1..N, ...), in
    // that order, whatever MAX_PATHS is.
    action set_mvqs(bit<32> pad_us_1, bit<32> pad_us_2, bit<32> pad_us_3, bit<32> pad_us_4,
#if MAX_PATHS > 4
                    bit<32> pad_us_5, bit<32> pad_us_6, bit<32> pad_us_7, bit<32> pad_us_8,
#endif
                    bit<32> bdp_bytes_1, bit<32> bdp_bytes_2, bit<32> bdp_bytes_3,
                    bit<32> bdp_bytes_4,
#if MAX_PATHS > 4
                    bit<32> bdp_bytes_5, bit<32> bdp_bytes_6, bit<32> bdp_bytes_7,
                    bit<32> bdp_bytes_8,
#endif
                    bit<32> us_per_kbyte_1, bit<32> us_per_kbyte_2, bit<32> us_per_kbyte_3,
                    bit<32> us_per_kbyte_4,
#if MAX_PATHS > 4
                    bit<32> us_per_kbyte_5, bit<32> us_per_kbyte_6, bit<32> us_per_kbyte_7,
                    bit<32> us_per_kbyte_8,
#endif
                    bit<32> drain_1024us_1, bit<32> drain_1024us_2, bit<32> drain_1024us_3,
                    bit<32> drain_1024us_4
#if MAX_PATHS > 4
                    , bit<32> drain_1024us_5, bit<32> drain_1024us_6, bit<32> drain_1024us_7,
                    bit<32> drain_1024us_8
#endif
                    ) {
        v.pad_1 = pad_us_1; v.pad_2 = pad_us_2; v.pad_3 = pad_us_3; v.pad_4 = pad_us_4;
        v.bdp_1 = bdp_bytes_1; v.bdp_2 = bdp_bytes_2; v.bdp_3 = bdp_bytes_3; v.bdp_4 = bdp_bytes_4;
        v.k_1 = us_per_kbyte_1; v.k_2 = us_per_kbyte_2; v.k_3 = us_per_kbyte_3; v.k_4 = us_per_kbyte_4;
        v.drain_1 = drain_1024us_1; v.drain_2 = drain_1024us_2;
        v.drain_3 = drain_1024us_3; v.drain_4 = drain_1024us_4;
#if MAX_PATHS > 4
        v.pad_5 = pad_us_5; v.pad_6 = pad_us_6; v.pad_7 = pad_us_7; v.pad_8 = pad_us_8;
        v.bdp_5 = bdp_bytes_5; v.bdp_6 = bdp_bytes_6; v.bdp_7 = bdp_bytes_7; v.bdp_8 = bdp_bytes_8;
        v.k_5 = us_per_kbyte_5; v.k_6 = us_per_kbyte_6; v.k_7 = us_per_kbyte_7; v.k_8 = us_per_kbyte_8;
        v.drain_5 = drain_1024us_5; v.drain_6 = drain_1024us_6;
        v.drain_7 = drain_1024us_7; v.drain_8 = drain_1024us_8;
#endif
    }

    // No parameters for this class: every one 0.
    action no_params() {
        v.pad_1 = 0; v.pad_2 = 0; v.pad_3 = 0; v.pad_4 = 0;
        v.bdp_1 = 0; v.bdp_2 = 0; v.bdp_3 = 0; v.bdp_4 = 0;
        v.k_1 = 0; v.k_2 = 0; v.k_3 = 0; v.k_4 = 0;
        v.drain_1 = 0; v.drain_2 = 0; v.drain_3 = 0; v.drain_4 = 0;
#if MAX_PATHS > 4
        v.pad_5 = 0; v.pad_6 = 0; v.pad_7 = 0; v.pad_8 = 0;
        v.bdp_5 = 0; v.bdp_6 = 0; v.bdp_7 = 0; v.bdp_8 = 0;
        v.k_5 = 0; v.k_6 = 0; v.k_7 = 0; v.k_8 = 0;
        v.drain_5 = 0; v.drain_6 = 0; v.drain_7 = 0; v.drain_8 = 0;
#endif
    }

    // Purpose: per destination edge and class, the MVQS parameters the
    // controller derives from the path estimates every control period.
    // Miss: no_params, every parameter 0: every T_p is 0, the lowest usable
    // path id wins, queues never drain.
    table mvqs_params {
        key = {
            dst_edge: exact @name("dst_edge");
            class_id: exact @name("class_id");
        }
        actions = {
            set_mvqs;
            @defaultonly no_params;
        }
        const default_action = no_params();
        size = MVQS_PARAMS_TABLE_SIZE;
    }

    // Path i's virtual queue drained up to now.
    action drained(in path_id_t i, in bit<32> drain, in timestamp_t at, out bit<32> vq) {
        vq_bytes.read(v.stored, EDGE_PATH(dst_edge, i));
        vq_ts.read(v.ts, EDGE_PATH(dst_edge, i));
        v.gone = ((bit<64>)(at - v.ts) * (bit<64>)drain) >> 10;
        vq = ((bit<64>)v.stored > v.gone) ? v.stored - (bit<32>)v.gone : 32w0;
    }

    // Time factor of a path with drained queue vq.
    action time_factor(in bit<32> vq, in bit<32> pad, in bit<32> bdp, in bit<32> k,
                       out bit<64> t) {
        t = (bit<64>)pad;
        if (vq > bdp) {
            t = t + (((bit<64>)(vq - bdp) * (bit<64>)k) >> 10);
        }
    }

    apply {
        v.setValid();
        mvqs_params.apply();
        if (choose) {
            drained(1, v.drain_1, now, v.q1);
            drained(2, v.drain_2, now, v.q2);
            drained(3, v.drain_3, now, v.q3);
            drained(4, v.drain_4, now, v.q4);
            time_factor(v.q1, v.pad_1, v.bdp_1, v.k_1, v.t1);
            time_factor(v.q2, v.pad_2, v.bdp_2, v.k_2, v.t2);
            time_factor(v.q3, v.pad_3, v.bdp_3, v.k_3, v.t3);
            time_factor(v.q4, v.pad_4, v.bdp_4, v.k_4, v.t4);
#if MAX_PATHS > 4
            drained(5, v.drain_5, now, v.q5);
            drained(6, v.drain_6, now, v.q6);
            drained(7, v.drain_7, now, v.q7);
            drained(8, v.drain_8, now, v.q8);
            time_factor(v.q5, v.pad_5, v.bdp_5, v.k_5, v.t5);
            time_factor(v.q6, v.pad_6, v.bdp_6, v.k_6, v.t6);
            time_factor(v.q7, v.pad_7, v.bdp_7, v.k_7, v.t7);
            time_factor(v.q8, v.pad_8, v.bdp_8, v.k_8, v.t8);
#endif
            v.best = 0;
            v.best_t = 0;
            if ((usable & 1) != 0) { v.best = 1; v.best_t = v.t1; }
            if ((usable & 2) != 0 && (v.best == 0 || v.t2 < v.best_t)) { v.best = 2; v.best_t = v.t2; }
            if ((usable & 4) != 0 && (v.best == 0 || v.t3 < v.best_t)) { v.best = 3; v.best_t = v.t3; }
            if ((usable & 8) != 0 && (v.best == 0 || v.t4 < v.best_t)) { v.best = 4; v.best_t = v.t4; }
#if MAX_PATHS > 4
            if ((usable & 16) != 0 && (v.best == 0 || v.t5 < v.best_t)) { v.best = 5; v.best_t = v.t5; }
            if ((usable & 32) != 0 && (v.best == 0 || v.t6 < v.best_t)) { v.best = 6; v.best_t = v.t6; }
            if ((usable & 64) != 0 && (v.best == 0 || v.t7 < v.best_t)) { v.best = 7; v.best_t = v.t7; }
            if ((usable & 128) != 0 && (v.best == 0 || v.t8 < v.best_t)) { v.best = 8; v.best_t = v.t8; }
#endif
            if (v.best != 0) {
                path_id = v.best;
            }
        }
        if (path_id != 0 && path_id <= MAX_PATHS) {
            v.drain = v.drain_1;
            if (path_id == 2) {
                v.drain = v.drain_2;
            } else if (path_id == 3) {
                v.drain = v.drain_3;
            } else if (path_id == 4) {
                v.drain = v.drain_4;
#if MAX_PATHS > 4
            } else if (path_id == 5) {
                v.drain = v.drain_5;
            } else if (path_id == 6) {
                v.drain = v.drain_6;
            } else if (path_id == 7) {
                v.drain = v.drain_7;
            } else if (path_id == 8) {
                v.drain = v.drain_8;
#endif
            }
            drained(path_id, v.drain, now, v.q);
            vq_bytes.write(EDGE_PATH(dst_edge, path_id), v.q + len);
            vq_ts.write(EDGE_PATH(dst_edge, path_id), now);
        }
    }
}

#endif
