"""The program's names bound to one P4Info: every table, action, parameter, key, counter,
register and digest the controller uses is checked there, and the sizes (paths, edges,
classes, subflow pins), the policy modes, drop reasons, CA units and special ports are read
from it. The entry builders (forwarding.py, placement.py, monitoring.py) and probe frames
(probes.py) build on this binding.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

from mpsched.p4profiles import (
    FEATURE_CONGESTION,
    FEATURE_FLOW_ORDER,
    FEATURE_MPTCP,
    FEATURE_RTT_MONITOR,
)
from mpsched.p4rt.client import CounterValue
from mpsched.p4rt.p4info import P4Info, P4InfoError, annotated_codes
from mpsched.p4rt.pipeline.names import (
    ACTION_FABRIC_PORT,
    ACTION_NO_CA,
    ACTION_PIN_SUBFLOW,
    ACTION_SET_CA,
    ACTION_SET_CLASS,
    ACTION_SET_DEAD_AFTER,
    ACTION_SET_MVQS,
    ACTION_SET_PATH_PORT,
    ACTION_SET_REPORT_INTERVAL,
    ACTION_SET_RTT_INTERVAL,
    ACTION_SET_SWITCH_CONFIG,
    ACTION_SET_WEIGHTS,
    ACTION_TO_HOST,
    ACTION_TO_PATHS,
    ACTION_TRANSIT,
    ACTION_VIA_PATH,
    ALL_TABLES,
    ANNOTATION_CA_UNITS,
    ANNOTATION_DROP_REASONS,
    CA_COEFFICIENTS,
    CA_PATH_PARAMS,
    CA_UNITS,
    CLASS_KEYS,
    CLASS_TABLE_KEYS,
    COUNTER_DROP_REASON,
    COUNTER_PORT_TX,
    COUNTER_PROBE_SKIPPED,
    COUNTER_RX,
    COUNTER_TX,
    DIGEST_PATH_REPORT,
    DIGEST_RTT_REPORT,
    DIGESTS_MPTCP,
    ENUM_POLICY_MODE,
    LIVENESS_KEYS,
    MODE_CA,
    MVQS_PARAMS,
    NEXTHOP_KEYS,
    OPTIONAL_FEATURES,
    PACKET_OUT,
    PACKET_OUT_EDGE,
    PACKET_OUT_PATH,
    REGISTER_PROBE_SEQ,
    REGISTER_TX_SEQ,
    REGISTERS_LIVENESS,
    REGISTERS_PATH_MONITOR,
    REGISTERS_PATH_SELECT,
    REGISTERS_RTT_MONITOR,
    REPORT_KEYS,
    SUBFLOW_PIN_KEYS,
    TABLE_CA,
    TABLE_LIVENESS_CONFIG,
    TABLE_MVQS,
    TABLE_NEXTHOP,
    TABLE_REPORT_CONFIG,
    TABLE_ROUTE,
    TABLE_RTT_CONFIG,
    TABLE_SUBFLOW_PIN,
    TABLE_TRAFFIC_CLASS,
    TABLE_TRANSIT,
    TABLE_WEIGHTS,
    TABLES,
    TRANSIT_KEYS,
)
from mpsched.p4rt.pipeline.ports import special_ports

log = logging.getLogger(__name__)


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


class PipelineBinding:
    """The names of the program checked against one P4Info, with what it tells (see
    Pipeline, which adds the entry builders)."""

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

    def _edge(self, edge_id: int) -> int:
        if not 1 <= edge_id <= self.max_edges:
            raise ValueError(f"edge id {edge_id} outside 1..{self.max_edges}")
        return edge_id

    def _path(self, path_id: int) -> int:
        if not 1 <= path_id <= self.max_paths:
            raise ValueError(f"path id {path_id} outside 1..{self.max_paths}")
        return path_id

    def edge_path_index(self, edge: int, path_id: int) -> int:
        """The cell of (peer edge `edge`, path `path_id`) in the per-(edge, path) counters
        (COUNTER_TX, COUNTER_RX, COUNTER_PROBE_SKIPPED) and registers: the program's
        EDGE_PATH(edge, path) = edge * (max_paths + 1) + path (p4src/include/sizes.p4),
        with max_paths from the P4Info. Cell 0 (edge 0, path 0) of COUNTER_TX counts the
        packets for which no path could be chosen."""
        return edge * (self.max_paths + 1) + path_id
