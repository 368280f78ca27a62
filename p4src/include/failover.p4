// Local fast failover at the ingress edge (called by path_select.p4 when the
// path chosen for a packet is not alive; pinned packets and probes never get
// here).
//
// The packet moves to one of the other usable paths (alive and with a
// nonzero weight in its class): the k-th of the n such paths in path id
// order, k = (spread * n) / 65536, where `spread` is a 16-bit hash of the flow
// (hash mode: the same flow always takes the same fallback, so a dead path's
// flows spread evenly over the survivors) or a random draw (a new flowlet).
// As soon as the chosen path is alive again, path_select picks it again:
// recovery needs no controller. If no other path is usable, the packet keeps
// its path. (When no weighted path is alive, path_select.p4 hands the least
// dead one as the only usable path.)
// Unrolled for MAX_PATHS == 4, plus paths 5..8 under `#if MAX_PATHS > 4`.
#ifndef __FAILOVER__
#define __FAILOVER__

#include "headers.p4"

// PathFailover's locals (headers.p4, "Locals in headers").
header failover_vars_t {
    bit<8>    others;  // the usable paths other than path_id
    bit<32>   n;       // how many
    bit<32>   k;       // rank of the choice among them
    bit<32>   rank;    // rank of the path being looked at
    path_id_t q;       // the choice
}

control PathFailover(inout path_id_t path_id, in bit<8> usable, in bit<16> spread) {

    failover_vars_t v;

    apply {
        v.setValid();
        v.others = usable & ~(8w1 << (path_id - 1));
        v.n = 0;
        if ((v.others & 1) != 0) { v.n = v.n + 1; }
        if ((v.others & 2) != 0) { v.n = v.n + 1; }
        if ((v.others & 4) != 0) { v.n = v.n + 1; }
        if ((v.others & 8) != 0) { v.n = v.n + 1; }
#if MAX_PATHS > 4
        if ((v.others & 16) != 0) { v.n = v.n + 1; }
        if ((v.others & 32) != 0) { v.n = v.n + 1; }
        if ((v.others & 64) != 0) { v.n = v.n + 1; }
        if ((v.others & 128) != 0) { v.n = v.n + 1; }
#endif
        if (v.n != 0) {
            v.k = ((bit<32>)spread * v.n) >> 16;
            // the path whose rank among `others` is k
            v.rank = 0;
            v.q = 0;
            if ((v.others & 1) != 0) {
                if (v.rank == v.k) { v.q = 1; }
                v.rank = v.rank + 1;
            }
            if ((v.others & 2) != 0) {
                if (v.rank == v.k) { v.q = 2; }
                v.rank = v.rank + 1;
            }
            if ((v.others & 4) != 0) {
                if (v.rank == v.k) { v.q = 3; }
                v.rank = v.rank + 1;
            }
            if ((v.others & 8) != 0) {
                if (v.rank == v.k) { v.q = 4; }
#if MAX_PATHS > 4
                v.rank = v.rank + 1;
            }
            if ((v.others & 16) != 0) {
                if (v.rank == v.k) { v.q = 5; }
                v.rank = v.rank + 1;
            }
            if ((v.others & 32) != 0) {
                if (v.rank == v.k) { v.q = 6; }
                v.rank = v.rank + 1;
            }
            if ((v.others & 64) != 0) {
                if (v.rank == v.k) { v.q = 7; }
                v.rank = v.rank + 1;
            }
            if ((v.others & 128) != 0) {
                if (v.rank == v.k) { v.q = 8; }
#endif
            }
            path_id = v.q;
        }
    }
}

#endif
