"""The P4 program's control-plane interface, bound to its P4Info.

This is the only place that names the program's tables, actions, counters,
registers and digests.
Binding checks every name against the P4Info and derives the number of paths
from it, so the controller, the PTF tests and the integration tests all agree
with the compiled program.
"""

from __future__ import annotations

import functools
import ipaddress
import logging
from collections.abc import Mapping
from pathlib import Path

from mpsched.p4profiles import (
    FEATURE_CONGESTION,
    FEATURE_DEFINES,
    FEATURE_FLOW_ORDER,
    FEATURE_MPTCP,
    FEATURE_RTT_MONITOR,
)
from mpsched.p4rt.client import CloneSession, CounterValue, MatchValue, TableEntry
from mpsched.p4rt.p4info import P4Info, P4InfoError, annotated_codes
from mpsched.p4rt.weights import bucket_ends

log = logging.getLogger(__name__)

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


class FeatureAbsentError(P4InfoError):
    """The program was compiled without the optional feature an entry or digest needs."""


def program_features(p4info: P4Info) -> frozenset[str]:
    """The optional features (OPTIONAL_FEATURES) the compiled program has."""
    present = set()
    for feature, (_, entity) in OPTIONAL_FEATURES.items():
        lookup = p4info.register if feature == FEATURE_FLOW_ORDER else p4info.table
        try:
            lookup(entity)
        except P4InfoError:
            continue
        present.add(feature)
    return frozenset(present)



@functools.lru_cache(maxsize=4096)
def _lpm(prefix: str) -> tuple[str, int]:
    """An IPv4 prefix's LPM match (network address, length), parsed once: a fabric's edge
    holds a route per remote subnet, built anew on every re-route (docs/results/scale.md)."""
    net = ipaddress.IPv4Network(prefix)
    return str(net.network_address), net.prefixlen

class Pipeline:
    """Builders for the program's table entries, checked against one P4Info.

    `drop_reasons` maps each drop reason's name (lower case, e.g. "ipv4_checksum") to its
    index in the COUNTER_DROP_REASON counter; `drop_counts()` turns a read of that counter
    into counts by name. (A controller reads it with
    `pipeline.drop_counts(client.read_counter(COUNTER_DROP_REASON))`.)

    `features` holds the optional stages (OPTIONAL_FEATURES) the program was compiled with;
    `tables` the tables of ALL_TABLES it has. Without the RTT monitor, rtt_config() and
    rtt_report_digest() raise FeatureAbsentError; without MPTCP, subflow_pin() does,
    `mptcp_digests` is empty and `max_pins` is 0; without congestion, ca_params() and
    weights(..., mode="ca") do and `ca_units` is empty. A present feature is checked in full.
    """

    def __init__(self, p4info: P4Info) -> None:
        self.p4info = p4info
        self.features = program_features(p4info)
        for feature, (define, _) in sorted(OPTIONAL_FEATURES.items()):
            if feature not in self.features:
                log.info("P4 program compiled without %s (-D%s): skipped", feature, define)
        self.has_mptcp = FEATURE_MPTCP in self.features
        self.has_rtt_monitor = FEATURE_RTT_MONITOR in self.features
        self.has_congestion = FEATURE_CONGESTION in self.features
        absent = set()
        if not self.has_mptcp:
            absent.add(TABLE_SUBFLOW_PIN)
        if not self.has_rtt_monitor:
            absent.add(TABLE_RTT_CONFIG)
        if not self.has_congestion:
            absent.add(TABLE_CA)
        self.tables = tuple(t for t in ALL_TABLES if t not in absent)
        single_key_tables = tuple(t for t in TABLES if t not in absent)
        self._check_names(p4info, single_key_tables)
        self._bind_digests(p4info)
        self._bind_paths(p4info)
        self._bind_ca(p4info)
        self.class_keys = {f.name: f for f in p4info.match_fields(TABLE_TRAFFIC_CLASS)}
        missing = sorted(set(CLASS_KEYS) - set(self.class_keys))
        if missing:
            raise P4InfoError(f"{TABLE_TRAFFIC_CLASS} lacks match fields {missing}")
        # one placement per (destination edge, class)
        self.max_classes = p4info.table_size(TABLE_WEIGHTS) // self.max_edges
        self.drop_reasons = self._drop_reasons(p4info)
        self.ports = special_ports(p4info)
        self._packet_out_fields = p4info.packet_metadata(PACKET_OUT)
        self._key = {}
        for table in single_key_tables:
            fields = p4info.match_fields(table)
            if len(fields) != 1:
                raise P4InfoError(f"{table} should have exactly one match field")
            self._key[table] = fields[0].name

    def _check_names(self, p4info: P4Info, single_key_tables: tuple[str, ...]) -> None:
        """The tables, actions, parameters, counters, registers and keys the controller
        writes or reads exist (P4InfoError names the first that does not)."""
        for table in single_key_tables:
            p4info.table(table)
        for action in (
            ACTION_SET_SWITCH_CONFIG,
            ACTION_TRANSIT,
            ACTION_TO_HOST,
            ACTION_TO_PATHS,
            ACTION_VIA_PATH,
            ACTION_SET_WEIGHTS,
            ACTION_SET_PATH_PORT,
            ACTION_FABRIC_PORT,
            ACTION_SET_REPORT_INTERVAL,
            ACTION_SET_DEAD_AFTER,
            ACTION_SET_CLASS,
            ACTION_SET_MVQS,
            *([ACTION_SET_RTT_INTERVAL] if self.has_rtt_monitor else []),
            *([ACTION_PIN_SUBFLOW] if self.has_mptcp else []),
            *([ACTION_SET_CA, ACTION_NO_CA] if self.has_congestion else []),
        ):
            p4info.action(action)
        p4info.counter(COUNTER_PROBE_SKIPPED)
        p4info.counter(COUNTER_PORT_TX)
        for register in (
            REGISTER_TX_SEQ,
            REGISTER_PROBE_SEQ,
            *REGISTERS_PATH_MONITOR,
            *(REGISTERS_RTT_MONITOR if self.has_rtt_monitor else ()),
            *REGISTERS_LIVENESS,
            *REGISTERS_PATH_SELECT,
        ):
            p4info.register(register)
        p4info.action_param(ACTION_SET_REPORT_INTERVAL, "interval_us")
        if self.has_rtt_monitor:
            p4info.action_param(ACTION_SET_RTT_INTERVAL, "interval_us")
        p4info.action_param(ACTION_SET_DEAD_AFTER, "dead_after_us")
        out_fields = [f.name for f in p4info.packet_metadata(PACKET_OUT)]
        for name in (PACKET_OUT_PATH, PACKET_OUT_EDGE):
            if name not in out_fields:
                raise P4InfoError(f"controller header {PACKET_OUT} has no {name}")
        keyed = [(TABLE_TRANSIT, TRANSIT_KEYS), (TABLE_NEXTHOP, NEXTHOP_KEYS),
                 (TABLE_LIVENESS_CONFIG, LIVENESS_KEYS), (TABLE_REPORT_CONFIG, REPORT_KEYS),
                 (TABLE_WEIGHTS, CLASS_TABLE_KEYS), (TABLE_MVQS, CLASS_TABLE_KEYS)]
        if self.has_congestion:
            keyed.append((TABLE_CA, CLASS_TABLE_KEYS))
        if self.has_rtt_monitor:
            keyed.append((TABLE_RTT_CONFIG, REPORT_KEYS))
        for table, keys in keyed:
            have = tuple(f.name for f in p4info.match_fields(table))
            if have != keys:
                raise P4InfoError(f"{table} matches {list(have)}, not {list(keys)}")

    def _bind_digests(self, p4info: P4Info) -> None:
        """The path, RTT and MPTCP digests: ids and member names; the subflow pin table."""
        self.path_report_id, self.path_report_fields = self._digest(p4info, DIGEST_PATH_REPORT)
        self.rtt_report_id = 0
        self.rtt_report_fields: list[str] = []
        if self.has_rtt_monitor:
            self.rtt_report_id, self.rtt_report_fields = self._digest(p4info, DIGEST_RTT_REPORT)
        # MPTCP digest id -> (digest name, member names)
        self.mptcp_digests = {}
        self.max_pins = 0
        if self.has_mptcp:
            for name in DIGESTS_MPTCP:
                digest_id, members = self._digest(p4info, name)
                self.mptcp_digests[digest_id] = (name, members)
            pin_keys = [f.name for f in p4info.match_fields(TABLE_SUBFLOW_PIN)]
            if pin_keys != list(SUBFLOW_PIN_KEYS):
                raise P4InfoError(
                    f"{TABLE_SUBFLOW_PIN} matches {pin_keys}, not {SUBFLOW_PIN_KEYS}"
                )
            p4info.action_param(ACTION_PIN_SUBFLOW, "path_id")
            self.max_pins = p4info.table_size(TABLE_SUBFLOW_PIN)

    def _bind_paths(self, p4info: P4Info) -> None:
        """Paths and edges the program holds, the weight buckets, the policy modes, MVQS."""
        if ACTION_VIA_PATH not in p4info.table_actions(TABLE_ROUTE):
            raise P4InfoError(f"{TABLE_ROUTE} does not offer {ACTION_VIA_PATH}")
        for action, param in ((ACTION_VIA_PATH, "path_id"), (ACTION_VIA_PATH, "dst_edge"),
                              (ACTION_TO_PATHS, "dst_edge"), (ACTION_SET_SWITCH_CONFIG, "edge_id")):
            p4info.action_param(action, param)
        # paths 1..max_paths: one bucket end per path (set_weights)
        ends = [
            p.name for p in p4info.action_params(ACTION_SET_WEIGHTS) if p.name.startswith("end_")
        ]
        self.max_paths = len(ends)
        if self.max_paths < 1:
            raise P4InfoError(f"{ACTION_SET_WEIGHTS} has no bucket ends end_<i>")
        # edge ids 1..max_edges (p4src/include/sizes.p4: one next hop per (edge, path))
        self.max_edges = p4info.table_size(TABLE_NEXTHOP) // self.max_paths
        self.weight_params = [f"end_{i}" for i in range(1, self.max_paths + 1)]
        for name in (*self.weight_params, "weighted_paths", "mode", "flowlet_gap_us", "syn_copy"):
            p4info.action_param(ACTION_SET_WEIGHTS, name)
        # the per-(edge, path) counters hold every cell of edge_path_index
        cells = self.edge_path_index(self.max_edges, self.max_paths) + 1
        for counter in (COUNTER_TX, COUNTER_RX, COUNTER_PROBE_SKIPPED):
            if p4info.counter_size(counter) != cells:
                raise P4InfoError(
                    f"{counter} has {p4info.counter_size(counter)} cells, not {cells} "
                    f"({self.max_edges} edges and {self.max_paths} paths)"
                )
        # Policy modes by name (lower case: "hash", "flowlet", "rr", "vq") -> value.
        self.modes = {
            name.lower(): value
            for name, value in p4info.serializable_enum(ENUM_POLICY_MODE).items()
        }
        for name in MVQS_PARAMS:
            for i in range(1, self.max_paths + 1):
                p4info.action_param(ACTION_SET_MVQS, f"{name}_{i}")

    def _bind_ca(self, p4info: P4Info) -> None:
        """set_ca's parameters in order (coefficients, offsets, inverse capacities) and the
        units of the metrics; empty without the congestion feature."""
        self.ca_params_names: list[str] = []
        self.ca_units: dict[str, int] = {}
        if self.has_congestion:
            if MODE_CA not in self.modes:
                raise P4InfoError(f"{ENUM_POLICY_MODE} has no {MODE_CA.upper()} but {TABLE_CA} "
                                  "exists")
            self.ca_params_names = [
                *CA_COEFFICIENTS,
                *(f"{name}_{i}" for name in CA_PATH_PARAMS for i in range(1, self.max_paths + 1)),
            ]
            params = [p.name for p in p4info.action_params(ACTION_SET_CA)]
            if params != self.ca_params_names:
                raise P4InfoError(f"{ACTION_SET_CA} has parameters {params}, "
                                  f"not {self.ca_params_names}")
            for action in (ACTION_SET_CA, ACTION_NO_CA):
                if action not in p4info.table_actions(TABLE_CA):
                    raise P4InfoError(f"{TABLE_CA} does not offer {action}")
            self.ca_units = self._ca_units(p4info)

    @staticmethod
    def _drop_reasons(p4info: P4Info) -> dict[str, int]:
        """Reason name (lower case, e.g. "ipv4_checksum") -> code, from the drop_reason
        counter's @drop_reasons annotation; every code indexes the counter, none twice."""
        return annotated_codes(p4info, COUNTER_DROP_REASON, ANNOTATION_DROP_REASONS)

    @staticmethod
    def _ca_units(p4info: P4Info) -> dict[str, int]:
        """The units of the congestion metrics (CA_UNITS: name -> positive integer), from the
        ca_params table's @ca_units[name = value, ...] annotation."""
        table = p4info.table(TABLE_CA)
        lists = [a.kv_pair_list for a in table.preamble.structured_annotations
                 if a.name == ANNOTATION_CA_UNITS]
        if len(lists) != 1 or not lists[0].kv_pairs:
            raise P4InfoError(f"table {TABLE_CA} lacks its "
                              f"@{ANNOTATION_CA_UNITS}[name = value, ...] annotation")
        units = {kv.key.lower(): kv.value.int64_value for kv in lists[0].kv_pairs}
        missing = sorted(set(CA_UNITS) - set(units))
        bad = sorted(name for name in CA_UNITS if name in units and units[name] <= 0)
        if missing or bad:
            raise P4InfoError(f"{TABLE_CA} @{ANNOTATION_CA_UNITS}: missing {missing}, "
                              f"not positive {bad}")
        return {name: units[name] for name in CA_UNITS}

    def drop_counts(self, values: Mapping[int, CounterValue]) -> dict[str, CounterValue]:
        """The drop_reason counter's values (P4RuntimeClient.read_counter(COUNTER_DROP_REASON):
        index -> CounterValue) by reason name; a reason the read lacks counts 0."""
        zero = CounterValue(0, 0)
        return {name: values.get(code, zero) for name, code in self.drop_reasons.items()}

    @staticmethod
    def _digest(p4info: P4Info, digest: str) -> tuple[int, list[str]]:
        members = p4info.digest_members(digest)
        return p4info.digest_id(digest), [name for name, _ in members]

    def path_report_digest(self) -> tuple[int, list[str]]:
        """Digest id of path_report_t and its member names in order, from the P4Info."""
        return self.path_report_id, list(self.path_report_fields)

    def _require(self, feature: str, what: str) -> None:
        if feature not in self.features:
            define, _ = OPTIONAL_FEATURES[feature]
            raise FeatureAbsentError(
                f"{what}: the P4 program was compiled without {feature} (-D{define})"
            )

    def rtt_report_digest(self) -> tuple[int, list[str]]:
        """Digest id of rtt_report_t and its member names in order, from the P4Info."""
        self._require(FEATURE_RTT_MONITOR, DIGEST_RTT_REPORT)
        return self.rtt_report_id, list(self.rtt_report_fields)

    def subflow_pin(self, src: str, dst: str, sport: int, dport: int, path_id: int) -> TableEntry:
        """Pin the TCP subflow src:sport -> dst:dport (as this switch sends it) to a path."""
        self._require(FEATURE_MPTCP, TABLE_SUBFLOW_PIN)
        if not 1 <= path_id <= self.max_paths:
            raise ValueError(f"path id {path_id} outside 1..{self.max_paths}")
        for port in (sport, dport):
            if not 0 <= port <= 0xFFFF:
                raise ValueError(f"port {port} outside 0..65535")
        return TableEntry(
            TABLE_SUBFLOW_PIN,
            dict(zip(SUBFLOW_PIN_KEYS, (src, dst, sport, dport), strict=True)),
            ACTION_PIN_SUBFLOW,
            {"path_id": path_id},
        )

    def route_to_host(self, ip: str, port: int, smac: str, dmac: str) -> TableEntry:
        return TableEntry(
            TABLE_ROUTE,
            {self._key[TABLE_ROUTE]: (ip, 32)},
            ACTION_TO_HOST,
            {"port": port, "smac": smac, "dmac": dmac},
        )

    def _edge(self, edge_id: int) -> int:
        if not 1 <= edge_id <= self.max_edges:
            raise ValueError(f"edge id {edge_id} outside 1..{self.max_edges}")
        return edge_id

    def _path(self, path_id: int) -> int:
        if not 1 <= path_id <= self.max_paths:
            raise ValueError(f"path id {path_id} outside 1..{self.max_paths}")
        return path_id

    def switch_config(self, edge_id: int) -> TableEntry:
        """The switch's own edge id (its one switch_config entry, on every port)."""
        return TableEntry(
            TABLE_SWITCH_CONFIG, {}, ACTION_SET_SWITCH_CONFIG, {"edge_id": self._edge(edge_id)},
            priority=1,
        )

    def transit_nexthop(self, src_edge: int, dst_edge: int, path_id: int, port: int) -> TableEntry:
        """Forward the tags of path path_id of the pair (src_edge, dst_edge) to port."""
        key = (self._edge(src_edge), self._edge(dst_edge), self._path(path_id))
        return TableEntry(
            TABLE_TRANSIT, dict(zip(TRANSIT_KEYS, key, strict=True)), ACTION_TRANSIT, {"port": port}
        )

    def route_to_paths(self, prefix: str, dst_edge: int) -> TableEntry:
        """A prefix behind edge switch dst_edge, reached over the weighted paths."""
        return TableEntry(
            TABLE_ROUTE,
            {self._key[TABLE_ROUTE]: _lpm(prefix)},
            ACTION_TO_PATHS,
            {"dst_edge": self._edge(dst_edge)},
        )

    def route_via_path(self, prefix: str, dst_edge: int, path_id: int) -> TableEntry:
        """Pin a prefix (e.g. a cross-traffic host's /32) behind edge switch dst_edge to one
        path, bypassing the weights."""
        net = ipaddress.IPv4Network(prefix)
        return TableEntry(
            TABLE_ROUTE,
            {self._key[TABLE_ROUTE]: (str(net.network_address), net.prefixlen)},
            ACTION_VIA_PATH,
            {"dst_edge": self._edge(dst_edge), "path_id": self._path(path_id)},
        )

    def path_nexthop(self, dst_edge: int, path_id: int, port: int) -> TableEntry:
        """The port of path path_id towards edge switch dst_edge."""
        return TableEntry(
            TABLE_NEXTHOP,
            {"dst_edge": self._edge(dst_edge), "path_id": path_id},
            ACTION_SET_PATH_PORT,
            {"port": port},
        )

    def path_ingress(self, port: int) -> TableEntry:
        """Port `port` faces the fabric: a tagged arrival there is measured by its tag's
        (source edge, path) (p4src/include/path_ingress.p4)."""
        return TableEntry(TABLE_PATH_INGRESS, {self._key[TABLE_PATH_INGRESS]: port},
                          ACTION_FABRIC_PORT, {})

    def edge_path_index(self, edge: int, path_id: int) -> int:
        """The cell of (peer edge `edge`, path `path_id`) in the per-(edge, path) counters
        (COUNTER_TX, COUNTER_RX, COUNTER_PROBE_SKIPPED) and registers: the program's
        EDGE_PATH(edge, path) = edge * (max_paths + 1) + path (p4src/include/sizes.p4),
        with max_paths from the P4Info. Cell 0 (edge 0, path 0) of COUNTER_TX counts the
        packets for which no path could be chosen."""
        return edge * (self.max_paths + 1) + path_id

    def _class_key(self, dst_edge: int, class_id: int) -> dict[str, MatchValue]:
        if not 0 <= class_id < self.max_classes:
            raise ValueError(f"class id {class_id} outside 0..{self.max_classes - 1}")
        return {"dst_edge": self._edge(dst_edge), "class_id": class_id}

    def weights(
        self,
        dst_edge: int,
        class_id: int,
        weights: Mapping[int, int],
        mode: str = "hash",
        flowlet_gap_us: int = 0,
        syn_copy: bool = False,
    ) -> TableEntry:
        """The placement entry of a class towards edge dst_edge: weights maps path id
        (1-based, dst_edge's paths) -> weight;
        mode one of self.modes ("hash", "flowlet", "rr", "vq", "ca"); the flowlet gap in µs;
        syn_copy: a TCP SYN also goes, as a copy, onto another usable path (the clone
        sessions of `copy_session`). Mode "ca" without the congestion feature raises
        FeatureAbsentError."""
        if mode == MODE_CA:
            self._require(FEATURE_CONGESTION, f'mode "{MODE_CA}"')
        unknown = [p for p in weights if not 1 <= p <= self.max_paths]
        if unknown:
            raise ValueError(f"path ids {unknown} outside 1..{self.max_paths}")
        key = self._class_key(dst_edge, class_id)
        if mode not in self.modes:
            raise ValueError(f"mode {mode!r} is not one of {sorted(self.modes)}")
        if not 0 <= flowlet_gap_us < 1 << 32:
            raise ValueError(f"flowlet gap {flowlet_gap_us} µs outside 0..2^32-1")
        ends = bucket_ends([weights.get(p, 0) for p in range(1, self.max_paths + 1)])
        params: dict[str, int] = dict(zip(self.weight_params, ends, strict=True))
        # bit i-1: path i owns buckets (end_i > end_{i-1}), derived from the same ends
        params["weighted_paths"] = sum(
            1 << i for i, end in enumerate(ends) if end > (ends[i - 1] if i else 0)
        )
        params["mode"] = self.modes[mode]
        params["flowlet_gap_us"] = flowlet_gap_us
        params["syn_copy"] = int(syn_copy)
        return TableEntry(TABLE_WEIGHTS, key, ACTION_SET_WEIGHTS, params)

    def copy_session(self, dst_edge: int, path_id: int, port: int) -> CloneSession:
        """The clone session through which a SYN's copy leaves on path `path_id` towards edge
        `dst_edge` (its port, as path_nexthop's): session id edge_path_index(dst_edge,
        path_id), the EDGE_PATH cell the egress clones to (p4src/include/ingress.p4)."""
        return CloneSession(self.edge_path_index(self._edge(dst_edge), self._path(path_id)),
                            port)

    def traffic_class(
        self,
        class_id: int,
        priority: int,
        dscp: int | None = None,
        src: str | None = None,
        dst: str | None = None,
        protocol: int | None = None,
        src_port: tuple[int, int] | None = None,
        dst_port: tuple[int, int] | None = None,
    ) -> TableEntry:
        """A classifier entry: packets matching every given field (None: any) get class_id;
        prefixes as "a.b.c.d/len", ports as inclusive (low, high). Higher priority wins."""
        if not 0 < class_id < self.max_classes:
            raise ValueError(f"class id {class_id} outside 1..{self.max_classes - 1}")
        if priority < 1:
            raise ValueError(f"priority {priority} < 1")
        match: dict[str, MatchValue] = {}
        if dscp is not None:
            match["dscp"] = (dscp, 0x3F)
        for key, prefix in (("src_addr", src), ("dst_addr", dst)):
            if prefix is not None:
                net = ipaddress.IPv4Network(prefix)
                if net.prefixlen:
                    match[key] = (str(net.network_address), int(net.netmask))
        if protocol is not None:
            match["protocol"] = (protocol, 0xFF)
        for key, ports in (("src_port", src_port), ("dst_port", dst_port)):
            if ports is not None and ports != (0, 0xFFFF):
                match[key] = ports
        return TableEntry(
            TABLE_TRAFFIC_CLASS, match, ACTION_SET_CLASS, {"class_id": class_id}, priority=priority
        )

    def mvqs_params(
        self, dst_edge: int, class_id: int, paths: Mapping[int, tuple[int, int, int, int]]
    ) -> TableEntry:
        """The MVQS parameters of a class in mode "vq" towards edge dst_edge: path id ->
        (pad_us, bdp_bytes,
        us_per_kbyte, drain_1024us) (mvqs.p4); paths not given get zeros."""
        unknown = [p for p in paths if not 1 <= p <= self.max_paths]
        if unknown:
            raise ValueError(f"path ids {unknown} outside 1..{self.max_paths}")
        params: dict[str, int] = {}
        for i in range(1, self.max_paths + 1):
            values = paths.get(i, (0, 0, 0, 0))
            for name, value in zip(MVQS_PARAMS, values, strict=True):
                if not 0 <= value < 1 << 32:
                    raise ValueError(f"{name} of path {i} = {value} outside 0..2^32-1")
                params[f"{name}_{i}"] = int(value)
        key = self._class_key(dst_edge, class_id)
        return TableEntry(TABLE_MVQS, key, ACTION_SET_MVQS, params)

    def ca_params(self, dst_edge: int, class_id: int, params: Mapping[str, int]) -> TableEntry:
        """The congestion-aware parameters of a class in mode "ca" towards edge dst_edge
        (ca_select.p4): `params`
        maps set_ca's parameter names (self.ca_params_names: c_qdelay, c_loss, c_util,
        epsilon, max_age_us, offset_i, inv_capacity_i; see controller.policies.ca
        .ca_fixed_point) to integers 0..2^32-1; a name not given is 0. ValueError naming the
        parameter for an unknown name, a path index outside 1..max_paths or a value out of
        range; FeatureAbsentError without the congestion feature."""
        self._require(FEATURE_CONGESTION, TABLE_CA)
        key = self._class_key(dst_edge, class_id)
        known = set(self.ca_params_names)
        for name in params:
            if name not in known:
                base, _, index = name.rpartition("_")
                if base in CA_PATH_PARAMS and index.isdigit():
                    raise ValueError(f"{name}: path {index} outside 1..{self.max_paths}")
                raise ValueError(f"{name}: not a parameter of {ACTION_SET_CA}")
        out: dict[str, int] = {}
        for name in self.ca_params_names:
            value = params.get(name, 0)
            if isinstance(value, bool) or not isinstance(value, int):
                raise ValueError(f"{name} = {value!r} is not an integer")
            if not 0 <= value < 1 << 32:
                raise ValueError(f"{name} = {value} outside 0..2^32-1")
            out[name] = value
        return TableEntry(TABLE_CA, key, ACTION_SET_CA, out)

    def report_config(self, peer_edge: int, path_id: int, interval_us: int) -> TableEntry:
        """Report path path_id from edge peer_edge at most once per interval_us µs
        (path_report_t digests of this switch as the egress edge)."""
        return self._report_entry(TABLE_REPORT_CONFIG, ACTION_SET_REPORT_INTERVAL, peer_edge,
                                  path_id, interval_us)

    def rtt_config(self, peer_edge: int, path_id: int, interval_us: int) -> TableEntry:
        """Report the RTT samples of path path_id towards edge peer_edge at most once per
        interval_us µs (rtt_report_t)."""
        self._require(FEATURE_RTT_MONITOR, TABLE_RTT_CONFIG)
        return self._report_entry(TABLE_RTT_CONFIG, ACTION_SET_RTT_INTERVAL, peer_edge,
                                  path_id, interval_us)

    def _report_entry(self, table: str, action: str, peer_edge: int, path_id: int,
                      interval_us: int) -> TableEntry:
        if not 1 <= path_id <= self.max_paths:
            raise ValueError(f"path id {path_id} outside 1..{self.max_paths}")
        if interval_us < 0:
            raise ValueError(f"report interval {interval_us} < 0")
        peer_key, path_key = REPORT_KEYS
        return TableEntry(table, {peer_key: self._edge(peer_edge), path_key: path_id}, action,
                          {"interval_us": interval_us})

    def liveness_config(self, peer_edge: int, path_id: int, dead_after_us: int) -> TableEntry:
        """Declare path path_id towards edge peer_edge dead dead_after_us µs after its last
        sign of life (p4src/include/liveness.p4); without an entry the path never dies."""
        if not 1 <= path_id <= self.max_paths:
            raise ValueError(f"path id {path_id} outside 1..{self.max_paths}")
        if dead_after_us <= 0:
            raise ValueError(f"dead_after_us {dead_after_us} <= 0")
        peer_key, path_key = LIVENESS_KEYS
        return TableEntry(
            TABLE_LIVENESS_CONFIG,
            {peer_key: self._edge(peer_edge), path_key: path_id},
            ACTION_SET_DEAD_AFTER,
            {"dead_after_us": dead_after_us},
        )

    @property
    def probe_port(self) -> int | None:
        """The port for frames laid out like a PacketOut (None: the program has none)."""
        return self.ports.get(PORT_PROBE)

    def probe_frame(self, path_id: int, dst_edge: int) -> bytes:
        """A probe onto path path_id towards edge dst_edge as a frame for the probe port: the
        packet_out header (its fields packed in P4Info order, as BMv2 prepends a PacketOut's
        metadata), then the probe."""
        payload, metadata = self.probe(path_id, dst_edge)
        value, bits = 0, 0
        for f in self._packet_out_fields:
            value = (value << f.bitwidth) | (metadata.get(f.name, 0) & ((1 << f.bitwidth) - 1))
            bits += f.bitwidth
        if bits % 8:
            raise P4InfoError(f"controller header {PACKET_OUT} is {bits} bits, not whole bytes")
        return value.to_bytes(bits // 8, "big") + payload

    def probe(self, path_id: int, dst_edge: int) -> tuple[bytes, dict[str, int]]:
        """Payload and packet_out metadata of a probe onto path path_id towards edge
        dst_edge, for P4RuntimeClient.packet_out(*pipeline.probe(path_id, dst_edge))."""
        return PROBE_FRAME, {
            PACKET_OUT_PATH: self._path(path_id),
            PACKET_OUT_EDGE: self._edge(dst_edge),
        }


def program_cpu_port(p4info_path: str | Path) -> int | None:
    """The CPU port of the program whose P4Info text is at `p4info_path`, which BMv2 takes as
    --cpu-port for P4Runtime packet I/O (None: it has none, or no compiled program there)."""
    path = Path(p4info_path)
    if not path.is_file():
        return None
    return special_ports(P4Info.from_file(path)).get(PORT_CPU)


def program_probe_port(p4info_path: str | Path) -> int | None:
    """The probe port of the program whose P4Info text is at `p4info_path` (None: it has
    none, or the file does not exist: no compiled program)."""
    path = Path(p4info_path)
    if not path.is_file():
        return None
    return special_ports(P4Info.from_file(path)).get(PORT_PROBE)


def special_ports(p4info: P4Info) -> dict[str, int]:
    """The program's special ports by role ("cpu_port", "probe_port"), from the packet_out
    header's @ports annotation; a program without it has none ({})."""
    header = p4info.controller_header(PACKET_OUT)
    lists = [a.kv_pair_list for a in header.preamble.structured_annotations
             if a.name == ANNOTATION_PORTS]
    if not lists:
        return {}
    ports = {kv.key.lower(): kv.value.int64_value for kv in lists[0].kv_pairs}
    bad = sorted(k for k, v in ports.items() if not 0 <= v < 512)
    if len(lists) != 1 or bad or len(set(ports.values())) != len(ports):
        raise P4InfoError(f"{PACKET_OUT} @{ANNOTATION_PORTS}: one list of distinct BMv2 port "
                          f"numbers 0..511 expected (bad: {bad or 'duplicates'})")
    return ports
