// Packet headers and the metadata carried through the pipeline.
#ifndef __HEADERS__
#define __HEADERS__

#include "defines.p4"
#include "sizes.p4"

// Parser errors beyond core.p4's; a packet that raises one is dropped.
error {
    IPv4IncorrectVersion,  // version field is not 4
    IPv4HeaderTooShort,    // IHL below 5 words
    IPv4TotalLengthTooShort, // total length below the header's IHL * 4 bytes
    PathTagNotIPv4         // a path tag whose next_type is not IPv4
                           // (0 is allowed on probes: flags has PATH_FLAG_PROBE)
}

// Controller packet-out header (P4Runtime PacketOut metadata): a probe the
// switch agent asks this switch to send onto path path_id (liveness.p4).
// It comes from the CPU port (a PacketOut) or, as the first bytes of the
// frame, from the probe port; @ports gives the controller both numbers.
@controller_header("packet_out")
@ports[CPU_PORT = CPU_PORT_NUMBER, PROBE_PORT = PROBE_PORT_NUMBER]
header packet_out_t {
    path_id_t path_id;
    edge_id_t dst_edge;  // the edge at the far end of the path (its tag's dst_edge)
}

header ethernet_t {
    mac_addr_t dst_addr;
    mac_addr_t src_addr;
    bit<16>    ether_type;
}

// Path tag, 24 bytes between Ethernet and IPv4 (ethernet.ether_type is
// ETHERTYPE_PATH_TAG). The ingress edge switch pushes it on every packet it
// places onto a path (weighted or pinned); transit switches forward it by
// (src_edge, dst_edge, path_id) untouched (edge_config.p4); the egress edge
// switch (dst_edge) measures the path with it and removes it, so hosts never
// see it. Path links need an MTU 24 bytes above the hosts' (src/mpsched/topo/testbed.py
// uses 1600).
header path_tag_t {
    // Path the ingress edge placed the packet on (1..MAX_PATHS), numbered per
    // ordered pair (src_edge, dst_edge) (docs/fabric.md).
    path_id_t   path_id;
    // 0 for data packets; PATH_FLAG_PROBE for the controller's probes
    // (liveness.p4), which carry no IPv4 (next_type 0) and are dropped by
    // the egress edge after the liveness update.
    bit<8>      flags;
    // The edge that pushed the tag and the edge that removes it
    // (1..MAX_EDGES; anything else is dropped, edge_config.p4).
    edge_id_t   src_edge;
    edge_id_t   dst_edge;
    // Per-path sequence number from the ingress edge's register (0, 1, ...;
    // wraps at 2^32). Gaps at the egress edge are losses, late arrivals
    // reorderings.
    path_seq_t  seq;
    // The ingress edge's ingress_global_timestamp, in µs of ITS OWN clock.
    // BMv2's clock starts when the switch starts, so the clocks of two
    // switches differ by an unknown constant: rx_ts - tx_ts at the egress
    // is the one-way delay plus that offset. OWD is relative; the
    // controller uses differences between samples or subtracts the minimum.
    timestamp_t tx_ts;
    // Congestion feedback (congestion.p4): what the SENDING switch measured,
    // as the egress edge of the opposite direction, about path fb_path: the
    // path from this packet's receiver to its sender. A switch rotates over
    // the paths, one per tagged packet it sends (data or probe), and sends
    // only measurements younger than FB_MAX_AGE_US; the fields below are 0
    // when fb_path is 0.
    path_id_t   fb_path;    // the path measured; 0: no feedback in this tag
    bit<8>      fb_age;     // the measurement's age at sending, in FB_AGE_UNIT_US
    bit<16>     fb_qdelay;  // queueing delay (EWMA), in FB_QDELAY_UNIT_US, saturating
    bit<16>     fb_loss;    // loss (EWMA of lost packets per packet) x 65536, saturating
    bit<16>     fb_rate;    // bytes delivered in the last rate window / FB_RATE_UNIT_BYTES
    // Ether type of what follows the tag: ETHERTYPE_IPV4, or 0 on probes
    // (anything else is dropped by the parser).
    bit<16>     next_type;
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

// One TCP option ahead of the MPTCP option, kept so that the deparser emits
// it back in place (parser.p4 parses options only on untagged SYNs and
// segments whose flags are ACK alone).
header tcp_option_t {
    // Option kind (RFC 9293 §3.2): 1 is NOP (one byte, no length), 0 (EOL)
    // and 30 (MPTCP) end the walk and are never stored here.
    bit<8>      kind;
    // Everything after the kind byte: the length byte and the option data
    // (length - 1 bytes); empty for NOP.
    varbit<312> rest;
}

// The first four bytes of an MPTCP option (RFC 8684 §3, kind 30); what
// follows depends on the subtype and the length.
header mptcp_t {
    bit<8> kind;     // TCP_OPTION_MPTCP (30)
    bit<8> len;      // option length in bytes, kind and length bytes included
    bit<4> subtype;  // MPTCP_MP_CAPABLE (0), MPTCP_MP_JOIN (1), others not read
    // MP_CAPABLE: the version (1 for RFC 8684); MP_JOIN: 3 reserved bits and
    // the backup flag B.
    bit<4> bits;
    // MP_CAPABLE: the flags A..H; MP_JOIN: the sender's address id.
    bit<8> byte3;
}

// An MP_CAPABLE key (64 bits). In the SYN/ACK (length 12) it is the
// listener's key; the third ACK (length 20, or 22/24 with data) carries the
// initiator's key first and the listener's second. A key's token is the most
// significant 32 bits of its SHA-256 (RFC 8684 §3.2); the controller computes it.
header mptcp_key_t {
    bit<64> key;
}

// The rest of an MP_JOIN option on a SYN (length 12).
header mptcp_join_syn_t {
    bit<32> token;  // the receiver's token: names the connection the subflow joins
    bit<32> nonce;  // the sender's random number (not used by the switch)
}

header udp_t {
    bit<16> src_port;
    bit<16> dst_port;
    bit<16> len;
    bit<16> checksum;
}

struct headers_t {
    packet_out_t   packet_out;  // only on packets from the CPU port (never emitted)
    ethernet_t     ethernet;
    path_tag_t     path_tag;
    ipv4_t         ipv4;
    ipv4_options_t ipv4_options;
    tcp_t          tcp;
    // TCP options ahead of an MPTCP option (parser.p4: up to TCP_OPTIONS_MAX)
    tcp_option_t[TCP_OPTIONS_MAX] tcp_options;
    mptcp_t          mptcp;       // an MPTCP option, if one was found
    mptcp_key_t      mptcp_key_a; // MP_CAPABLE with keys: the first key
    mptcp_key_t      mptcp_key_b; // MP_CAPABLE of the third ACK: the second key
    mptcp_join_syn_t mptcp_join;  // MP_JOIN of a SYN
    udp_t          udp;
}

// Locals in headers. BMv2 writes 0 into every metadata field of every
// packet before parsing, and p4c puts every control's local variables and
// temporaries into metadata (its "scalars"). Each such field costs a field
// write per packet, whether the code that uses it runs or not (small next
// to a table apply; see docs/design.md, "What a packet costs on BMv2"). A header
// costs one validity bit instead. So a stage keeps its locals in a header
// variable of its own (`*_vars_t`): declared in the control, made valid
// and initialised before use, and never emitted, so hosts never see it.

// A flow's 5-tuple, as a header: hash() over it copies it into a header
// temporary instead of five metadata temporaries per call site (see above). The field order is the
// hash input order; it gives the same hash as the field list
// { src_addr, dst_addr, protocol, src_port, dst_port }.
header flow_key_t {
    ipv4_addr_t src_addr;
    ipv4_addr_t dst_addr;
    bit<8>      protocol;
    bit<16>     src_port;
    bit<16>     dst_port;
}

struct local_metadata_t {
    bit<16>    l4_src_port;  // 0 for non-TCP/UDP packets and non-first fragments
    bit<16>    l4_dst_port;
    bool       to_paths;     // the route says: leave over one of the paths
    bool       pinned;       // the route fixed path_id itself (no weighted choice)
    class_id_t class_id;     // traffic class (classify.p4; 0: default class)
    bucket_t   bucket;       // weighted-hash bucket of the flow
    path_id_t  path_id;      // chosen path (0: none)
    edge_path_t path_cell;    // its EDGE_PATH(dst_edge, path_id) cell, set with its next hop
                             // (path_select.p4: a field the RTT monitor indexes by)
    bool       from_fabric;  // arrived on a port facing the fabric (path_ingress.p4); a
                             // tagged arrival's path is the tag's (src_edge, path_id)
    bool       on_path;      // path_select found the chosen path's port: push a tag
    path_id_t  rtt_path_id;  // rtt_monitor: path of a completed RTT sample
    bit<8>     tcp_opt_left; // parser: option bytes of the TCP header not yet walked
    bit<8>     tcp_opt_count; // parser: options kept in hdr.tcp_options so far
    bool       subflow_pinned; // mptcp.p4: a subflow pin chose path_id
    edge_id_t  my_edge;      // this switch's edge id (edge_config.p4; 0: none, transit only)
    edge_id_t  dst_edge;     // the route's (or probe's) destination edge (0: none)
    // path_select.p4: the path a copy of this packet (a SYN of a class with
    // syn_copy) takes too, 0: none; the egress clones it there (ingress.p4)
    @field_list(COPY_FIELD_LIST)
    path_id_t  copy_path;
    bool       tag_copy;     // the arriving tag is a copy's (PATH_FLAG_COPY): delivered, not
                             // measured (ingress.p4)
}

// Per-path telemetry digest of the egress edge switch (receiver
// DIGEST_PATH_REPORT), sent for a tagged packet at most once per the path's
// report interval towards its source edge (report_config). Counters are cumulative since the
// pipeline was pushed and wrap; the controller takes differences.
struct path_report_t {
    path_id_t   path_id;     // path of the reporting packet (its tag)
    edge_id_t   src_edge;    // the edge that sent it (its tag): the path's ingress edge
    path_seq_t  seq;         // its tag's sequence number
    timestamp_t tx_ts;       // its tag's tx time stamp (ingress edge clock, µs)
    timestamp_t rx_ts;       // its arrival time (this switch's clock, µs)
    bit<32>     rx_packets;  // tagged packets received on this path
    bit<32>     rx_bytes;    // their bytes (whole frames, tag included)
    bit<32>     lost;        // sequence numbers skipped and not (yet) seen late
    bit<32>     reordered;   // packets that arrived after a higher sequence number
    bit<32>     flow_ooo;    // packets of this path overtaken within their flow (path_monitor.p4)
}

// MPTCP digests of the ingress edge (mptcp.p4), for packets from one of its
// hosts bound for the paths; addresses and ports are the packet's own
// (sender -> receiver). One struct per event: the digest's name tells the
// controller what happened.

// An MP_CAPABLE option with keys: on a SYN/ACK (one key: the listener's) or
// on the third ACK (two keys: the initiator's, then the listener's).
struct mptcp_capable_t {
    ipv4_addr_t src_addr;
    ipv4_addr_t dst_addr;
    bit<16>     src_port;
    bit<16>     dst_port;
    bit<8>      tcp_flags;  // SYN/ACK or ACK: which of the two it is
    bit<64>     key_a;      // the option's first key (the sender's)
    bit<64>     key_b;      // without SYN: the receiver's key; on the SYN/ACK undefined
}

// An MP_JOIN option on a SYN: a new subflow asks to join a connection.
struct mptcp_join_t {
    ipv4_addr_t src_addr;
    ipv4_addr_t dst_addr;
    bit<16>     src_port;
    bit<16>     dst_port;
    bit<32>     token;      // the receiver's token: names the connection
    bit<8>      addr_id;    // the sender's address id
}

// A FIN or RST of a pinned subflow (a subflow_pin hit).
struct mptcp_close_t {
    ipv4_addr_t src_addr;
    ipv4_addr_t dst_addr;
    bit<16>     src_port;
    bit<16>     dst_port;
    bit<8>      tcp_flags;  // FIN and/or RST (with ACK etc.)
}

#endif
