// Parser and deparser. The parser never loops: every header is bounded, and a
// malformed packet ends in reject (the ingress drops it on parser_error).
#ifndef __PARSER__
#define __PARSER__

#include "headers.p4"

parser MpParser(packet_in packet,
                out headers_t hdr,
                inout local_metadata_t meta,
                inout standard_metadata_t std_meta) {

    state start {
        meta.l4_src_port = 0;
        meta.l4_dst_port = 0;
        transition select(std_meta.ingress_port) {
            CPU_PORT: parse_packet_out;
            default: parse_ethernet;
        }
    }

    // A P4Runtime PacketOut: the controller header, then the probe frame.
    state parse_packet_out {
        packet.extract(hdr.packet_out);
        transition parse_ethernet;
    }

    state parse_ethernet {
        packet.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
            ETHERTYPE_IPV4: parse_ipv4;
            ETHERTYPE_PATH_TAG: parse_path_tag;
            default: accept;
        }
    }

    // A truncated tag fails the extract (PacketTooShort); a tag that does
    // not carry IPv4 fails the verify, unless it is a probe (PROBE flag,
    // next_type 0: nothing follows that the switch reads). Either way the
    // ingress drops it; a probe after its liveness update.
    state parse_path_tag {
        packet.extract(hdr.path_tag);
        transition select(hdr.path_tag.flags & PATH_FLAG_PROBE, hdr.path_tag.next_type) {
            (PATH_FLAG_PROBE, 0): accept;
            default: parse_path_tag_ipv4;
        }
    }

    state parse_path_tag_ipv4 {
        verify(hdr.path_tag.next_type == ETHERTYPE_IPV4, error.PathTagNotIPv4);
        transition parse_ipv4;
    }

    state parse_ipv4 {
        packet.extract(hdr.ipv4);
        verify(hdr.ipv4.version == 4, error.IPv4IncorrectVersion);
        verify(hdr.ipv4.ihl >= 5, error.IPv4HeaderTooShort);
        transition select(hdr.ipv4.ihl) {
            5: parse_ipv4_payload;
            default: parse_ipv4_options;
        }
    }

    state parse_ipv4_options {
        packet.extract(hdr.ipv4_options, ((bit<32>)hdr.ipv4.ihl - 5) * 32);
        transition parse_ipv4_payload;
    }

    // Only the first fragment carries the L4 header.
    state parse_ipv4_payload {
        transition select(hdr.ipv4.frag_offset, hdr.ipv4.protocol) {
            (0, IP_PROTO_TCP): parse_tcp;
            (0, IP_PROTO_UDP): parse_udp;
            default: accept;
        }
    }

    state parse_tcp {
        packet.extract(hdr.tcp);
        meta.l4_src_port = hdr.tcp.src_port;
        meta.l4_dst_port = hdr.tcp.dst_port;
        transition accept;
    }

    state parse_udp {
        packet.extract(hdr.udp);
        meta.l4_src_port = hdr.udp.src_port;
        meta.l4_dst_port = hdr.udp.dst_port;
        transition accept;
    }
}

control MpDeparser(packet_out packet, in headers_t hdr) {
    apply {
        packet.emit(hdr.ethernet);
        packet.emit(hdr.path_tag);
        packet.emit(hdr.ipv4);
        packet.emit(hdr.ipv4_options);
        packet.emit(hdr.tcp);
        packet.emit(hdr.udp);
    }
}

#endif
