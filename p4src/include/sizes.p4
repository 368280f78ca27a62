// Table sizes. The controller reads them back from the P4Info.
#ifndef __SIZES__
#define __SIZES__

#define IPV4_ROUTE_TABLE_SIZE   1024
#define PATH_WEIGHTS_TABLE_SIZE MAX_CLASSES
#define PATH_NEXTHOP_TABLE_SIZE MAX_PATHS
#define PATH_INGRESS_TABLE_SIZE 64
#define REPORT_CONFIG_TABLE_SIZE MAX_PATHS
// RTT/retransmission flow slots of the ingress edge (rtt_monitor.p4).
#define RTT_SLOTS 4096
#define RTT_CONFIG_TABLE_SIZE MAX_PATHS
#define LIVENESS_CONFIG_TABLE_SIZE MAX_PATHS
// Traffic classifier entries (classify.p4).
#define TRAFFIC_CLASS_TABLE_SIZE 256
// Flowlet slots (path_select.p4): flows hash into them; two flows sharing a
// slot share its flowlet state.
#define FLOWLET_SLOTS 8192
#define MVQS_PARAMS_TABLE_SIZE MAX_CLASSES
#define CA_PARAMS_TABLE_SIZE MAX_CLASSES
// Per-flow order slots of the egress edge (path_monitor.p4).
#define FLOW_ORDER_SLOTS 4096
// Pinned MPTCP subflows, one entry per subflow and direction (mptcp.p4).
#define SUBFLOW_PIN_TABLE_SIZE 1024

#endif
