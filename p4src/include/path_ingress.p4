// Arrivals from the fabric at the egress edge: which ports face the fabric,
// and the arrivals counted by the tag's (source edge, path).
//
// In a fabric one uplink port carries the tags of many (source edge, path)
// pairs (a WAN's port carries several path ids of several sources), so a
// port names no path: the path of a tagged arrival is its tag's (src_edge,
// path_id), which edge_config.p4 has checked (1..MAX_EDGES, 1..MAX_PATHS,
// addressed to this edge). Every stage of the egress edge keys on that pair:
// path_rx here, liveness (liveness.p4), the measurement (path_monitor.p4),
// the RTT monitor's ACKs (rtt_monitor.p4 keys on the flow's own path).
// An untagged IPv4 packet from a fabric port is forwarded but not measured
// and not counted (no tag names its path): mixed deployments keep working.
#ifndef __PATH_INGRESS__
#define __PATH_INGRESS__

#include "headers.p4"
#include "sizes.p4"

control PathIngress(inout headers_t hdr,
                    inout local_metadata_t meta,
                    inout standard_metadata_t std_meta) {

    // Tagged packets (and bytes) received from each (source edge, path), by
    // EDGE_PATH(src_edge, path_id) (sizes.p4); cells of edge 0 and path 0
    // stay 0.
    counter<edge_path_t>(EDGE_PATH_REGISTER_SIZE, CounterType.packets_and_bytes) path_rx;

    action mark_fabric_port() {
        meta.from_fabric = true;
    }

    // Purpose: mark the ports that face the fabric (the paths).
    // Miss: the port faces a host; nothing to do.
    table path_ingress {
        key = {
            std_meta.ingress_port: exact @name("ingress_port");
        }
        actions = {
            mark_fabric_port;
            @defaultonly NoAction;
        }
        const default_action = NoAction();
        size = PATH_INGRESS_TABLE_SIZE;
    }

    apply {
        path_ingress.apply();
        if (meta.from_fabric && hdr.path_tag.isValid()) {
            // edge_config.p4 admitted the tag: src_edge 1..MAX_EDGES, path_id 1..MAX_PATHS
            path_rx.count(EDGE_PATH(hdr.path_tag.src_edge, hdr.path_tag.path_id));
        }
    }
}

#endif
