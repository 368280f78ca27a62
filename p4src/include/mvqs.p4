// FD-MVQS multipath virtual queues in the data plane (DESIGN.md §5,
// controller/fdmvqs.py), for traffic classes in mode VQ.
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
// path's queue. The queues are per path, shared by every VQ class; each
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
control Mvqs(in class_id_t class_id,
             in timestamp_t now,
             in bit<32> len,
             in bool choose,
             in bit<8> usable,
             inout path_id_t path_id) {

    // Per path, by path id: virtual queue (bytes) and when it was last drained (µs).
    register<bit<32>>(PATH_REGISTER_SIZE) vq_bytes;
    register<timestamp_t>(PATH_REGISTER_SIZE) vq_ts;

    bit<32> pad_1 = 0;   bit<32> pad_2 = 0;   bit<32> pad_3 = 0;   bit<32> pad_4 = 0;
    bit<32> bdp_1 = 0;   bit<32> bdp_2 = 0;   bit<32> bdp_3 = 0;   bit<32> bdp_4 = 0;
    bit<32> k_1 = 0;     bit<32> k_2 = 0;     bit<32> k_3 = 0;     bit<32> k_4 = 0;
    bit<32> drain_1 = 0; bit<32> drain_2 = 0; bit<32> drain_3 = 0; bit<32> drain_4 = 0;
#if MAX_PATHS > 4
    bit<32> pad_5 = 0;   bit<32> pad_6 = 0;   bit<32> pad_7 = 0;   bit<32> pad_8 = 0;
    bit<32> bdp_5 = 0;   bit<32> bdp_6 = 0;   bit<32> bdp_7 = 0;   bit<32> bdp_8 = 0;
    bit<32> k_5 = 0;     bit<32> k_6 = 0;     bit<32> k_7 = 0;     bit<32> k_8 = 0;
    bit<32> drain_5 = 0; bit<32> drain_6 = 0; bit<32> drain_7 = 0; bit<32> drain_8 = 0;
#endif

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
        pad_1 = pad_us_1; pad_2 = pad_us_2; pad_3 = pad_us_3; pad_4 = pad_us_4;
        bdp_1 = bdp_bytes_1; bdp_2 = bdp_bytes_2; bdp_3 = bdp_bytes_3; bdp_4 = bdp_bytes_4;
        k_1 = us_per_kbyte_1; k_2 = us_per_kbyte_2; k_3 = us_per_kbyte_3; k_4 = us_per_kbyte_4;
        drain_1 = drain_1024us_1; drain_2 = drain_1024us_2;
        drain_3 = drain_1024us_3; drain_4 = drain_1024us_4;
#if MAX_PATHS > 4
        pad_5 = pad_us_5; pad_6 = pad_us_6; pad_7 = pad_us_7; pad_8 = pad_us_8;
        bdp_5 = bdp_bytes_5; bdp_6 = bdp_bytes_6; bdp_7 = bdp_bytes_7; bdp_8 = bdp_bytes_8;
        k_5 = us_per_kbyte_5; k_6 = us_per_kbyte_6; k_7 = us_per_kbyte_7; k_8 = us_per_kbyte_8;
        drain_5 = drain_1024us_5; drain_6 = drain_1024us_6;
        drain_7 = drain_1024us_7; drain_8 = drain_1024us_8;
#endif
    }

    // Purpose: per class, the MVQS parameters the controller derives from
    // the path estimates every control period.
    // Miss: NoAction, every parameter 0: every T_p is 0, the lowest usable
    // path id wins, queues never drain.
    table mvqs_params {
        key = {
            class_id: exact @name("class_id");
        }
        actions = {
            set_mvqs;
            @defaultonly NoAction;
        }
        const default_action = NoAction();
        size = MVQS_PARAMS_TABLE_SIZE;
    }

    // Path i's virtual queue drained up to now.
    action drained(in bit<32> i, in bit<32> drain, in timestamp_t at, out bit<32> vq) {
        bit<32> q;
        timestamp_t t;
        vq_bytes.read(q, i);
        vq_ts.read(t, i);
        bit<64> gone = ((bit<64>)(at - t) * (bit<64>)drain) >> 10;
        vq = ((bit<64>)q > gone) ? q - (bit<32>)gone : 32w0;
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
        mvqs_params.apply();
        if (choose) {
            bit<32> q1; bit<32> q2; bit<32> q3; bit<32> q4;
            bit<64> t1; bit<64> t2; bit<64> t3; bit<64> t4;
            drained(1, drain_1, now, q1);
            drained(2, drain_2, now, q2);
            drained(3, drain_3, now, q3);
            drained(4, drain_4, now, q4);
            time_factor(q1, pad_1, bdp_1, k_1, t1);
            time_factor(q2, pad_2, bdp_2, k_2, t2);
            time_factor(q3, pad_3, bdp_3, k_3, t3);
            time_factor(q4, pad_4, bdp_4, k_4, t4);
#if MAX_PATHS > 4
            bit<32> q5; bit<32> q6; bit<32> q7; bit<32> q8;
            bit<64> t5; bit<64> t6; bit<64> t7; bit<64> t8;
            drained(5, drain_5, now, q5);
            drained(6, drain_6, now, q6);
            drained(7, drain_7, now, q7);
            drained(8, drain_8, now, q8);
            time_factor(q5, pad_5, bdp_5, k_5, t5);
            time_factor(q6, pad_6, bdp_6, k_6, t6);
            time_factor(q7, pad_7, bdp_7, k_7, t7);
            time_factor(q8, pad_8, bdp_8, k_8, t8);
#endif
            path_id_t best = 0;
            bit<64> best_t = 0;
            if ((usable & 1) != 0) { best = 1; best_t = t1; }
            if ((usable & 2) != 0 && (best == 0 || t2 < best_t)) { best = 2; best_t = t2; }
            if ((usable & 4) != 0 && (best == 0 || t3 < best_t)) { best = 3; best_t = t3; }
            if ((usable & 8) != 0 && (best == 0 || t4 < best_t)) { best = 4; best_t = t4; }
#if MAX_PATHS > 4
            if ((usable & 16) != 0 && (best == 0 || t5 < best_t)) { best = 5; best_t = t5; }
            if ((usable & 32) != 0 && (best == 0 || t6 < best_t)) { best = 6; best_t = t6; }
            if ((usable & 64) != 0 && (best == 0 || t7 < best_t)) { best = 7; best_t = t7; }
            if ((usable & 128) != 0 && (best == 0 || t8 < best_t)) { best = 8; best_t = t8; }
#endif
            if (best != 0) {
                path_id = best;
            }
        }
        if (path_id != 0 && path_id <= MAX_PATHS) {
            bit<32> drain = drain_1;
            if (path_id == 2) {
                drain = drain_2;
            } else if (path_id == 3) {
                drain = drain_3;
            } else if (path_id == 4) {
                drain = drain_4;
#if MAX_PATHS > 4
            } else if (path_id == 5) {
                drain = drain_5;
            } else if (path_id == 6) {
                drain = drain_6;
            } else if (path_id == 7) {
                drain = drain_7;
            } else if (path_id == 8) {
                drain = drain_8;
#endif
            }
            bit<32> index = (bit<32>)path_id;
            bit<32> q;
            drained(index, drain, now, q);
            vq_bytes.write(index, q + len);
            vq_ts.write(index, now);
        }
    }
}

#endif
