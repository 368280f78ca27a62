// IPv4 header checksum (RFC 1812 5.2.2), verified for every IPv4 header, with
// or without options: the option bytes (IHL 6..15, a varbit of 4..40 bytes)
// are part of the summed field list; for IHL 5 the options header is invalid
// and adds nothing. A bad checksum sets checksum_error and the ingress drops
// the packet (validate.p4). After the TTL decrement the checksum is updated
// incrementally (RFC 1624, routing.p4), which keeps it right with or without
// options.
#ifndef __CHECKSUMS__
#define __CHECKSUMS__

#include "headers.p4"

control MpVerifyChecksum(inout headers_t hdr, inout local_metadata_t meta) {
    apply {
        verify_checksum(hdr.ipv4.isValid(),
            { hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.dscp, hdr.ipv4.ecn,
              hdr.ipv4.total_len, hdr.ipv4.identification, hdr.ipv4.flags,
              hdr.ipv4.frag_offset, hdr.ipv4.ttl, hdr.ipv4.protocol,
              hdr.ipv4.src_addr, hdr.ipv4.dst_addr, hdr.ipv4_options.options },
            hdr.ipv4.hdr_checksum, HashAlgorithm.csum16);
    }
}

control MpComputeChecksum(inout headers_t hdr, inout local_metadata_t meta) {
    apply { }
}

#endif
