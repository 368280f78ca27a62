// Validation of every packet before any stage (ingress.p4). Every drop is
// counted by its reason (defines.p4, DROP_REASONS) in MpIngress's drop_reason
// counter (ingress.p4), lent to this stage and to the others that drop.
//
// RFC 1812 5.2.2: a router discards an IPv4 packet whose version is not 4,
// whose IHL is below 5, whose total length is below IHL * 4 or above the
// bytes received, or whose header checksum is wrong. The parser checks the
// first three (select keys, parser.p4), the verify-checksum control the
// checksum (checksums.p4, options included); the total length against the
// bytes received is checked here, from standard_metadata.packet_length
// (the whole frame as received, the controller header of a PacketOut
// included) minus what precedes the IPv4 header: Ethernet, the path tag if
// present, the PacketOut header if present. Bytes beyond the total length
// (Ethernet padding) are allowed and forwarded as they are.
#ifndef __VALIDATE__
#define __VALIDATE__

#include "headers.p4"

const bit<32> ETHERNET_BYTES = 14;
const bit<32> PATH_TAG_BYTES = 24;
const bit<32> PACKET_OUT_BYTES = 2;

// The IPv4 total length claims more bytes than the frame has after the
// headers in front of it (of `hdr` and `std_meta` where it is used). An
// expression, not a local: p4c would make a local a metadata field, which
// BMv2 resets for every packet.
#define IPV4_TOTAL_LEN_BEYOND_FRAME \
    ((bit<32>)hdr.ipv4.total_len + ETHERNET_BYTES + \
     (hdr.path_tag.isValid() ? PATH_TAG_BYTES : 32w0) + \
     (hdr.packet_out.isValid() ? PACKET_OUT_BYTES : 32w0) > std_meta.packet_length)

// Runs only for a packet the ingress found invalid (ingress.p4): counts it
// once, for the first reason that applies (the order of defines.p4), and
// drops it.
control Validate(in headers_t hdr, inout standard_metadata_t std_meta)
                (counter<drop_reason_t> drop_reason) {
    apply {
        if (std_meta.parser_error == error.IPv4IncorrectVersion) {
            drop_reason.count(DROP_IPV4_VERSION);
        } else if (std_meta.parser_error == error.IPv4HeaderTooShort) {
            drop_reason.count(DROP_IPV4_IHL);
        } else if (std_meta.parser_error == error.IPv4TotalLengthTooShort) {
            drop_reason.count(DROP_IPV4_TOTAL_LEN_SHORT);
        } else if (hdr.ipv4.isValid() && IPV4_TOTAL_LEN_BEYOND_FRAME) {
            drop_reason.count(DROP_IPV4_TOTAL_LEN_LONG);
        } else if (std_meta.checksum_error == 1) {
            drop_reason.count(DROP_IPV4_CHECKSUM);
        } else if (std_meta.parser_error == error.PacketTooShort) {
            drop_reason.count(DROP_TRUNCATED);
        } else if (std_meta.parser_error == error.NoError ||
                   std_meta.parser_error == error.PathTagNotIPv4) {
            drop_reason.count(DROP_NOT_IPV4);
        } else {
            drop_reason.count(DROP_PARSER_ERROR);
        }
        mark_to_drop(std_meta);
    }
}

#endif
