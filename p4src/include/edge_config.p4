// The switch's role and the checks and forwarding of path tags before any
// edge stage (ingress.p4). One program serves both roles (docs/fabric.md):
// a switch with an edge id (switch_config) is an edge switch for the tags
// addressed to it and a transit switch for every other tag; a switch without
// one is a transit switch only. One program keeps the lab to one build and
// one P4Info; the transit path costs two table applies and a few conditions
// (`make bench-dpcost` measures a program's per-packet cost).
//
// Tag checks, for every tagged packet, in this order (drop reasons,
// defines.p4): an edge id outside 1..MAX_EDGES, or a source edge equal to
// this switch's own, is TAG_EDGE; a path id outside 1..MAX_PATHS is
// TAG_PATH. A valid tag for another edge is forwarded by transit_nexthop
// (NO_TRANSIT on a miss) and ends the ingress: no TTL decrement, no
// re-tagging, no counter or register of the edge stages (its sequence
// numbers, loss, liveness, feedback belong to the edges at both ends).
#ifndef __EDGE_CONFIG__
#define __EDGE_CONFIG__

#include "headers.p4"
#include "sizes.p4"

// drop_reason: MpIngress's counter of drops by reason (validate.p4).
control EdgeConfig(inout headers_t hdr,
                   inout local_metadata_t meta,
                   inout standard_metadata_t std_meta)
                  (counter<drop_reason_t> drop_reason) {

    action set_switch_config(edge_id_t edge_id) {
        meta.my_edge = edge_id;
    }

    // Purpose: the switch's edge id, set by the controller (one entry, every
    // port: the key is a wildcard; a keyed entry rather than the default
    // action, so that the controller writes, reads back and reconciles it
    // like its other entries).
    // Miss: no edge id (meta.my_edge stays 0): every tag is transit.
    table switch_config {
        key = {
            std_meta.ingress_port: ternary @name("ingress_port");
        }
        actions = {
            set_switch_config;
            @defaultonly NoAction;
        }
        const default_action = NoAction();
        size = SWITCH_CONFIG_TABLE_SIZE;
    }

    action drop_tag(drop_reason_t reason) {
        drop_reason.count(reason);
        mark_to_drop(std_meta);
        exit;
    }

    action transit(port_t port) {
        std_meta.egress_spec = port;
        exit;
    }

    action no_transit() {
        drop_tag(DROP_NO_TRANSIT);
    }

    // Purpose: forward a tag of another edge pair along its path (the next
    // hop of path path_id of the ordered pair (src_edge, dst_edge),
    // docs/fabric.md); the frame leaves as it came.
    // Miss: dropped, counted as NO_TRANSIT.
    table transit_nexthop {
        key = {
            hdr.path_tag.src_edge: exact @name("src_edge");
            hdr.path_tag.dst_edge: exact @name("dst_edge");
            hdr.path_tag.path_id: exact @name("path_id");
        }
        actions = {
            transit;
            @defaultonly no_transit;
        }
        const default_action = no_transit();
        size = TRANSIT_NEXTHOP_TABLE_SIZE;
    }

    apply {
        switch_config.apply();
        if (hdr.path_tag.isValid()) {
            if (hdr.path_tag.src_edge == 0 || hdr.path_tag.src_edge > MAX_EDGES ||
                    hdr.path_tag.dst_edge == 0 || hdr.path_tag.dst_edge > MAX_EDGES ||
                    hdr.path_tag.src_edge == meta.my_edge) {
                drop_tag(DROP_TAG_EDGE);
            } else if (hdr.path_tag.path_id == 0 || hdr.path_tag.path_id > MAX_PATHS) {
                drop_tag(DROP_TAG_PATH);
            } else if (hdr.path_tag.dst_edge != meta.my_edge) {
                transit_nexthop.apply();
            }
        }
    }
}

#endif
