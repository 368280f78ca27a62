// Constants and type definitions shared by every stage of the pipeline.
#ifndef __DEFINES__
#define __DEFINES__

typedef bit<9>  port_t;
typedef bit<48> mac_addr_t;
typedef bit<32> ipv4_addr_t;
typedef bit<8>  path_id_t;   // 1..MAX_PATHS; 0 means "no path chosen"
// Edge switch ids 1..MAX_EDGES (sizes.p4); 0 means "none" (a switch without
// an edge id is a pure transit switch, edge_config.p4).
typedef bit<8>  edge_id_t;
typedef bit<8>  class_id_t;  // traffic class 0..MAX_CLASSES-1; 0 is the default class
typedef bit<16> bucket_t;    // weighted-hash bucket

const bit<16> ETHERTYPE_IPV4 = 0x0800;
// Path tag (headers.p4, path_tag_t): IEEE 802 local experimental ether type 1.
const bit<16> ETHERTYPE_PATH_TAG = 0x88B5;
const bit<8>  IP_PROTO_TCP   = 6;
const bit<8>  IP_PROTO_UDP   = 17;

// Number of paths between two edge switches the program can schedule over.
// The controller learns it from the P4Info (the number of bucket ends of
// set_weights).
// Set at compile time with -DMAX_PATHS=N (`make p4 P4_PATHS=8`); the code
// unrolled over the paths (path_select.p4, failover.p4, mvqs.p4) supports
// 4 and 8.
#ifndef MAX_PATHS
#define MAX_PATHS 4
#endif
#if MAX_PATHS != 4 && MAX_PATHS != 8
#error "MAX_PATHS must be 4 or 8"
#endif
// Per-path state is indexed by path id, index 0 never used: one edge's
// block of the per-(edge, path) registers and counters (EDGE_PATH, sizes.p4).
#define PATH_REGISTER_SIZE (MAX_PATHS + 1)

typedef bit<48> timestamp_t;  // µs of the local switch's clock (see path_tag_t)
typedef bit<32> path_seq_t;   // per-path sequence number; wraps

// Compile-time profiles: stages a deployment may leave out, each behind a
// define (`make p4 P4_PROFILE=...`, Makefile). Default: every stage on.
//   NO_FLOW_ORDER   per-flow order across paths (path_monitor.p4: flow_ooo,
//                   order_sig, order_ts); path_report_t.n_ooo stays 0.
//   NO_MPTCP        MPTCP pins and handshake reports (mptcp.p4) and the TCP
//                   option walk (parser.p4); the P4Info then has no
//                   subflow_pin table and no mptcp_* digests.
//   NO_RTT_MONITOR  passive RTT, retransmissions and bytes in flight
//                   (rtt_monitor.p4); the P4Info then has no rtt_config
//                   table, no rtt_monitor registers and no rtt_report_t.
//   NO_CONGESTION   congestion metrics, their feedback in the path tag and
//                   mode CA (congestion.p4, ca_select.p4); the tag keeps
//                   its feedback fields, always 0; the P4Info then has no
//                   ca_params table; a class in mode CA draws by the
//                   weights as in FLOWLET.
// src/mpsched/p4rt/pipeline/binding.py binds either way and tells which are present
// (Pipeline.features).

// Congestion metrics and their feedback (congestion.p4, path_tag_t.fb_*).
// Units of the tag's feedback fields; the data plane keeps µs internally.
#define FB_QDELAY_UNIT_SHIFT 4    // fb_qdelay in 16 µs units
#define FB_AGE_UNIT_SHIFT 12      // fb_age in 4096 µs units
const timestamp_t FB_MAX_AGE_US = 1044480;   // 255 age units: older is not sent
// Delivered bytes are counted over windows of RATE_WINDOW_US; fb_rate is
// the last whole window's count / FB_RATE_UNIT_BYTES (= 2^FB_RATE_UNIT_SHIFT).
// ca_select.p4's @ca_units annotation hands both to the controller.
#define RATE_WINDOW_US 16384
#define FB_RATE_UNIT_SHIFT 4
#define FB_RATE_UNIT_BYTES 16
// The minimum one-way delay a path's queueing delay is measured against is
// renewed by any lower sample, and restarts from the current sample when it
// is older than this (a route change, a restarted switch's clock).
const timestamp_t MIN_OWD_WINDOW_US = 4194304;

// Traffic classes (classify.p4): class_id_t values below MAX_CLASSES.
#define MAX_CLASSES 64

// How a traffic class places its packets onto the paths (path_select.p4),
// the `mode` of its path_weights entry. The controller reads the member
// values from the P4Info (type_info.serializable_enums).
enum bit<8> policy_mode_t {
    HASH = 0,     // per flow: 5-tuple hash over the weights (ECMP, WCMP)
    FLOWLET = 1,  // per flowlet: a new flowlet draws a path by the weights
    RR = 2,       // per packet: round robin over the paths with a weight
    VQ = 3,       // per flowlet: least MVQS time factor (mvqs.p4)
    CA = 4        // per flowlet: least live congestion cost (ca_select.p4)
}

// Why the ingress dropped a packet: the index of the drop_reason counter
// (validate.p4), which a controller reads over P4Runtime. This list is the
// one place the codes are defined: it makes the constants DROP_<NAME> below
// and the counter's structured annotation @drop_reasons[NAME = code, ...],
// from which src/mpsched/p4rt/pipeline/binding.py reads names and codes (P4Info). Codes
// are 1..DROP_REASON_COUNT; index 0 is never counted.
//   TRUNCATED             the frame ends inside a header the parser reads
//                         (Ethernet, path tag, IPv4, IPv4 options, TCP and
//                         its options, MPTCP, UDP) while the IPv4 header
//                         itself is valid as far as it was read
//   NOT_IPV4              neither IPv4 nor a path tag, or a path tag that
//                         carries something else (probes excepted)
//   IPV4_VERSION          RFC 1812 5.2.2: version is not 4
//   IPV4_IHL              RFC 1812 5.2.2: IHL below 5
//   IPV4_TOTAL_LEN_SHORT  RFC 1812 5.2.2: total length below IHL * 4
//   IPV4_TOTAL_LEN_LONG   RFC 1812 5.2.2: total length above the bytes
//                         received after Ethernet (and the tag)
//   IPV4_CHECKSUM         RFC 1812 5.2.2: bad header checksum (options
//                         included, checksums.p4)
//   TTL_EXPIRED           TTL 0 or 1 (routing.p4)
//   TAG_FROM_HOST         a path tag arriving on a host port
//   NO_ROUTE              no ipv4_route entry for the destination
//   PATH_BOUNCE           from a path, routed onto the paths again
//   NO_PATH               no path could be chosen, or the chosen one has no
//                         next hop (also counted at path_tx[0])
//   PARSER_ERROR          any other parser error (none is expected: the
//                         parser's bounds rule them out)
//   TAG_EDGE              a path tag whose source or destination edge is 0
//                         or above MAX_EDGES, or whose source edge is this
//                         switch's own (edge_config.p4)
//   TAG_PATH              a path tag whose path id is 0 or above MAX_PATHS
//   NO_TRANSIT            a path tag for another edge with no
//                         transit_nexthop entry (edge_config.p4)
// A packet is counted once, for the first reason that applies in this
// order: IPv4 version, IHL, total length short, total length long,
// checksum, truncated, not IPv4, other parser errors (validate.p4); then
// tag edge, tag path, no transit (edge_config.p4), tag from host, TTL, no
// route, path bounce, no path, as the stages meet them. A probe that ends
// at the far edge (liveness.p4) is no drop.
#define DROP_REASONS(R, SEP) \
    R(TRUNCATED, 1) SEP \
    R(NOT_IPV4, 2) SEP \
    R(IPV4_VERSION, 3) SEP \
    R(IPV4_IHL, 4) SEP \
    R(IPV4_TOTAL_LEN_SHORT, 5) SEP \
    R(IPV4_TOTAL_LEN_LONG, 6) SEP \
    R(IPV4_CHECKSUM, 7) SEP \
    R(TTL_EXPIRED, 8) SEP \
    R(TAG_FROM_HOST, 9) SEP \
    R(NO_ROUTE, 10) SEP \
    R(PATH_BOUNCE, 11) SEP \
    R(NO_PATH, 12) SEP \
    R(PARSER_ERROR, 13) SEP \
    R(TAG_EDGE, 14) SEP \
    R(TAG_PATH, 15) SEP \
    R(NO_TRANSIT, 16)
#define DROP_REASON_COUNT 16
typedef bit<8> drop_reason_t;
#define DROP_REASON_CONST(name, code) const drop_reason_t DROP_##name = code;
DROP_REASONS(DROP_REASON_CONST, )
// For the annotation: "NAME = code" pairs separated by commas.
#define DROP_REASON_KV(name, code) name = code
#define P4_COMMA ,

// Path tag flags (path_tag_t.flags).
const bit<8> PATH_FLAG_PROBE = 1;
// A copy of a connection's opening packet (TCP SYN, SYN-ACK) sent onto a
// second path (path_select.p4, syn_copy); the far edge delivers it without
// measuring it (ingress.p4).
const bit<8> PATH_FLAG_COPY = 2;
// The field list of the E2E clone that makes the copy: copy_path
// (headers.p4, local_metadata_t).
#define COPY_FIELD_LIST 1
// standard_metadata.instance_type as BMv2's simple_switch sets it: an
// original packet, and a clone made at the end of the egress (E2E).
const bit<32> PKT_INSTANCE_TYPE_NORMAL = 0;
const bit<32> PKT_INSTANCE_TYPE_EGRESS_CLONE = 2;
// The CPU port of simple_switch_grpc (--cpu-port): P4Runtime PacketOuts
// arrive on it.
#define CPU_PORT_NUMBER 255
const port_t CPU_PORT = CPU_PORT_NUMBER;
// The probe port: an Ethernet port to the controller (a veth in the testbed;
// on hardware, the switch's CPU Ethernet port), on which the controller
// writes frames laid out like a PacketOut (the packet_out header, then the
// probe frame). Probes sent there cost the controller one socket write
// instead of one P4Runtime stream message. Only the controller may be
// attached to it: what arrives there is parsed as from the CPU port.
#define PROBE_PORT_NUMBER 254
const port_t PROBE_PORT = PROBE_PORT_NUMBER;

// Receiver id of the per-path telemetry digest (path_report_t).
const bit<32> DIGEST_PATH_REPORT = 1;
// Receiver ids of the MPTCP digests (mptcp.p4; structs in headers.p4).
const bit<32> DIGEST_MPTCP_CAPABLE = 3;
const bit<32> DIGEST_MPTCP_JOIN = 4;
const bit<32> DIGEST_MPTCP_CLOSE = 5;

// TCP options (parser.p4). Options are walked on untagged SYNs and segments
// whose flags are ACK alone only (the MPTCP handshake), at most TCP_OPTIONS_MAX of them ahead of the MPTCP option.
// Linux puts at most 6 there (MSS, NOP, NOP, timestamps, NOP, window scale);
// a handshake with more is not reported and its subflows stay hashed. Each
// stack entry is a header instance that BMv2 marks invalid for every packet.
#define TCP_OPTIONS_MAX 8
const bit<8> TCP_OPTION_EOL = 0;
const bit<8> TCP_OPTION_NOP = 1;
const bit<8> TCP_OPTION_MPTCP = 30;
const bit<8> TCP_FLAG_FIN = 0x01;
const bit<8> TCP_FLAG_SYN = 0x02;
const bit<8> TCP_FLAG_RST = 0x04;
const bit<8> TCP_FLAG_ACK = 0x10;
// MPTCP option subtypes (RFC 8684 §3).
const bit<4> MPTCP_MP_CAPABLE = 0;
const bit<4> MPTCP_MP_JOIN = 1;

#endif
