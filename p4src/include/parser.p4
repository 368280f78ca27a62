// Parser and deparser. The parser never loops: every header is bounded, and a
// malformed packet ends in reject (the ingress drops it on parser_error).
#ifndef __PARSER__
#define __PARSER__

#include "headers.p4"

parser MpParser(packet_in packet,
                out headers_t hdr,
                inout local_metadata_t meta,
                inout standard_metadata_t std_meta) {

    // The next TCP option's kind and length bytes (option walk). One local
    // for every state: p4c keeps each local in a metadata field of its own,
    // which BMv2 resets for every packet.
    bit<16> kind_len;

    // meta starts zeroed (v1model resets the user metadata for every packet),
    // so l4_src_port and l4_dst_port are 0 unless parse_tcp/parse_udp set them.
    state start {
        transition select(std_meta.ingress_port) {
            CPU_PORT: parse_packet_out;
            PROBE_PORT: parse_packet_out;
            default: parse_ethernet;
        }
    }

    // A P4Runtime PacketOut, or a frame from the probe port: the controller
    // header, then the probe frame.
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
    // not carry IPv4 ends in PathTagNotIPv4, unless it is a probe (PROBE
    // flag, next_type 0: nothing follows that the switch reads). Either way
    // the ingress drops it; a probe after its liveness update.
    // The checks are select keys on the header's own fields, not verify()
    // conditions: p4c computes a verify condition or a masked select key into
    // a temporary metadata field, which BMv2 writes (and resets) for every
    // packet.
    state parse_path_tag {
        packet.extract(hdr.path_tag);
        transition select(hdr.path_tag.flags, hdr.path_tag.next_type) {
            (PATH_FLAG_PROBE &&& PATH_FLAG_PROBE, 0): accept;
            (_, ETHERTYPE_IPV4): parse_ipv4;
            default: path_tag_not_ipv4;
        }
    }

    // verify(false, e) ends the parse in reject with error e (BMv2 takes no
    // explicit transition to reject).
    state path_tag_not_ipv4 {
        verify(false, error.PathTagNotIPv4);
        transition accept;
    }

    // RFC 1812 5.2.2 as far as the header alone tells: version 4, IHL at
    // least 5, total length at least IHL * 4 (one key tuple, so no
    // temporary; the common case, IHL 5 and total length >= 20, is the
    // second entry). A total length above the bytes received and the header
    // checksum are checked after the parse (validate.p4, checksums.p4).
    state parse_ipv4 {
        packet.extract(hdr.ipv4);
        transition select(hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.total_len) {
            (4, 5, 0 .. 19): ipv4_total_len_too_short;
            (4, 5, _): parse_ipv4_payload;
            (4, 0 .. 4, _): ipv4_header_too_short;
            (4, 6, 0 .. 23): ipv4_total_len_too_short;
            (4, 7, 0 .. 27): ipv4_total_len_too_short;
            (4, 8, 0 .. 31): ipv4_total_len_too_short;
            (4, 9, 0 .. 35): ipv4_total_len_too_short;
            (4, 10, 0 .. 39): ipv4_total_len_too_short;
            (4, 11, 0 .. 43): ipv4_total_len_too_short;
            (4, 12, 0 .. 47): ipv4_total_len_too_short;
            (4, 13, 0 .. 51): ipv4_total_len_too_short;
            (4, 14, 0 .. 55): ipv4_total_len_too_short;
            (4, 15, 0 .. 59): ipv4_total_len_too_short;
            (4, _, _): parse_ipv4_options;
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

    state ipv4_total_len_too_short {
        verify(false, error.IPv4TotalLengthTooShort);
        transition accept;
    }

    // IHL 6..15: 4..40 option bytes, into one varbit (its checksum covers
    // them, checksums.p4). Options past the end of the frame fail the
    // extract (PacketTooShort).
    state parse_ipv4_options {
        packet.extract(hdr.ipv4_options, ((bit<32>)hdr.ipv4.ihl - 5) * 32);
        transition parse_ipv4_payload;
    }

    // Only the first fragment (offset 0) carries the L4 header: a later
    // fragment is never parsed as TCP or UDP (its ports stay 0, no TCP
    // option is read from it, and the TCP stages skip it).
    state parse_ipv4_payload {
        transition select(hdr.ipv4.frag_offset, hdr.ipv4.protocol) {
            (0, IP_PROTO_TCP): parse_tcp;
            (0, IP_PROTO_UDP): parse_udp;
            default: accept;
        }
    }

    // TCP options are walked only where the MPTCP handshake lives: on SYNs
    // (SYN, SYN/ACK, MP_JOIN SYN) and on segments whose flags are ACK alone
    // (the third ACK carries MP_CAPABLE with both keys; so do most data
    // segments of a bulk sender, which the walk cannot tell apart), and only
    // untagged, as they come from a host: MPTCP's stage runs at the ingress
    // edge (ingress.p4), so a tagged segment (in transit, or arriving at its
    // egress edge) keeps its options as payload. Other segments too.
    state parse_tcp {
        packet.extract(hdr.tcp);
        meta.l4_src_port = hdr.tcp.src_port;
        meta.l4_dst_port = hdr.tcp.dst_port;
#ifdef NO_MPTCP
        transition accept;
#else
        transition select(hdr.path_tag.isValid(), hdr.tcp.data_offset, hdr.tcp.flags) {
            (true, _, _): accept;
            (_, 0 .. 5, _): accept;
            (_, _, TCP_FLAG_SYN &&& TCP_FLAG_SYN): parse_tcp_options_start;
            (_, _, TCP_FLAG_ACK): parse_tcp_options_start;
            default: accept;
        }
#endif
    }

    state parse_tcp_options_start {
        meta.tcp_opt_left = ((bit<8>)hdr.tcp.data_offset << 2) - 20;
        transition parse_tcp_option;
    }

    // The option walk. It ends (accept, the rest stays payload and is
    // emitted unchanged) at the end of the options, at EOL, at an MPTCP
    // option, after TCP_OPTIONS_MAX options, or at an option whose length is
    // below 2 or runs past the header; so it never loops for long, never
    // overflows the stack and never reads past the TCP header. A header
    // longer than the packet fails its extract (PacketTooShort): dropped.
    state parse_tcp_option {
        transition select(meta.tcp_opt_left, meta.tcp_opt_count) {
            (0, _): accept;
            (_, TCP_OPTIONS_MAX): accept;
            (1, _): parse_tcp_option_last;
            default: parse_tcp_option_kind;
        }
    }

    // At least two option bytes left: look at the kind and length.
    state parse_tcp_option_kind {
        kind_len = packet.lookahead<bit<16>>();
        transition select(kind_len[15:8]) {
            TCP_OPTION_EOL: accept;
            TCP_OPTION_NOP: parse_tcp_option_nop;
            TCP_OPTION_MPTCP: parse_mptcp_check;
            default: parse_tcp_option_check;
        }
    }

    // One option byte left (no lookahead past it: the segment may end
    // there): only a NOP fits.
    state parse_tcp_option_last {
        transition select(packet.lookahead<bit<8>>()) {
            TCP_OPTION_NOP: parse_tcp_option_nop;
            default: accept;
        }
    }

    state parse_tcp_option_nop {
        packet.extract(hdr.tcp_options.next, 0);
        meta.tcp_opt_left = meta.tcp_opt_left - 1;
        meta.tcp_opt_count = meta.tcp_opt_count + 1;
        transition parse_tcp_option;
    }

    state parse_tcp_option_check {
        kind_len = packet.lookahead<bit<16>>();
        transition select(kind_len[7:0] < 2 || kind_len[7:0] > meta.tcp_opt_left) {
            true: accept;
            default: parse_tcp_option_other;
        }
    }

    state parse_tcp_option_other {
        kind_len = packet.lookahead<bit<16>>();
        packet.extract(hdr.tcp_options.next, ((bit<32>)kind_len[7:0] - 1) * 8);
        meta.tcp_opt_left = meta.tcp_opt_left - kind_len[7:0];
        meta.tcp_opt_count = meta.tcp_opt_count + 1;
        transition parse_tcp_option;
    }

    // An MPTCP option shorter than its first four bytes, or running past
    // the header, is left unparsed.
    state parse_mptcp_check {
        kind_len = packet.lookahead<bit<16>>();
        transition select(kind_len[7:0] < 4 || kind_len[7:0] > meta.tcp_opt_left) {
            true: accept;
            default: parse_mptcp;
        }
    }

    // MP_CAPABLE of length 12 (SYN/ACK: one key) or 20..24 (third ACK: two
    // keys, with data the data-level length and checksum after them, left as
    // payload); MP_JOIN of length 12 (SYN: token and nonce). Any other
    // subtype or length: only the first four bytes are read.
    state parse_mptcp {
        packet.extract(hdr.mptcp);
        transition select(hdr.mptcp.subtype, hdr.mptcp.len) {
            (MPTCP_MP_CAPABLE, 12): parse_mptcp_key_a;
            (MPTCP_MP_CAPABLE, 20): parse_mptcp_keys;
            (MPTCP_MP_CAPABLE, 22): parse_mptcp_keys;
            (MPTCP_MP_CAPABLE, 24): parse_mptcp_keys;
            (MPTCP_MP_JOIN, 12): parse_mptcp_join;
            default: accept;
        }
    }

    state parse_mptcp_key_a {
        packet.extract(hdr.mptcp_key_a);
        transition accept;
    }

    state parse_mptcp_keys {
        packet.extract(hdr.mptcp_key_a);
        packet.extract(hdr.mptcp_key_b);
        transition accept;
    }

    state parse_mptcp_join {
        packet.extract(hdr.mptcp_join);
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
        packet.emit(hdr.tcp_options);
        packet.emit(hdr.mptcp);
        packet.emit(hdr.mptcp_key_a);
        packet.emit(hdr.mptcp_key_b);
        packet.emit(hdr.mptcp_join);
        packet.emit(hdr.udp);
    }
}

#endif
