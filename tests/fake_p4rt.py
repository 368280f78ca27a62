"""A fake P4Runtime server and a synthetic P4Info, for unit tests of pure control logic.

The fake stores pipeline configs and table entries and serves counter reads;
it is never used where a test must show the real switch works (that is what
the BMv2 integration and PTF tests do). The synthetic P4Info is built from
the names in mpsched.p4rt.pipeline, with the shapes the real program has.
"""

from __future__ import annotations

import threading
from concurrent import futures
from typing import Any

import grpc
from google.rpc import code_pb2, status_pb2
from p4.config.v1 import p4info_pb2
from p4.v1 import p4runtime_pb2, p4runtime_pb2_grpc

from mpsched.p4rt import pipeline as pl
from mpsched.proc.bmv2 import free_port

MAX_PATHS = 4
MAX_EDGES = 8  # p4src/include/sizes.p4
MAX_CLASSES = 64  # p4src/include/defines.p4
# The shape of path_report_t in p4src/include/headers.p4.
PATH_REPORT_MEMBERS = [
    ("path_id", 8),
    ("src_edge", 8),
    ("seq", 32),
    ("tx_ts", 48),
    ("rx_ts", 48),
    ("rx_packets", 32),
    ("rx_bytes", 32),
    ("lost", 32),
    ("reordered", 32),
    ("flow_ooo", 32),
]
# The shape of rtt_report_t in p4src/include/rtt_monitor.p4.
RTT_REPORT_MEMBERS = [("path_id", 8), ("peer_edge", 8), ("rtt_us", 32), ("retrans", 32),
                      ("inflight_bytes", 32)]
# The @ca_units annotation of ca_params in p4src/include/ca_select.p4.
CA_UNITS = {
    "rate_window_us": 16384,
    "rate_unit_bytes": 16,
    "loss_one": 65536,
    "util_one": 65536,
    "coef_one": 256,
    "fb_qdelay_unit_us": 16,
    "fb_age_unit_us": 4096,
}


FLOW_MEMBERS = [("src_addr", 32), ("dst_addr", 32), ("src_port", 16), ("dst_port", 16)]
MPTCP_MEMBERS = {
    pl.DIGEST_MPTCP_CAPABLE: [*FLOW_MEMBERS, ("tcp_flags", 8), ("key_a", 64), ("key_b", 64)],
    pl.DIGEST_MPTCP_JOIN: [*FLOW_MEMBERS, ("token", 32), ("addr_id", 8)],
    pl.DIGEST_MPTCP_CLOSE: [*FLOW_MEMBERS, ("tcp_flags", 8)],
}


_LPM, _EXACT = p4info_pb2.MatchField.LPM, p4info_pb2.MatchField.EXACT
_TERNARY, _RANGE = p4info_pb2.MatchField.TERNARY, p4info_pb2.MatchField.RANGE
# match fields: (name, bit width, match kind)
Field = tuple[str, int, int]


class _Builder:
    """Adds P4Info objects with fresh ids (one sequence, as p4c numbers within each kind)."""

    def __init__(self) -> None:
        self.info = p4info_pb2.P4Info()
        self._ids = iter(range(1, 1000))
        self.actions: dict[str, int] = {}

    def _preamble(self, obj: Any, kind: int, name: str) -> None:
        obj.preamble.id = kind + next(self._ids)
        obj.preamble.name = name

    def action(self, name: str, params: list[tuple[str, int]]) -> None:
        a = self.info.actions.add()
        self._preamble(a, 0x01000000, name)
        self.actions[name] = a.preamble.id
        a.preamble.alias = name.rsplit(".", 1)[-1]
        for i, (pname, width) in enumerate(params, start=1):
            p = a.params.add()
            p.id, p.name, p.bitwidth = i, pname, width

    def table(self, name: str, size: int, fields: list[Field], actions: list[str]
              ) -> p4info_pb2.Table:
        t = self.info.tables.add()
        self._preamble(t, 0x02000000, name)
        t.size = size
        for i, (key, width, kind) in enumerate(fields, start=1):
            mf = t.match_fields.add()
            mf.id, mf.name, mf.bitwidth, mf.match_type = i, key, width, kind
        for act in actions:
            t.action_refs.add().id = self.actions[act]
        return t

    def counter(self, name: str, size: int) -> p4info_pb2.Counter:
        c = self.info.counters.add()
        self._preamble(c, 0x13000000, name)
        c.size = size
        return c

    def register(self, name: str, size: int) -> None:
        r = self.info.registers.add()
        self._preamble(r, 0x15000000, name)
        r.size = size

    def digest(self, name: str, members: list[tuple[str, int]]) -> None:
        d = self.info.digests.add()
        self._preamble(d, 0x05000000, name)
        d.type_spec.struct.name = name
        struct = self.info.type_info.structs[name]
        for mname, width in members:
            m = struct.members.add()
            m.name = mname
            m.type_spec.bitstring.bit.bitwidth = width

    def packet_out(self, name: str, metadata: list[tuple[str, int]]) -> None:
        po = self.info.controller_packet_metadata.add()
        self._preamble(po, 0x40000000, name)
        for i, (mname, width) in enumerate(metadata, start=1):
            m = po.metadata.add()
            m.id, m.name, m.bitwidth = i, mname, width


def _annotate(preamble: p4info_pb2.Preamble, name: str, pairs: dict[str, int]) -> None:
    """A structured annotation @name[key = value, ...] of integers."""
    note = preamble.structured_annotations.add()
    note.name = name
    for key, value in pairs.items():
        kv = note.kv_pair_list.kv_pairs.add()
        kv.key, kv.value.int64_value = key, value


def _actions(b: _Builder) -> None:
    per_path = range(1, MAX_PATHS + 1)
    b.action(pl.ACTION_TO_HOST, [("port", 9), ("smac", 48), ("dmac", 48)])
    b.action(pl.ACTION_SET_SWITCH_CONFIG, [("edge_id", 8)])
    b.action(pl.ACTION_TRANSIT, [("port", 9)])
    b.action(pl.ACTION_TO_PATHS, [("dst_edge", 8)])
    b.action(pl.ACTION_VIA_PATH, [("dst_edge", 8), ("path_id", 8)])
    b.action(pl.ACTION_SET_WEIGHTS, [(f"end_{i}", 17) for i in per_path]
             + [("weighted_paths", 8), ("mode", 8), ("flowlet_gap_us", 32), ("syn_copy", 8)])
    b.action(pl.ACTION_SET_CLASS, [("class_id", 8)])
    b.action(pl.ACTION_SET_MVQS, [(f"{n}_{i}", 32) for n in pl.MVQS_PARAMS for i in per_path])
    b.action(pl.ACTION_SET_PATH_PORT, [("port", 9)])
    b.action(pl.ACTION_FABRIC_PORT, [])
    b.action(pl.ACTION_SET_REPORT_INTERVAL, [("interval_us", 48)])
    b.action(pl.ACTION_SET_RTT_INTERVAL, [("interval_us", 48)])
    b.action(pl.ACTION_SET_DEAD_AFTER, [("dead_after_us", 48)])
    b.action(pl.ACTION_PIN_SUBFLOW, [("path_id", 8)])
    b.action(pl.ACTION_SET_CA, [(n, 32) for n in pl.CA_COEFFICIENTS]
             + [(f"{n}_{i}", 32) for n in pl.CA_PATH_PARAMS for i in per_path])
    b.action(pl.ACTION_NO_CA, [])


def _tables(b: _Builder) -> None:
    b.table(pl.TABLE_SWITCH_CONFIG, 1, [("ingress_port", 9, _TERNARY)],
            [pl.ACTION_SET_SWITCH_CONFIG])
    b.table(pl.TABLE_TRANSIT, MAX_EDGES * MAX_EDGES * MAX_PATHS,
            [(k, 8, _EXACT) for k in pl.TRANSIT_KEYS], [pl.ACTION_TRANSIT])
    b.table(pl.TABLE_NEXTHOP, MAX_EDGES * MAX_PATHS, [(k, 8, _EXACT) for k in pl.NEXTHOP_KEYS],
            [pl.ACTION_SET_PATH_PORT])
    per_class = [(k, 8, _EXACT) for k in pl.CLASS_TABLE_KEYS]
    b.table(pl.TABLE_WEIGHTS, MAX_EDGES * MAX_CLASSES, per_class, [pl.ACTION_SET_WEIGHTS])
    b.table(pl.TABLE_MVQS, MAX_EDGES * MAX_CLASSES, per_class, [pl.ACTION_SET_MVQS])
    ca = b.table(pl.TABLE_CA, MAX_EDGES * MAX_CLASSES, per_class,
                 [pl.ACTION_SET_CA, pl.ACTION_NO_CA])
    _annotate(ca.preamble, pl.ANNOTATION_CA_UNITS, CA_UNITS)  # as ca_select.p4 declares them
    b.table(pl.TABLE_ROUTE, 64, [("dst_addr", 32, _LPM)],
            [pl.ACTION_TO_HOST, pl.ACTION_TO_PATHS, pl.ACTION_VIA_PATH])
    b.table(pl.TABLE_PATH_INGRESS, 64, [("ingress_port", 9, _EXACT)], [pl.ACTION_FABRIC_PORT])
    for table, act in ((pl.TABLE_REPORT_CONFIG, pl.ACTION_SET_REPORT_INTERVAL),
                       (pl.TABLE_RTT_CONFIG, pl.ACTION_SET_RTT_INTERVAL)):
        b.table(table, MAX_EDGES * MAX_PATHS, [(k, 8, _EXACT) for k in pl.REPORT_KEYS], [act])
    b.table(pl.TABLE_LIVENESS_CONFIG, MAX_EDGES * MAX_PATHS,
            [(k, 8, _EXACT) for k in pl.LIVENESS_KEYS], [pl.ACTION_SET_DEAD_AFTER])
    b.table(pl.TABLE_TRAFFIC_CLASS, 256,
            [("dscp", 6, _TERNARY), ("src_addr", 32, _TERNARY), ("dst_addr", 32, _TERNARY),
             ("protocol", 8, _TERNARY), ("src_port", 16, _RANGE), ("dst_port", 16, _RANGE)],
            [pl.ACTION_SET_CLASS])
    b.table(pl.TABLE_SUBFLOW_PIN, 1024,
            [(k, w, _EXACT) for k, w in zip(pl.SUBFLOW_PIN_KEYS, (32, 32, 16, 16), strict=True)],
            [pl.ACTION_PIN_SUBFLOW])


def _counters_and_registers(b: _Builder) -> None:
    for name in (pl.COUNTER_TX, pl.COUNTER_RX, pl.COUNTER_PROBE_SKIPPED):
        b.counter(name, (MAX_EDGES + 1) * (MAX_PATHS + 1))  # EDGE_PATH cells (sizes.p4)
    b.counter(pl.COUNTER_PORT_TX, 64)  # PORT_COUNTER_SIZE (sizes.p4)
    # drop_reason with a @drop_reasons annotation of the real program's shape (the reasons
    # here are a sample; tests/unit/p4rt/test_p4info.py checks the compiled program's).
    drops = b.counter(pl.COUNTER_DROP_REASON, 3)
    _annotate(drops.preamble, pl.ANNOTATION_DROP_REASONS, {"TRUNCATED": 1, "IPV4_CHECKSUM": 2})
    for name in (pl.REGISTER_TX_SEQ, pl.REGISTER_PROBE_SEQ, *pl.REGISTERS_PATH_MONITOR,
                 *pl.REGISTERS_RTT_MONITOR, *pl.REGISTERS_LIVENESS, *pl.REGISTERS_PATH_SELECT):
        b.register(name, MAX_PATHS + 1)


def synthetic_p4info() -> p4info_pb2.P4Info:
    """A P4Info with the names of mpsched.p4rt.pipeline and the real program's shapes."""
    b = _Builder()
    _actions(b)
    _tables(b)
    modes = b.info.type_info.serializable_enums[pl.ENUM_POLICY_MODE]
    modes.underlying_type.bitwidth = 8
    for value, name in enumerate(("HASH", "FLOWLET", "RR", "VQ", "CA")):
        m = modes.members.add()
        m.name, m.value = name, bytes([value])
    _counters_and_registers(b)
    b.digest(pl.DIGEST_PATH_REPORT, PATH_REPORT_MEMBERS)
    b.digest(pl.DIGEST_RTT_REPORT, RTT_REPORT_MEMBERS)
    for name in pl.DIGESTS_MPTCP:
        b.digest(name, MPTCP_MEMBERS[name])
    b.packet_out(pl.PACKET_OUT, [(pl.PACKET_OUT_PATH, 8), (pl.PACKET_OUT_EDGE, 8)])
    return b.info


def _status(code: int, message: str, details: list[p4runtime_pb2.Error]) -> grpc.Status:
    status = status_pb2.Status(code=code, message=message)
    for d in details:
        status.details.add().Pack(d)

    class _S(grpc.Status):
        pass

    s = _S()
    s.code = grpc.StatusCode.UNKNOWN
    s.details = message
    s.trailing_metadata = (("grpc-status-details-bin", status.SerializeToString()),)
    return s


class FakeP4Runtime(p4runtime_pb2_grpc.P4RuntimeServicer):
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.config: p4runtime_pb2.ForwardingPipelineConfig | None = None
        self.entries: dict[tuple[int, bytes], p4runtime_pb2.TableEntry] = {}
        self.clone_sessions: dict[int, p4runtime_pb2.CloneSessionEntry] = {}
        self.counters: dict[int, dict[int, tuple[int, int]]] = {}
        self.writes = 0
        self.digests: dict[int, p4runtime_pb2.DigestEntry] = {}
        self.packets_out: list[p4runtime_pb2.PacketOut] = []
        self.pipeline_pushes = 0

    def StreamChannel(self, request_iterator, context):  # noqa: N802
        for request in request_iterator:
            if request.HasField("packet"):
                with self.lock:
                    self.packets_out.append(request.packet)
            if request.HasField("arbitration"):
                response = p4runtime_pb2.StreamMessageResponse()
                response.arbitration.CopyFrom(request.arbitration)
                response.arbitration.status.code = code_pb2.OK
                yield response

    def SetForwardingPipelineConfig(self, request, context):  # noqa: N802
        with self.lock:
            self.pipeline_pushes += 1
            self.config = request.config
            self.entries.clear()
            self.clone_sessions.clear()
            self.digests.clear()
        return p4runtime_pb2.SetForwardingPipelineConfigResponse()

    def GetForwardingPipelineConfig(self, request, context):  # noqa: N802
        """As BMv2: FAILED_PRECONDITION without a pipeline; the cookie when one was given."""
        response = p4runtime_pb2.GetForwardingPipelineConfigResponse()
        with self.lock:
            if self.config is None:
                context.abort(grpc.StatusCode.FAILED_PRECONDITION, "no forwarding pipeline")
            if self.config.HasField("cookie"):
                response.config.cookie.CopyFrom(self.config.cookie)
        return response

    def restart(self) -> None:
        """What a switch restart loses: the program, its entries, digests and counters."""
        with self.lock:
            self.config = None
            self.entries.clear()
            self.clone_sessions.clear()
            self.digests.clear()
            self.counters.clear()

    def _clone_session(self, update) -> p4runtime_pb2.Error:
        """A clone session's INSERT (ALREADY_EXISTS if held) or MODIFY (NOT_FOUND if not),
        as BMv2's replication engine answers; held in `clone_sessions` (id -> entry)."""
        entry = update.entity.packet_replication_engine_entry.clone_session_entry
        exists = entry.session_id in self.clone_sessions
        if update.type == p4runtime_pb2.Update.INSERT and exists:
            return p4runtime_pb2.Error(canonical_code=code_pb2.ALREADY_EXISTS,
                                       message="session exists")
        if update.type != p4runtime_pb2.Update.INSERT and not exists:
            return p4runtime_pb2.Error(canonical_code=code_pb2.NOT_FOUND, message="no session")
        if update.type == p4runtime_pb2.Update.DELETE:
            del self.clone_sessions[entry.session_id]
        else:
            self.clone_sessions[entry.session_id] = entry
        return p4runtime_pb2.Error(canonical_code=code_pb2.OK)

    def Write(self, request, context):  # noqa: N802
        errors, failed = [], False
        with self.lock:
            self.writes += 1
            for update in request.updates:
                if update.entity.HasField("digest_entry"):
                    digest = update.entity.digest_entry
                    self.digests[digest.digest_id] = digest
                    errors.append(p4runtime_pb2.Error(canonical_code=code_pb2.OK))
                    continue
                if update.entity.HasField("packet_replication_engine_entry"):
                    err = self._clone_session(update)
                    failed |= err.canonical_code != code_pb2.OK
                    errors.append(err)
                    continue
                entry = update.entity.table_entry
                key = (entry.table_id, b"".join(m.SerializeToString() for m in entry.match))
                err = p4runtime_pb2.Error(canonical_code=code_pb2.OK)
                exists = key in self.entries
                if update.type == p4runtime_pb2.Update.INSERT and exists:
                    err = p4runtime_pb2.Error(
                        canonical_code=code_pb2.ALREADY_EXISTS, message="entry exists"
                    )
                elif (
                    update.type in (p4runtime_pb2.Update.MODIFY, p4runtime_pb2.Update.DELETE)
                    and not exists
                ):
                    err = p4runtime_pb2.Error(
                        canonical_code=code_pb2.NOT_FOUND, message="no such entry"
                    )
                elif update.type == p4runtime_pb2.Update.DELETE:
                    del self.entries[key]
                else:
                    self.entries[key] = entry
                failed |= err.canonical_code != code_pb2.OK
                errors.append(err)
        if failed:
            context.abort_with_status(_status(code_pb2.UNKNOWN, "write error", errors))
        return p4runtime_pb2.WriteResponse()

    def Read(self, request, context):  # noqa: N802
        response = p4runtime_pb2.ReadResponse()
        with self.lock:
            for entity in request.entities:
                if entity.HasField("table_entry"):
                    for (tid, _), e in self.entries.items():
                        if tid == entity.table_entry.table_id:
                            response.entities.add().table_entry.CopyFrom(e)
                elif entity.HasField("counter_entry"):
                    cid = entity.counter_entry.counter_id
                    for index, (packets, nbytes) in self.counters.get(cid, {}).items():
                        out = response.entities.add().counter_entry
                        out.counter_id = cid
                        out.index.index = index
                        out.data.packet_count, out.data.byte_count = packets, nbytes
        yield response


class FakeServer:
    """The fake on 127.0.0.1:<free port>; start()/stop() may be repeated (a 'restart')."""

    def __init__(self) -> None:
        self.port = free_port()
        self.address = f"127.0.0.1:{self.port}"
        self.servicer = FakeP4Runtime()
        self.server: grpc.Server | None = None

    def start(self) -> FakeServer:
        self.server = grpc.server(futures.ThreadPoolExecutor(max_workers=8))
        p4runtime_pb2_grpc.add_P4RuntimeServicer_to_server(self.servicer, self.server)
        self.server.add_insecure_port(self.address)
        self.server.start()
        return self

    def stop(self) -> None:
        if self.server is not None:
            self.server.stop(grace=0).wait()
            self.server = None
