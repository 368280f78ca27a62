// A plain-forwarding reference on the fabric: what an ECMP router does and no
// more, so that a fabric run under it (`mpsched run SCENARIO --program
// plain-ecmp`, docs/fabric-lab.md "A plain-forwarding reference") says what the
// scheduler's program costs over forwarding. It is a measuring stick, not a
// policy: no path tags, no registers, no digests, no controller at run time;
// the lab writes its entries once at start (src/mpsched/lab/plain_ecmp.py).
//
// Per packet: parse Ethernet and IPv4 (options kept), and of the first
// fragment the TCP or UDP ports; validate the header as RFC 1812 5.2.2 asks of
// a router (version 4, IHL at least 5, header checksum) and the TTL (RFC 1812
// 5.3.1: a packet whose TTL would reach 0 is not forwarded), dropping and
// counting by reason what fails; decrement the TTL and update the checksum
// incrementally (RFC 1624); longest-prefix match on the destination: either a
// host of this switch (its port and MACs) or the destination's edge switch,
// whose ECMP group (the next hops of this switch's equal-cost shortest paths
// towards it) a CRC16 of the 5-tuple, modulo the group's size, picks a member
// of: the member's port and MACs. One flow always takes one next hop at a
// switch (no reordering); flows spread over the group (RFC 2992).
//
// Every switch hashes the same 5-tuple with the same function: where a
// packet meets a second ECMP choice on its way (graphs with several stages
// of equal-cost hops; never in a leaf-spine, where only the source leaf
// chooses), the second choice is correlated with the first, as on routers
// without a per-device hash seed.
//
// The total length is not checked against IHL * 4 nor the frame (the full
// program does, p4src/include/validate.p4): the hosts of the lab send no
// such packets, and this program stays the least a router does.
#include <core.p4>
// The counter with an index type (counter<I>), as the full program's.
#define V1MODEL_VERSION 20200408
#include <v1model.p4>

typedef bit<9>  port_t;
typedef bit<48> mac_addr_t;
typedef bit<32> ipv4_addr_t;
typedef bit<8>  edge_id_t;   // an edge switch's id (docs/fabric.md): 1..255
typedef bit<8>  member_t;    // a member of an ECMP group: 0..size - 1

const bit<16> ETHERTYPE_IPV4 = 0x0800;
const bit<8>  IP_PROTO_TCP = 6;
const bit<8>  IP_PROTO_UDP = 17;

// Table sizes (the lab reads them back from the P4Info and refuses a fabric
// that needs more). A route per host of the switch and per subnet of every
// other edge; a next hop per (destination edge, member).
#define IPV4_ROUTE_TABLE_SIZE 1024
#define ECMP_NEXTHOP_TABLE_SIZE 1024

// Why a packet was dropped: the index of the drop_reason counter. This list
// is the one place the codes are defined: it makes the constants DROP_<NAME>
// and the counter's structured annotation @drop_reasons[NAME = code, ...],
// from which src/mpsched/p4rt/plain_ecmp.py reads names and codes (P4Info).
// Codes are 1..DROP_REASON_COUNT; index 0 is never counted. A packet counts
// once, for the first reason that applies in this order:
//   IPV4_VERSION   RFC 1812 5.2.2: version is not 4
//   IPV4_IHL       RFC 1812 5.2.2: IHL below 5
//   TRUNCATED      the frame ends inside a header the parser reads
//                  (Ethernet, IPv4, its options, the L4 ports)
//   NOT_IPV4       not IPv4 (e.g. ARP: the lab's hosts have static entries)
//   IPV4_CHECKSUM  RFC 1812 5.2.2: bad header checksum (options included)
//   TTL_EXPIRED    TTL 0 or 1 (RFC 1812 5.3.1)
//   NO_ROUTE       no ipv4_route entry for the destination
//   NO_NEXTHOP     no ecmp_nexthop entry for the member the hash chose
#define DROP_REASONS(R, SEP) \
    R(IPV4_VERSION, 1) SEP \
    R(IPV4_IHL, 2) SEP \
    R(TRUNCATED, 3) SEP \
    R(NOT_IPV4, 4) SEP \
    R(IPV4_CHECKSUM, 5) SEP \
    R(TTL_EXPIRED, 6) SEP \
    R(NO_ROUTE, 7) SEP \
    R(NO_NEXTHOP, 8)
#define DROP_REASON_COUNT 8
typedef bit<8> drop_reason_t;
#define DROP_REASON_CONST(name, code) const drop_reason_t DROP_##name = code;
DROP_REASONS(DROP_REASON_CONST, )
#define DROP_REASON_KV(name, code) name = code
#define P4_COMMA ,

error {
    IPv4IncorrectVersion,  // version field is not 4
    IPv4HeaderTooShort     // IHL below 5 words
}

header ethernet_t {
    mac_addr_t dst_addr;
    mac_addr_t src_addr;
    bit<16>    ether_type;
}

header ipv4_t {
    bit<4>      version;
    bit<4>      ihl;
    bit<8>      diffserv;
    bit<16>     total_len;
    bit<16>     identification;
    bit<3>      flags;
    bit<13>     frag_offset;
    bit<8>      ttl;
    bit<8>      protocol;
    bit<16>     hdr_checksum;
    ipv4_addr_t src_addr;
    ipv4_addr_t dst_addr;
}

// IHL 6..15: 4..40 option bytes, forwarded as they came.
header ipv4_options_t {
    varbit<320> options;
}

struct headers_t {
    ethernet_t     ethernet;
    ipv4_t         ipv4;
    ipv4_options_t ipv4_options;
}

// v1model zeroes the metadata of every packet: the ports stay 0 for a packet
// that is neither TCP nor UDP, or a fragment after the first.
struct metadata_t {
    bit<16>   l4_src_port;
    bit<16>   l4_dst_port;
    edge_id_t dst_edge;  // route_to_edge: the group ecmp_nexthop looks up
    member_t  member;    // route_to_edge: the member the hash chose
}

parser PlainParser(packet_in pkt, out headers_t hdr, inout metadata_t meta,
                   inout standard_metadata_t std_meta) {
    state start {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
            ETHERTYPE_IPV4: parse_ipv4;
            default: accept;
        }
    }

    // RFC 1812 5.2.2 as far as the header alone tells: version 4, IHL at
    // least 5 (select keys: no temporary; verify(false, e) ends the parse
    // with error e, which the ingress drops and counts).
    state parse_ipv4 {
        pkt.extract(hdr.ipv4);
        transition select(hdr.ipv4.version, hdr.ipv4.ihl) {
            (4, 5): parse_l4;
            (4, 0 .. 4): ipv4_header_too_short;
            (4, _): parse_ipv4_options;
            default: ipv4_incorrect_version;
        }
    }

    state ipv4_incorrect_version {
        verify(false, error.IPv4IncorrectVersion);
        transition accept;
    }

    state ipv4_header_too_short {
        verify(false, error.IPv4HeaderTooShort);
        transition accept;
    }

    state parse_ipv4_options {
        pkt.extract(hdr.ipv4_options, ((bit<32>)hdr.ipv4.ihl - 5) * 32);
        transition parse_l4;
    }

    // Only the first fragment carries the ports.
    state parse_l4 {
        transition select(hdr.ipv4.frag_offset, hdr.ipv4.protocol) {
            (0, IP_PROTO_TCP): parse_ports;
            (0, IP_PROTO_UDP): parse_ports;
            default: accept;
        }
    }

    // TCP and UDP both begin with the source and destination ports: read
    // them without extracting a header (nothing to emit again).
    state parse_ports {
        bit<32> ports = pkt.lookahead<bit<32>>();
        meta.l4_src_port = ports[31:16];
        meta.l4_dst_port = ports[15:0];
        transition accept;
    }
}

// The header checksum, options included; a bad one sets checksum_error.
control PlainVerify(inout headers_t hdr, inout metadata_t meta) {
    apply {
        verify_checksum(hdr.ipv4.isValid(),
            { hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.diffserv, hdr.ipv4.total_len,
              hdr.ipv4.identification, hdr.ipv4.flags, hdr.ipv4.frag_offset, hdr.ipv4.ttl,
              hdr.ipv4.protocol, hdr.ipv4.src_addr, hdr.ipv4.dst_addr,
              hdr.ipv4_options.options },
            hdr.ipv4.hdr_checksum, HashAlgorithm.csum16);
    }
}

control PlainIngress(inout headers_t hdr, inout metadata_t meta,
                     inout standard_metadata_t std_meta) {

    // Packets dropped, by reason (DROP_<NAME> above); the annotation lists
    // the reasons' names and codes for the P4Info.
    @drop_reasons[DROP_REASONS(DROP_REASON_KV, P4_COMMA)]
    counter<drop_reason_t>(DROP_REASON_COUNT + 1, CounterType.packets) drop_reason;

    action drop(drop_reason_t reason) {
        drop_reason.count(reason);
        mark_to_drop(std_meta);
    }

    // TTL decrement with an incremental checksum update (RFC 1624): the
    // 16-bit word holding the TTL drops by 0x0100, so the checksum rises by
    // 0x0100 in ones' complement arithmetic (as p4src/include/routing.p4).
    action decrement_ttl() {
        hdr.ipv4.ttl = hdr.ipv4.ttl - 1;
        bit<17> sum = (bit<17>)hdr.ipv4.hdr_checksum + 17w0x0100;
        hdr.ipv4.hdr_checksum = sum[15:0] + (bit<16>)sum[16:16];
    }

    // Deliver to a host of this switch: its port, the switch's router MAC
    // as the source and the host's MAC as the destination.
    action route_to_host(port_t port, mac_addr_t smac, mac_addr_t dmac) {
        decrement_ttl();
        std_meta.egress_spec = port;
        hdr.ethernet.src_addr = smac;
        hdr.ethernet.dst_addr = dmac;
    }

    // The destination is behind edge switch dst_edge: the flow's hash
    // modulo group_size picks a member of this switch's group towards it.
    // group_size must be at least 1 (BMv2 divides by it): the writer of the
    // entries checks it (src/mpsched/lab/plain_ecmp.py).
    action route_to_edge(edge_id_t dst_edge, member_t group_size) {
        decrement_ttl();
        meta.dst_edge = dst_edge;
        hash(meta.member, HashAlgorithm.crc16, (member_t)0,
             { hdr.ipv4.src_addr, hdr.ipv4.dst_addr, hdr.ipv4.protocol,
               meta.l4_src_port, meta.l4_dst_port },
             group_size);
    }

    action no_route() {
        drop(DROP_NO_ROUTE);
    }

    // Purpose: longest-prefix routing on the IPv4 destination: a host of
    // this switch (a /32 per address), or the subnets of another edge.
    // Miss: dropped, counted as NO_ROUTE (no default route).
    table ipv4_route {
        key = {
            hdr.ipv4.dst_addr: lpm @name("dst_addr");
        }
        actions = {
            route_to_host;
            route_to_edge;
            @defaultonly no_route;
        }
        const default_action = no_route();
        size = IPV4_ROUTE_TABLE_SIZE;
    }

    // A next hop: the port towards a neighbour switch, this switch's MAC as
    // the source and the neighbour's as the destination.
    action set_nexthop(port_t port, mac_addr_t smac, mac_addr_t dmac) {
        std_meta.egress_spec = port;
        hdr.ethernet.src_addr = smac;
        hdr.ethernet.dst_addr = dmac;
    }

    action no_nexthop() {
        drop(DROP_NO_NEXTHOP);
    }

    // Purpose: the members of each ECMP group (one group per destination
    // edge): member m of dst_edge's group, 0..group_size - 1 of its route.
    // Miss: dropped, counted as NO_NEXTHOP (a group smaller than its route
    // says, or none).
    table ecmp_nexthop {
        key = {
            meta.dst_edge: exact @name("dst_edge");
            meta.member: exact @name("member");
        }
        actions = {
            set_nexthop;
            @defaultonly no_nexthop;
        }
        const default_action = no_nexthop();
        size = ECMP_NEXTHOP_TABLE_SIZE;
    }

    apply {
        // The common case in one condition; the rest says why it failed.
        if (std_meta.parser_error == error.NoError && hdr.ipv4.isValid() &&
                std_meta.checksum_error == 0 && hdr.ipv4.ttl > 1) {
            switch (ipv4_route.apply().action_run) {
                route_to_edge: {
                    ecmp_nexthop.apply();
                }
            }
        } else if (std_meta.parser_error == error.IPv4IncorrectVersion) {
            drop(DROP_IPV4_VERSION);
        } else if (std_meta.parser_error == error.IPv4HeaderTooShort) {
            drop(DROP_IPV4_IHL);
        } else if (std_meta.parser_error != error.NoError) {
            drop(DROP_TRUNCATED);
        } else if (!hdr.ipv4.isValid()) {
            drop(DROP_NOT_IPV4);
        } else if (std_meta.checksum_error == 1) {
            drop(DROP_IPV4_CHECKSUM);
        } else {
            drop(DROP_TTL_EXPIRED);
        }
    }
}

control PlainEgress(inout headers_t hdr, inout metadata_t meta,
                    inout standard_metadata_t std_meta) { apply { } }

// The checksum was updated with the TTL (decrement_ttl).
control PlainCompute(inout headers_t hdr, inout metadata_t meta) { apply { } }

control PlainDeparser(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.ipv4);
        pkt.emit(hdr.ipv4_options);
    }
}

V1Switch(PlainParser(), PlainVerify(), PlainIngress(), PlainEgress(), PlainCompute(),
         PlainDeparser()) main;
