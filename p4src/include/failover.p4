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
// its path.
// Unrolled for MAX_PATHS == 4, plus paths 5..8 under `#if MAX_PATHS > 4`.
#ifndef __FAILOVER__
#define __FAILOVER__

#include "headers.p4"

control PathFailover(inout path_id_t path_id, in bit<8> usable, in bit<16> spread) {

    apply {
        bit<8> others = usable & ~(8w1 << (path_id - 1));
        bit<32> n = 0;
        if ((others & 1) != 0) { n = n + 1; }
        if ((others & 2) != 0) { n = n + 1; }
        if ((others & 4) != 0) { n = n + 1; }
        if ((others & 8) != 0) { n = n + 1; }
#if MAX_PATHS > 4
        if ((others & 16) != 0) { n = n + 1; }
        if ((others & 32) != 0) { n = n + 1; }
        if ((others & 64) != 0) { n = n + 1; }
        if ((others & 128) != 0) { n = n + 1; }
#endif
        if (n != 0) {
            bit<32> k = ((bit<32>)spread * n) >> 16;
            // the path whose rank among `others` is k
            bit<32> rank = 0;
            path_id_t q = 0;
            if ((others & 1) != 0) {
                if (rank == k) { q = 1; }
                rank = rank + 1;
            }
            if ((others & 2) != 0) {
                if (rank == k) { q = 2; }
                rank = rank + 1;
            }
            if ((others & 4) != 0) {
                if (rank == k) { q = 3; }
                rank = rank + 1;
            }
            if ((others & 8) != 0) {
                if (rank == k) { q = 4; }
#if MAX_PATHS > 4
                rank = rank + 1;
            }
            if ((others & 16) != 0) {
                if (rank == k) { q = 5; }
                rank = rank + 1;
            }
            if ((others & 32) != 0) {
                if (rank == k) { q = 6; }
                rank = rank + 1;
            }
            if ((others & 64) != 0) {
                if (rank == k) { q = 7; }
                rank = rank + 1;
            }
            if ((others & 128) != 0) {
                if (rank == k) { q = 8; }
#endif
            }
            path_id = q;
        }
    }
}

#endif
