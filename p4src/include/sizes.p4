// Table sizes. The controller reads them back from the P4Info.
#ifndef __SIZES__
#define __SIZES__

// Edge switches a fabric may have (docs/fabric.md): edge ids are 1..MAX_EDGES
// (edge_id_t, defines.p4), carried in the path tag (src_edge, dst_edge).
// Per-(edge, path) state is indexed peer_edge * PATH_REGISTER_SIZE + path_id
// (EDGE_PATH_REGISTER_SIZE cells; index 0 of each edge's block unused), a
// cell of type edge_path_t: 8 bits while (MAX_EDGES + 1) * (MAX_PATHS + 1)
// <= 256 (the default build, 8 edges: its per-packet work is that of 8-bit
// fields), 16 bits beyond (`make p4-scale`, 64 edges). Each such register of
// W-bit cells costs (MAX_EDGES + 1) * (MAX_PATHS + 1) * W/8 bytes, 45 cells
// with 4 paths (180 bytes at 32 bits, 270 at 48) and 81 cells with 8 paths
// (324 and 486 bytes). The counters path_tx, path_rx (packets and bytes:
// BMv2 keeps two 64-bit words per cell, 720 or 1296 bytes each) and
// probe_skipped (packets) are per (edge, path) too, and so is the RTT
// monitor's per-path state (four registers of 32 and 48 bits).
// Liveness (liveness.p4) keeps EDGE_PATH_SPACE cells per register (every
// EDGE_PATH value of any edge_id_t and path 0..MAX_PATHS, so that no index
// needs a bound check): two of 48 bits (1.5 KB each at 8 bits, 7.5 KB with 4
// paths at 16), and a bit per edge. The RTT monitor's slots name their
// flow's cell and their sample's cell, path id and edge: four registers of
// RTT_SLOTS (below) cells, 4 KB each with 4096 slots at 8 bits (the two
// cells' 8 KB at 16). The feedback's rotation (congestion.p4) keeps an 8-bit
// cell per (edge, path) and one per edge. SYN copies (path_select.p4) leave
// through a clone session per (peer edge, path) with a next hop, id
// EDGE_PATH(edge, path): at most MAX_EDGES x MAX_PATHS sessions (32 by
// default), one replica each, held by the switch's replication engine, not in
// the program's registers.
#ifndef MAX_EDGES
#define MAX_EDGES 8
#endif
#define EDGE_PATH_REGISTER_SIZE ((MAX_EDGES + 1) * PATH_REGISTER_SIZE)
#if (MAX_EDGES + 1) * (MAX_PATHS + 1) <= 256
typedef bit<8> edge_path_t;
#define EDGE_PATH_SPACE 256
#else
typedef bit<16> edge_path_t;
#define EDGE_PATH_SPACE (256 * PATH_REGISTER_SIZE)
#endif
// The cell of path path_id of edge edge (edge_id_t and path_id_t expressions).
#define EDGE_PATH(edge, path) \
    ((edge_path_t)(edge) * (edge_path_t)PATH_REGISTER_SIZE + (edge_path_t)(path))
// Per-(edge, class) state (path_select.p4's round-robin turn): its cells.
#define RR_CELLS ((MAX_EDGES + 1) * MAX_CLASSES)
#define RR_CELL(edge, cls) ((bit<16>)(edge) * MAX_CLASSES + (bit<16>)(cls))

// The switch's own configuration: one entry (edge_config.p4).
#define SWITCH_CONFIG_TABLE_SIZE 1
#define IPV4_ROUTE_TABLE_SIZE   1024
// Per (destination edge, class): path_weights, mvqs_params, ca_params.
#define PATH_WEIGHTS_TABLE_SIZE (MAX_EDGES * MAX_CLASSES)
// One next hop per (destination edge, path).
#define PATH_NEXTHOP_TABLE_SIZE (MAX_EDGES * MAX_PATHS)
// One next hop per (source edge, destination edge, path) crossing a transit
// switch (edge_config.p4).
#define TRANSIT_NEXTHOP_TABLE_SIZE (MAX_EDGES * MAX_EDGES * MAX_PATHS)
#define PATH_INGRESS_TABLE_SIZE 64
// Report intervals per (peer edge, path): report_config (path_monitor.p4), rtt_config.
#define REPORT_CONFIG_TABLE_SIZE (MAX_EDGES * MAX_PATHS)
// RTT/retransmission flow slots of the ingress edge (rtt_monitor.p4).
#define RTT_SLOTS 4096
#define RTT_CONFIG_TABLE_SIZE (MAX_EDGES * MAX_PATHS)
// Liveness's dead-after interval per (peer edge, path) (liveness.p4).
#define LIVENESS_CONFIG_TABLE_SIZE (MAX_EDGES * MAX_PATHS)
// Traffic classifier entries (classify.p4).
#define TRAFFIC_CLASS_TABLE_SIZE 256
// Flowlet slots (path_select.p4): flows hash into them; two flows sharing a
// slot share its flowlet state.
#define FLOWLET_SLOTS 8192
#define MVQS_PARAMS_TABLE_SIZE (MAX_EDGES * MAX_CLASSES)
#define CA_PARAMS_TABLE_SIZE (MAX_EDGES * MAX_CLASSES)
// Per-flow order slots of the egress edge (path_monitor.p4).
#define FLOW_ORDER_SLOTS 4096
// Per-port transmit counters (port_counters.p4): ports 0..63, each two
// 64-bit words in BMv2 (1 KB). A fabric switch has a port per host and per
// link (docs/fabric.md "Ports and next hops").
#define PORT_COUNTER_SIZE 64
// Pinned MPTCP subflows, one entry per subflow and direction (mptcp.p4).
#define SUBFLOW_PIN_TABLE_SIZE 1024

#endif
