// Path liveness at each edge switch, for local fast failover (path_select.p4).
//
// A path p towards edge e is alive while now - last_seen[e, p] <=
// dead_after[e, p], where last_seen is the latest sign that p delivered to
// e (µs, this switch's clock) and dead_after the liveness_config value of
// (e, p). dead_after == 0 means "no liveness configured": the path is never
// declared dead (a switch without liveness_config entries behaves as before).
// dead_after is per peer edge because the controller probes each pair of
// edges at its own rate (docs/fabric.md, "Liveness"): every probe interval
// while the pair carries traffic, seldom while it is idle, and a path's
// dead_after must follow the rate at which e's feedback about it comes.
//
// The sign of life (docs/fabric.md, "Liveness"). In a fabric path p of
// a -> e need not be the reverse of e -> a's path p, so what arrives from e
// on p says nothing about a -> e's p. What does is e's feedback: every tag e
// sends to a may carry the metrics of one of a -> e's paths (fb_path, rotating,
// congestion.p4) with their age fb_age, and e measures a path with every
// tagged packet it receives on it (data or probe). So a tag from e with
// fb_path p says "p delivered to e fb_age ago": last_seen[e, p] becomes
// (arrival - fb_age) if that is later. From e's first feedback on (about any
// path), every path towards e is judged by e's feedback only: a path e never
// measured gets none and dies dead_after after its first probe. Until then
// (a peer built without the congestion stage sends none, nor does any peer
// before it measured a path), a tagged packet (data or probe) arriving from
// e on p refreshes last_seen[e, p], as on the testbed, where the two
// directions of a path share its links. The feedback's time is later than the delivery by the
// reverse one-way delay and up to one age unit (FB_AGE_UNIT_SHIFT), and a
// path's feedback comes with one in k of the tags e sends here on each of
// its paths (k: the highest path id e measured from here; congestion.p4):
// with e's probes alone, every probe interval while e's paths all work,
// every k intervals over one surviving path. dead_after must exceed that
// plus the delay (docs/fabric.md, "Liveness").
//
// The switch agent keeps idle paths measured with probes: a P4Runtime
// PacketOut with the packet_out header (path id, destination edge) is sent
// onto that path with a path tag whose flags carry PATH_FLAG_PROBE
// (ingress.p4 routes it like a pinned packet: next hop, path_tx, sequence
// number, tag push). Sending a probe on a configured path also arms its
// timer if nothing has been seen of it yet, so a path that is dead from the
// start is declared dead dead_after µs after the first probe.
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

// Liveness's locals for the feedback (headers.p4, "Locals in headers").
header liveness_vars_t {
    timestamp_t delivered;  // when the peer says fb_path last delivered (0: unknown)
    timestamp_t seen;       // that cell's last sign of life so far
    edge_path_t fb_cell;    // EDGE_PATH(src_edge, fb_path); 0: no feedback in the tag
    bit<1>      fed;        // the paths towards the arrival's source edge are judged by feedback
    bit<7>      pad;        // BMv2 wants headers of whole bytes
}

// path_last_seen, path_dead_after: per (peer edge, path), by EDGE_PATH(peer
// edge, path id) (sizes.p4): the latest sign of life of the path towards the
// peer (above) and the dead-after interval in force (0: never dead). A probe
// sent towards e (packet_out.dst_edge) arms the cell of e. EDGE_PATH_SPACE
// cells (sizes.p4: every EDGE_PATH value); only cells of edges 1..MAX_EDGES and
// paths 1..MAX_PATHS are ever written.
control Liveness(inout headers_t hdr,
                 inout local_metadata_t meta,
                 inout standard_metadata_t std_meta)
                (register<timestamp_t, edge_path_t> path_last_seen,
                 register<timestamp_t, edge_path_t> path_dead_after) {

    // Per peer edge: 1 once it fed back; from then on only its feedback
    // refreshes last_seen of the paths towards it.
    register<bit<1>, edge_id_t>(MAX_EDGES + 1) peer_fed_back;

    // Set where used (apply), not here: an initialiser runs for every packet.
    edge_id_t key_peer;  // the peer edge (liveness_config's key)
    path_id_t key_path;  // the path id (liveness_config's key)
    edge_path_t cell;    // its registers' cell: EDGE_PATH(peer edge, path id)
    timestamp_t config_dead_after;
    liveness_vars_t v;

    // Declare the path dead dead_after_us µs after its last sign of life.
    action set_dead_after(timestamp_t dead_after_us) {
        config_dead_after = dead_after_us;
    }

    // Purpose: the dead-after interval of each path towards each peer edge (by
    // peer edge and path id: the arrival's source edge, a probe's destination).
    // Miss: NoAction, dead_after stays 0: the path is never declared dead.
    table liveness_config {
        key = {
            key_peer: exact @name("peer_edge");
            key_path: exact @name("path_id");
        }
        actions = {
            set_dead_after;
            @defaultonly NoAction;
        }
        const default_action = NoAction();
        size = LIVENESS_CONFIG_TABLE_SIZE;
    }

    // The cells are set in branches and used after them: p4c then reads them
    // as fields, where an index computed in the block of its use would be a
    // temporary metadata field per use (a field write per packet).
    apply {
        // most packets (host traffic) carry neither: nothing to do
        if (hdr.path_tag.isValid() || hdr.packet_out.isValid()) {
            timestamp_t now = std_meta.ingress_global_timestamp;
            // edge_config.p4 admitted a tag from the fabric: src_edge and
            // path_id in range, addressed to this edge
            bool arrival = hdr.path_tag.isValid() && meta.from_fabric;
            bool probe_tx = hdr.packet_out.isValid() && hdr.packet_out.path_id != 0 &&
                            hdr.packet_out.path_id <= MAX_PATHS &&
                            hdr.packet_out.dst_edge != 0 && hdr.packet_out.dst_edge <= MAX_EDGES;
            key_peer = 0;
            key_path = 0;
            cell = 0;
            config_dead_after = 0;
            v.setValid();
            v.fb_cell = 0;
            v.delivered = 0;
            if (arrival) {
                key_peer = hdr.path_tag.src_edge;
                key_path = hdr.path_tag.path_id;
                cell = EDGE_PATH(hdr.path_tag.src_edge, hdr.path_tag.path_id);
                if (hdr.path_tag.fb_path != 0 && hdr.path_tag.fb_path <= MAX_PATHS) {
                    // the peer's word on this switch's path fb_path to it
                    v.fb_cell = EDGE_PATH(hdr.path_tag.src_edge, hdr.path_tag.fb_path);
                    timestamp_t age = (timestamp_t)hdr.path_tag.fb_age << FB_AGE_UNIT_SHIFT;
                    // (an age beyond this switch's clock: a sign from before its start)
                    if (age < now) {
                        v.delivered = now - age;
                    }
                }
            } else if (probe_tx) {
                key_peer = hdr.packet_out.dst_edge;
                key_path = hdr.packet_out.path_id;
                cell = EDGE_PATH(hdr.packet_out.dst_edge, hdr.packet_out.path_id);
            }
            if (arrival || probe_tx) {
                liveness_config.apply();
                path_dead_after.write(cell, config_dead_after);
                if (arrival) {
                    peer_fed_back.read(v.fed, hdr.path_tag.src_edge);
                    if (v.fed == 0) {
                        path_last_seen.write(cell, now);
                    }
                    if (v.fb_cell != 0) {
                        peer_fed_back.write(hdr.path_tag.src_edge, 1);
                        path_last_seen.read(v.seen, v.fb_cell);
                        if (v.delivered > v.seen) {
                            path_last_seen.write(v.fb_cell, v.delivered);
                        }
                    }
                } else {
                    path_last_seen.read(v.seen, cell);
                    if (v.seen == 0) {
                        path_last_seen.write(cell, now);
                    }
                }
            }
        }
    }
}

#endif
