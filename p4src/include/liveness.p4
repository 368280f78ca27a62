// Path liveness at each edge switch, for local fast failover (path_select.p4).
//
// A path p is alive while now - last_seen[p] <= dead_after[p], where
// last_seen[p] is the ingress time stamp of the latest TAGGED packet that
// arrived FROM path p (data or probe) and dead_after[p] is the path's
// liveness_config value (µs, this switch's clock). dead_after[p] == 0 means
// "no liveness configured": the path is never declared dead (a switch
// without liveness_config entries behaves as before).
//
// The switch agent keeps idle paths measured with probes: a P4Runtime
// PacketOut with the packet_out header (path id) is sent onto that path with
// a path tag whose flags carry PATH_FLAG_PROBE (ingress.p4 routes it like a
// pinned packet: next hop, path_tx, sequence number, tag push). Sending a
// probe on a configured path also arms its timer if nothing has arrived on
// it yet, so a path that is dead from the start is declared dead
// dead_after µs after the first probe.
//
// Liveness owns the two registers below (it alone writes them); path
// selection reads them where it needs a path's state: the chosen path's on
// every packet, every path's only when the chosen one is dead (failover) or
// the class goes round robin. They carry state from packet to packet
// (arrivals from a path write them, packets leaving onto it read them), which
// no metadata can: they are declared in MpIngress (ingress.p4), the control
// over both stages, and lent to each as constructor arguments.
#ifndef __LIVENESS__
#define __LIVENESS__

#include "headers.p4"
#include "sizes.p4"

// path_last_seen, path_dead_after: per (peer edge, path), by EDGE_PATH(peer
// edge, path id) (sizes.p4), the arrival time of the latest tagged packet
// from the path (µs; the tag's src_edge) and the dead-after interval in force
// (0: never dead). A path towards edge e is judged by the arrivals from e on
// the path of the same id (the two directions of a path of the testbed; in a
// fabric path i of a -> b need not be the reverse of b -> a's, docs/fabric.md).
// A probe sent towards e (packet_out.dst_edge) arms the cell of e.
// PATH_ID_SPACE cells (every value of path_id_t); only cells of edges
// 1..MAX_EDGES and paths 1..MAX_PATHS are ever written.
control Liveness(inout headers_t hdr,
                 inout local_metadata_t meta,
                 inout standard_metadata_t std_meta)
                (register<timestamp_t, path_id_t> path_last_seen,
                 register<timestamp_t, path_id_t> path_dead_after) {

    // Set where used (apply), not here: an initialiser runs for every packet.
    path_id_t key_path;  // the path id (liveness_config's key)
    path_id_t cell;      // its registers' cell: EDGE_PATH(peer edge, path id)
    timestamp_t config_dead_after;

    // Declare the path dead dead_after_us µs after the last tagged packet
    // that arrived from it.
    action set_dead_after(timestamp_t dead_after_us) {
        config_dead_after = dead_after_us;
    }

    // Purpose: the dead-after interval of each path (by path id).
    // Miss: NoAction, dead_after stays 0: the path is never declared dead.
    table liveness_config {
        key = {
            key_path: exact @name("path_id");
        }
        actions = {
            set_dead_after;
            @defaultonly NoAction;
        }
        const default_action = NoAction();
        size = LIVENESS_CONFIG_TABLE_SIZE;
    }

    apply {
        // most packets (host traffic) carry neither: nothing to do
        if (hdr.path_tag.isValid() || hdr.packet_out.isValid()) {
            timestamp_t now = std_meta.ingress_global_timestamp;
            bool arrival = hdr.path_tag.isValid() && meta.from_path != 0 &&
                           meta.from_path <= MAX_PATHS;
            bool probe_tx = hdr.packet_out.isValid() && hdr.packet_out.path_id != 0 &&
                            hdr.packet_out.path_id <= MAX_PATHS &&
                            hdr.packet_out.dst_edge != 0 && hdr.packet_out.dst_edge <= MAX_EDGES;
            key_path = 0;
            cell = 0;
            config_dead_after = 0;
            if (arrival) {
                key_path = meta.from_path;
                cell = EDGE_PATH(hdr.path_tag.src_edge, meta.from_path);
            } else if (probe_tx) {
                key_path = hdr.packet_out.path_id;
                cell = EDGE_PATH(hdr.packet_out.dst_edge, hdr.packet_out.path_id);
            }
            if (arrival || probe_tx) {
                liveness_config.apply();
                path_dead_after.write(cell, config_dead_after);
                if (arrival) {
                    path_last_seen.write(cell, now);
                } else {
                    timestamp_t seen;
                    path_last_seen.read(seen, cell);
                    if (seen == 0) {
                        path_last_seen.write(cell, now);
                    }
                }
            }
        }
    }
}

#endif
