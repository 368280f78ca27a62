// Traffic classification at the ingress edge: a packet that routing sends
// onto the paths (and that no pin placed itself) gets a class id from the
// DSCP, the IPv4 prefixes, the protocol and the L4 port ranges. The class
// selects the policy's path_weights entry (path_select.p4): weights, mode
// and flowlet gap.
#ifndef __CLASSIFY__
#define __CLASSIFY__

#include "headers.p4"
#include "sizes.p4"

control Classify(inout headers_t hdr,
                 inout local_metadata_t meta,
                 inout standard_metadata_t std_meta) {

    action set_class(class_id_t class_id) {
        meta.class_id = class_id;
    }

    // Purpose: the traffic class of a packet; the controller writes one
    // entry per operator-defined class (its priority decides overlaps).
    // L4 ports are 0 for non-TCP/UDP packets and non-first fragments.
    // Miss: NoAction, the packet stays in the default class 0.
    table traffic_class {
        key = {
            hdr.ipv4.dscp:     ternary @name("dscp");
            hdr.ipv4.src_addr: ternary @name("src_addr");
            hdr.ipv4.dst_addr: ternary @name("dst_addr");
            hdr.ipv4.protocol: ternary @name("protocol");
            meta.l4_src_port:  range   @name("src_port");
            meta.l4_dst_port:  range   @name("dst_port");
        }
        actions = {
            set_class;
            @defaultonly NoAction;
        }
        const default_action = NoAction();
        size = TRAFFIC_CLASS_TABLE_SIZE;
    }

    apply {
        traffic_class.apply();
    }
}

#endif
