"""The P4 program's names: its tables, actions, match keys, counters, registers, digests,
headers and special ports, as the controller writes and reads them.

This is the only place that names them; the package binds them to a P4Info
(binding.py), which checks every one against the compiled program.
"""

from __future__ import annotations

from mpsched.p4profiles import (
    FEATURE_CONGESTION,
    FEATURE_DEFINES,
    FEATURE_FLOW_ORDER,
    FEATURE_MPTCP,
    FEATURE_RTT_MONITOR,
)

# The switch's edge id and transit forwarding (p4src/include/edge_config.p4).
TABLE_SWITCH_CONFIG = "MpIngress.edge_config.switch_config"
ACTION_SET_SWITCH_CONFIG = "MpIngress.edge_config.set_switch_config"
TABLE_TRANSIT = "MpIngress.edge_config.transit_nexthop"
ACTION_TRANSIT = "MpIngress.edge_config.transit"
TRANSIT_KEYS = ("src_edge", "dst_edge", "path_id")
NEXTHOP_KEYS = ("dst_edge", "path_id")
CLASS_TABLE_KEYS = ("dst_edge", "class_id")  # path_weights, mvqs_params, ca_params
TABLE_ROUTE = "MpIngress.routing.ipv4_route"
ACTION_TO_HOST = "MpIngress.routing.route_to_host"
ACTION_TO_PATHS = "MpIngress.routing.route_to_paths"
ACTION_VIA_PATH = "MpIngress.routing.route_via_path"
TABLE_WEIGHTS = "MpIngress.path_select.path_weights"
ACTION_SET_WEIGHTS = "MpIngress.path_select.set_weights"
TABLE_NEXTHOP = "MpIngress.path_select.path_nexthop"
ACTION_SET_PATH_PORT = "MpIngress.path_select.set_path_port"
TABLE_PATH_INGRESS = "MpIngress.path_ingress.path_ingress"
ACTION_FABRIC_PORT = "MpIngress.path_ingress.mark_fabric_port"
# Per (peer edge, path), at Pipeline.edge_path_index(edge, path) (p4src/include/sizes.p4).
COUNTER_TX = "MpIngress.path_select.path_tx"
COUNTER_RX = "MpIngress.path_ingress.path_rx"
# Path telemetry (path tag push at the ingress edge, measurement at the egress edge).
TABLE_REPORT_CONFIG = "MpIngress.path_monitor.report_config"
REPORT_KEYS = ("peer_edge", "path_id")  # report_config and rtt_config: per (peer edge, path)
ACTION_SET_REPORT_INTERVAL = "MpIngress.path_monitor.set_report_interval"
# In MpIngress: the tag push writes it, the probe gate reads it (p4src/include/ingress.p4, State).
REGISTER_TX_SEQ = "MpIngress.tx_seq"
# The probe gate (probe_gate.p4): probes skipped on paths that carried the switch's traffic.
COUNTER_PROBE_SKIPPED = "MpIngress.probe_gate.probe_skipped"
REGISTER_PROBE_SEQ = "MpIngress.probe_gate.probe_seq"
REGISTERS_PATH_MONITOR = tuple(
    f"MpIngress.path_monitor.{name}"
    for name in ("rx_packets", "rx_bytes", "expected_seq", "lost", "reordered", "last_report_ts")
)
DIGEST_PATH_REPORT = "path_report_t"
# Passive RTT, retransmissions and bytes in flight at the ingress edge (rtt_monitor.p4).
TABLE_RTT_CONFIG = "MpIngress.rtt_monitor.rtt_config"
ACTION_SET_RTT_INTERVAL = "MpIngress.rtt_monitor.set_rtt_interval"
REGISTERS_RTT_MONITOR = tuple(
    f"MpIngress.rtt_monitor.{name}"
    for name in (
        "flow_sig",
        "flow_seq_end",
        "flow_ack",
        "flow_path",
        "sample_ack",
        "sample_ts",
        "sample_path",
        "path_retrans",
        "path_sent",
        "path_acked",
        "rtt_last_report_ts",
    )
)
DIGEST_RTT_REPORT = "rtt_report_t"
# Path tag on the wire (p4src/include/headers.p4): header type name (its size and fields
# are read from the BMv2 JSON, src/mpsched/p4rt/bmv2json.py) and ether type.
HEADER_PATH_TAG = "path_tag_t"
ETHERTYPE_PATH_TAG = 0x88B5
# Path liveness and probes (p4src/include/liveness.p4, failover.p4).
TABLE_LIVENESS_CONFIG = "MpIngress.liveness.liveness_config"
LIVENESS_KEYS = ("peer_edge", "path_id")  # dead_after per (peer edge, path)
ACTION_SET_DEAD_AFTER = "MpIngress.liveness.set_dead_after"
# In MpIngress: liveness writes them, path selection reads them.
REGISTERS_LIVENESS = ("MpIngress.path_last_seen", "MpIngress.path_dead_after")
# Traffic classes, flowlets, round robin and MVQS (classify.p4, path_select.p4, mvqs.p4).
TABLE_TRAFFIC_CLASS = "MpIngress.classify.traffic_class"
ACTION_SET_CLASS = "MpIngress.classify.set_class"
CLASS_KEYS = ("dscp", "src_addr", "dst_addr", "protocol", "src_port", "dst_port")
TABLE_MVQS = "MpIngress.path_select.mvqs.mvqs_params"
ACTION_SET_MVQS = "MpIngress.path_select.mvqs.set_mvqs"
MVQS_PARAMS = ("pad_us", "bdp_bytes", "us_per_kbyte", "drain_1024us")  # each _1.._MAX_PATHS
# Congestion-aware mode CA (congestion.p4, ca_select.p4): per class the cost coefficients, then
# per path (_1.._MAX_PATHS) the offsets and the inverse capacities, all bit<32>; default
# no_ca (all zero: every usable path is a candidate). The table's structured annotation
# @ca_units[name = value, ...] gives the units of the metrics (Pipeline.ca_units).
TABLE_CA = "MpIngress.path_select.ca_select.ca_params"
ACTION_SET_CA = "MpIngress.path_select.ca_select.set_ca"
ACTION_NO_CA = "MpIngress.path_select.ca_select.no_ca"
CA_COEFFICIENTS = ("c_qdelay", "c_loss", "c_util", "epsilon", "max_age_us")
CA_PATH_PARAMS = ("offset", "inv_capacity")  # each _1.._MAX_PATHS, in this order
ANNOTATION_CA_UNITS = "ca_units"
CA_COST_UNITS = ("rate_window_us", "rate_unit_bytes", "loss_one", "util_one", "coef_one")
CA_FEEDBACK_UNITS = ("fb_qdelay_unit_us", "fb_age_unit_us")  # path_tag_t.fb_qdelay, fb_age
CA_UNITS = CA_COST_UNITS + CA_FEEDBACK_UNITS
REGISTERS_PATH_SELECT = (
    "MpIngress.path_select.flowlet_ts",
    "MpIngress.path_select.flowlet_path",
    "MpIngress.path_select.rr_last",
    "MpIngress.path_select.mvqs.vq_bytes",
    "MpIngress.path_select.mvqs.vq_ts",
)
# MPTCP-aware mode (mptcp.p4): subflow pins (5-tuple -> path) and handshake reports.
TABLE_SUBFLOW_PIN = "MpIngress.mptcp.subflow_pin"
ACTION_PIN_SUBFLOW = "MpIngress.mptcp.pin_subflow"
SUBFLOW_PIN_KEYS = ("src_addr", "dst_addr", "src_port", "dst_port")
DIGEST_MPTCP_CAPABLE = "mptcp_capable_t"
DIGEST_MPTCP_JOIN = "mptcp_join_t"
DIGEST_MPTCP_CLOSE = "mptcp_close_t"
DIGESTS_MPTCP = (DIGEST_MPTCP_CAPABLE, DIGEST_MPTCP_JOIN, DIGEST_MPTCP_CLOSE)
# Drops by reason (p4src/include/validate.p4): a packets-and-bytes counter indexed by the reason
# code. The reasons' names and codes are defined once, in p4src/include/defines.p4
# (DROP_REASONS), and reach the P4Info as the counter's structured annotation
# @drop_reasons[NAME = code, ...]; Pipeline.drop_reasons reads them from there.
COUNTER_DROP_REASON = "MpIngress.drop_reason"
# Transmit counter per egress port (p4src/include/port_counters.p4): packets and bytes, indexed
# by the port number (ports from its size up are not counted); the links' loads (GET /links).
COUNTER_PORT_TX = "MpEgress.port_counters.port_tx"
ANNOTATION_DROP_REASONS = "drop_reasons"
ENUM_POLICY_MODE = "policy_mode_t"  # set_weights' mode: HASH, FLOWLET, RR, VQ, CA
MODE_CA = "ca"  # the policy mode that needs FEATURE_CONGESTION
PACKET_OUT = "packet_out"  # controller header of PacketOuts
PACKET_OUT_PATH = "path_id"
PACKET_OUT_EDGE = "dst_edge"
# The switch's special ports (p4src/include/defines.p4 CPU_PORT, PROBE_PORT) reach the P4Info as
# the packet_out header's structured annotation @ports[CPU_PORT = n, PROBE_PORT = m]
# (Pipeline.ports, special_ports): the probe port takes frames laid out like a PacketOut.
ANNOTATION_PORTS = "ports"
PORT_CPU = "cpu_port"
PORT_PROBE = "probe_port"
PATH_FLAG_PROBE = 0x01  # path_tag_t.flags of probes
PATH_FLAG_COPY = 0x02  # path_tag_t.flags of a SYN's copy (syn_copy): delivered, not measured
# A probe as the agent sends it (after the packet_out header): Ethernet with
# ether type 0 (the tag's next_type: nothing the switch parses follows) and a
# 4-byte body; on the wire 14 + 14 + 4 bytes (padded to 60 by the NIC or not).
PROBE_FRAME = bytes(6) + bytes.fromhex("00000a0000fe") + b"\x00\x00" + b"mpsP"

TABLES = (
    TABLE_ROUTE,
    TABLE_PATH_INGRESS,
)
# Every table the controller writes (TABLES have a single match field).
ALL_TABLES = (
    TABLE_SWITCH_CONFIG,
    TABLE_TRANSIT,
    TABLE_NEXTHOP,
    TABLE_LIVENESS_CONFIG,
    TABLE_WEIGHTS,
    TABLE_MVQS,
    TABLE_CA,
    *TABLES,
    TABLE_REPORT_CONFIG,
    TABLE_RTT_CONFIG,
    TABLE_TRAFFIC_CLASS,
    TABLE_SUBFLOW_PIN,
)

# Stages a compile-time profile may leave out (src/mpsched/p4profiles.py, `make p4
# P4_PROFILE=...`): feature name -> (its define, the P4Info entity whose presence tells).
REGISTER_FLOW_OOO = "MpIngress.path_monitor.flow_ooo"
OPTIONAL_FEATURES = {
    feature: (FEATURE_DEFINES[feature], entity)
    for feature, entity in (
        (FEATURE_FLOW_ORDER, REGISTER_FLOW_OOO),
        (FEATURE_MPTCP, TABLE_SUBFLOW_PIN),
        (FEATURE_RTT_MONITOR, TABLE_RTT_CONFIG),
        (FEATURE_CONGESTION, TABLE_CA),
    )
}
