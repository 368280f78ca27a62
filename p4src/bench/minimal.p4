// The reference for `make bench-dataplane`: the least a useful P4 switch does.
// Parse Ethernet, look the ingress port up in one exact-match table, forward.
// Its entries are constant (port 1 <-> port 2), so it needs no control plane.
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dst_addr;
    bit<48> src_addr;
    bit<16> ether_type;
}

struct headers_t {
    ethernet_t ethernet;
}

struct metadata_t { }

parser MinParser(packet_in pkt, out headers_t hdr, inout metadata_t meta,
                 inout standard_metadata_t std_meta) {
    state start {
        pkt.extract(hdr.ethernet);
        transition accept;
    }
}

control MinVerify(inout headers_t hdr, inout metadata_t meta) { apply { } }

control MinIngress(inout headers_t hdr, inout metadata_t meta,
                   inout standard_metadata_t std_meta) {
    action forward(bit<9> port) {
        std_meta.egress_spec = port;
    }
    action drop() {
        mark_to_drop(std_meta);
    }
    // Port-to-port forwarding; any other port: drop.
    table port_fwd {
        key = { std_meta.ingress_port : exact @name("ingress_port"); }
        actions = { forward; drop; }
        const default_action = drop();
        const entries = {
            1 : forward(2);
            2 : forward(1);
        }
    }
    apply { port_fwd.apply(); }
}

control MinEgress(inout headers_t hdr, inout metadata_t meta,
                  inout standard_metadata_t std_meta) { apply { } }

control MinCompute(inout headers_t hdr, inout metadata_t meta) { apply { } }

control MinDeparser(packet_out pkt, in headers_t hdr) {
    apply { pkt.emit(hdr.ethernet); }
}

V1Switch(MinParser(), MinVerify(), MinIngress(), MinEgress(), MinCompute(), MinDeparser()) main;
