// IPv4 routing: a packet either goes to a host behind this switch or leaves
// over the paths towards another edge switch (the route names which).
#ifndef __ROUTING__
#define __ROUTING__

#include "headers.p4"
#include "sizes.p4"

// drop_reason: MpIngress's counter of drops by reason (validate.p4).
control Routing(inout headers_t hdr,
                inout local_metadata_t meta,
                inout standard_metadata_t std_meta)
               (counter<drop_reason_t> drop_reason) {

    // No route for the destination (counted by reason, validate.p4). `exit`
    // ends the ingress: a dropped packet reaches no later stage (an ACK
    // from a path would otherwise still feed rtt_monitor).
    action no_route() {
        drop_reason.count(DROP_NO_ROUTE);
        mark_to_drop(std_meta);
        exit;
    }

    // TTL 0 or 1: it would expire here. Ends the ingress like no_route.
    action ttl_expired() {
        drop_reason.count(DROP_TTL_EXPIRED);
        mark_to_drop(std_meta);
        exit;
    }

    // TTL decrement with an incremental checksum update (RFC 1624): the
    // 16-bit word holding the TTL drops by 0x0100, so the checksum rises by
    // 0x0100 in ones' complement arithmetic.
    action decrement_ttl() {
        hdr.ipv4.ttl = hdr.ipv4.ttl - 1;
        bit<17> sum = (bit<17>)hdr.ipv4.hdr_checksum + 17w0x0100;
        hdr.ipv4.hdr_checksum = sum[15:0] + (bit<16>)sum[16:16];
    }

    // Deliver to a directly attached host: rewrite the MAC addresses.
    action route_to_host(port_t port, mac_addr_t smac, mac_addr_t dmac) {
        decrement_ttl();
        std_meta.egress_spec = port;
        hdr.ethernet.src_addr = smac;
        hdr.ethernet.dst_addr = dmac;
    }

    // The destination is behind edge switch dst_edge: let path selection
    // choose the path (of this switch's paths to dst_edge) and the port.
    action route_to_paths(edge_id_t dst_edge) {
        decrement_ttl();
        meta.to_paths = true;
        meta.dst_edge = dst_edge;
    }

    // The destination is behind edge switch dst_edge and the prefix is
    // pinned to one path (e.g. a cross-traffic host): leave over path_id,
    // bypassing the weights; path_nexthop and path_tx treat the packet like
    // weighted traffic.
    action route_via_path(edge_id_t dst_edge, path_id_t path_id) {
        decrement_ttl();
        meta.to_paths = true;
        meta.dst_edge = dst_edge;
        meta.pinned = true;
        meta.path_id = path_id;
    }

    // Purpose: longest-prefix routing on the IPv4 destination. A pin is
    // usually more specific (e.g. a /32) than the route_to_paths prefix
    // covering it, so it wins by prefix length.
    // Miss: the packet is dropped (no default route), counted as NO_ROUTE.
    // route_via_path to a path id that is 0, above MAX_PATHS or has no
    // path_nexthop entry: the packet is dropped and counted at path_tx[0];
    // it never falls back to the weights or to another path.
    table ipv4_route {
        key = {
            hdr.ipv4.dst_addr: lpm @name("dst_addr");
        }
        actions = {
            route_to_host;
            route_to_paths;
            route_via_path;
            @defaultonly no_route;
        }
        const default_action = no_route();
        size = IPV4_ROUTE_TABLE_SIZE;
    }

    apply {
        // Every route action decrements the TTL (an action of its own
        // would be one more table apply per packet on BMv2).
        if (hdr.ipv4.ttl <= 1) {
            ttl_expired();
        } else {
            ipv4_route.apply();
        }
    }
}

#endif
