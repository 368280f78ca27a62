// Local fast failover at the ingress edge (called by path_select.p4 after
// the weighted choice; pinned packets and probes never get here).
//
// If the weighted choice p is not alive (meta.alive, liveness.p4), the
// packet takes the first of p+1, p+2, ... (cyclically over 1..MAX_PATHS)
// that is alive and has a nonzero weight. The choice depends only on p, i.e.
// on the flow's bucket, so a flow stays on one fallback while p is dead, and
// hashes back to p as soon as p is alive again (recovery needs no
// controller). If no other path qualifies, the packet keeps p.
// Unrolled for MAX_PATHS == 4.
#ifndef __FAILOVER__
#define __FAILOVER__

#include "headers.p4"

control PathFailover(inout local_metadata_t meta, in bit<8> weighted) {

    apply {
        path_id_t p = meta.path_id;
        bit<8> usable = meta.alive & weighted;
        if ((meta.alive & (8w1 << (p - 1))) == 0) {
            path_id_t q = p;
            bool found = false;
            // try p+1, p+2, p+3 (mod MAX_PATHS, 1-based)
            q = (q == MAX_PATHS) ? 8w1 : q + 1;
            if ((usable & (8w1 << (q - 1))) != 0) {
                found = true;
            } else {
                q = (q == MAX_PATHS) ? 8w1 : q + 1;
                if ((usable & (8w1 << (q - 1))) != 0) {
                    found = true;
                } else {
                    q = (q == MAX_PATHS) ? 8w1 : q + 1;
                    if ((usable & (8w1 << (q - 1))) != 0) {
                        found = true;
                    }
                }
            }
            if (found) {
                meta.path_id = q;
            }
        }
    }
}

#endif
