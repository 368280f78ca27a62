// Packet headers and the metadata carried through the pipeline.
#ifndef __HEADERS__
#define __HEADERS__

#include "defines.p4"

// Parser errors beyond core.p4's; a packet that raises one is dropped.
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
    bit<6>      dscp;
    bit<2>      ecn;
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

// IPv4 options (0..40 bytes), carried through unchanged.
header ipv4_options_t {
    varbit<320> options;
}

header tcp_t {
    bit<16> src_port;
    bit<16> dst_port;
    bit<32> seq_no;
    bit<32> ack_no;
    bit<4>  data_offset;
    bit<4>  res;
    bit<8>  flags;
    bit<16> window;
    bit<16> checksum;
    bit<16> urgent_ptr;
}

header udp_t {
    bit<16> src_port;
    bit<16> dst_port;
    bit<16> len;
    bit<16> checksum;
}

struct headers_t {
    ethernet_t     ethernet;
    ipv4_t         ipv4;
    ipv4_options_t ipv4_options;
    tcp_t          tcp;
    udp_t          udp;
}

struct local_metadata_t {
    bit<16>    l4_src_port;  // 0 for non-TCP/UDP packets and non-first fragments
    bit<16>    l4_dst_port;
    bool       to_paths;     // the route says: leave over one of the paths
    bool       pinned;       // the route fixed path_id itself (no weighted choice)
    class_id_t class_id;     // traffic class (0 until classification exists)
    bucket_t   bucket;       // weighted-hash bucket of the flow
    path_id_t  path_id;      // chosen path (0: none)
    path_id_t  from_path;    // path the packet arrived on (0: not from a path)
}

#endif
