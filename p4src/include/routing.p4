// IPv4 routing: a packet either goes to a host behind this switch or leaves
// over the paths towards the other edge switch.
#ifndef __ROUTING__
#define __ROUTING__

#include "headers.p4"
#include "sizes.p4"

control Routing(inout headers_t hdr,
                inout local_metadata_t meta,
                inout standard_metadata_t std_meta) {

    action drop() {
        mark_to_drop(std_meta);
    }

    // Deliver to a directly attached host: rewrite the MAC addresses.
    action route_to_host(port_t port, mac_addr_t smac, mac_addr_t dmac) {
        std_meta.egress_spec = port;
        hdr.ethernet.src_addr = smac;
        hdr.ethernet.dst_addr = dmac;
    }

    // The destination is behind the other edge switch: let path selection
    // choose the egress port.
    action route_to_paths() {
        meta.to_paths = true;
    }

    // Purpose: longest-prefix routing on the IPv4 destination.
    // Miss: the packet is dropped (no default route).
    table ipv4_route {
        key = {
            hdr.ipv4.dst_addr: lpm;
        }
        actions = {
            route_to_host;
            route_to_paths;
            @defaultonly drop;
        }
        const default_action = drop();
        size = IPV4_ROUTE_TABLE_SIZE;
    }

    // TTL decrement with an incremental checksum update (RFC 1624): the
    // 16-bit word holding the TTL drops by 0x0100, so the checksum rises by
    // 0x0100 in ones' complement arithmetic.
    action decrement_ttl() {
        hdr.ipv4.ttl = hdr.ipv4.ttl - 1;
        bit<17> sum = (bit<17>)hdr.ipv4.hdr_checksum + 17w0x0100;
        hdr.ipv4.hdr_checksum = sum[15:0] + (bit<16>)sum[16:16];
    }

    apply {
        if (hdr.ipv4.ttl <= 1) {
            drop();
            return;
        }
        if (ipv4_route.apply().hit) {
            decrement_ttl();
        }
    }
}

#endif
