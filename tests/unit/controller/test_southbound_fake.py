"""P4Runtime client and controller logic against a fake P4Runtime server (pure logic)."""

from __future__ import annotations

import threading
import time

import pytest

from mpsched import addressing as ap
from mpsched.controller.app.core import (
    Controller,
    ControllerSettings,
    NotFoundError,
    UnavailableError,
)
from mpsched.netcfg import NetCfg
from mpsched.p4rt.client import CounterValue, P4RuntimeClient, P4RuntimeError, param_value
from mpsched.p4rt.pipeline import (
    ACTION_SET_WEIGHTS,
    COUNTER_DROP_REASON,
    COUNTER_RX,
    COUNTER_TX,
    TABLE_LIVENESS_CONFIG,
    TABLE_NEXTHOP,
    TABLE_ROUTE,
    TABLE_WEIGHTS,
    Pipeline,
)
from tests import waiting
from tests.conftest import AUTH, token_file
from tests.netdesc import edge_switch
from tests.unit.controller.helpers import JOIN_SRC


def wait_until(predicate, timeout=30.0):
    """True once `predicate` holds (polled; a generous deadline, for a busy machine)."""
    try:
        return bool(waiting.wait_until(predicate, timeout=timeout, interval=0.02))
    except waiting.WaitTimeoutError:
        return False


def test_client_writes_reads_and_reports_per_update_errors(server, p4info, tmp_path):
    pipeline = Pipeline(p4info)
    json_file = tmp_path / "p.json"
    json_file.write_text("{}")
    with P4RuntimeClient(server.address, 1, p4info) as client:
        client.set_pipeline(str(json_file))
        client.insert(pipeline.path_nexthop(2, 1, 2), pipeline.path_nexthop(2, 2, 3))
        entries = client.read_table(TABLE_NEXTHOP)
        assert len(entries) == 2
        with pytest.raises(P4RuntimeError, match="update 1: ALREADY_EXISTS"):
            client.insert(pipeline.path_nexthop(2, 3, 4), pipeline.path_nexthop(2, 1, 2))
        assert client.clear_table(TABLE_NEXTHOP) == 3
        server.servicer.counters[p4info.counter_id(COUNTER_TX)] = {1: (10, 1500)}
        assert client.read_counter(COUNTER_TX)[1].bytes == 1500


def test_client_reads_several_counters_in_one_read(server, p4info):
    server.servicer.counters[p4info.counter_id(COUNTER_TX)] = {1: (10, 1500), 7: (1, 64)}
    server.servicer.counters[p4info.counter_id(COUNTER_RX)] = {3: (2, 128)}
    with P4RuntimeClient(server.address, 1, p4info) as client:
        values = client.read_counters([COUNTER_TX, COUNTER_RX, COUNTER_DROP_REASON])
    assert values == {COUNTER_TX: {1: CounterValue(10, 1500), 7: CounterValue(1, 64)},
                      COUNTER_RX: {3: CounterValue(2, 128)}, COUNTER_DROP_REASON: {}}


def test_client_names_missing_parameters(p4info):
    client = P4RuntimeClient("127.0.0.1:1", 1, p4info)
    entry = Pipeline(p4info).path_nexthop(2, 1, 2)
    entry.params = {}
    with pytest.raises(ValueError, match="needs parameter 'port'"):
        client.build_table_entry(entry)


def test_no_server_is_a_clear_error(p4info):
    client = P4RuntimeClient("127.0.0.1:1", 1, p4info, timeout=0.5)
    with pytest.raises(P4RuntimeError, match="no P4Runtime server"):
        client.connect()


def _net(address: str) -> NetCfg:
    paths = [{"id": 1, "port": 2}, {"id": 2, "port": 3}]
    return NetCfg.from_dict({"switches": [edge_switch(1, address, paths, with_host=True),
                                          edge_switch(2)]})


def _ends(server, p4info) -> list[int]:
    (entry,) = (
        e
        for (tid, _), e in server.servicer.entries.items()
        if tid == p4info.table_id(TABLE_WEIGHTS)
    )
    return [param_value(entry, p.id) for p in p4info.action_params(ACTION_SET_WEIGHTS)]


def _sessions(server, p4info) -> dict[tuple[int, int], int]:
    """The switch's clone sessions: (edge, path) of the session id -> its replica's port."""
    pipeline = Pipeline(p4info)
    cells = {pipeline.edge_path_index(e, p): (e, p)
             for e in range(1, pipeline.max_edges + 1)
             for p in range(1, pipeline.max_paths + 1)}
    return {cells[sid]: s.replicas[0].egress_port
            for sid, s in server.servicer.clone_sessions.items()}


def _one_switch_controller(server, p4info, tmp_path) -> Controller:
    """A controller (not started) for s1 of `_net`, on the fake server."""
    json_file = tmp_path / "p.json"
    json_file.write_text("{}")
    net = _net(server.address)
    return Controller(
        NetCfg(switches=net.switches[:1]),
        Pipeline(p4info),
        str(json_file),
        ControllerSettings(poll_interval=0.05, write_timeout=2),
    )


def test_controller_programs_polls_and_reprograms_after_restart(server, p4info, tmp_path):
    ctl = _one_switch_controller(server, p4info, tmp_path)
    ctl.start()
    try:
        assert ctl.agents[0].wait_ready(5)
        tables = {p4info.table_id(TABLE_ROUTE), p4info.table_id(TABLE_NEXTHOP)}
        assert sum(1 for tid, _ in server.servicer.entries if tid in tables) == 3
        assert _ends(server, p4info)[:2] == [32768, 65536]
        assert _sessions(server, p4info) == {(2, 1): 2, (2, 2): 3}
        # s1's path 1 towards its peer, edge 2 (the counters are per (peer edge, path))
        cell = Pipeline(p4info).edge_path_index(2, 1)
        server.servicer.counters[p4info.counter_id(COUNTER_TX)] = {cell: (5, 5000), 1: (9, 9)}
        assert wait_until(lambda: ctl.path(1).packets == 5)

        assert ctl.set_weight(2, 0).weight == 0
        assert _ends(server, p4info)[:2] == [65536, 65536]

        # The switch restarts (state lost): the agent reconnects, pushes the program again
        # and reinstalls everything, including the current weights.
        server.stop()
        server.servicer.restart()
        assert wait_until(lambda: ctl.agents[0].status.state == "down")
        server.start()
        assert wait_until(lambda: ctl.agents[0].status.state == "ready", timeout=10)
        assert _ends(server, p4info)[:2] == [65536, 65536]
        assert server.servicer.pipeline_pushes == 2
        assert ctl.agents[0].programmed.how == "pushed"
        assert _sessions(server, p4info) == {(2, 1): 2, (2, 2): 3}
    finally:
        ctl.stop()


def _entries(server) -> dict:
    return {key: entry.SerializeToString() for key, entry in server.servicer.entries.items()}


def test_a_restarted_controller_keeps_the_pipeline_and_writes_only_the_difference(
    server, p4info, tmp_path
):
    """A switch that already runs the program is not wiped: the controller reads its tables
    back and repairs only what differs (here: one entry lost, one changed, one stray)."""
    first = _one_switch_controller(server, p4info, tmp_path)
    first.start()
    try:
        assert first.agents[0].wait_ready(5)
        assert first.agents[0].programmed.how == "pushed"
    finally:
        first.stop()
    wanted = _entries(server)
    pipeline = Pipeline(p4info)
    with P4RuntimeClient(server.address, 1, p4info) as client:
        client.delete(pipeline.path_nexthop(2, 1, 2))
        client.modify(pipeline.path_nexthop(2, 2, 9))
        client.insert(pipeline.path_nexthop(2, 3, 4))
    assert _entries(server) != wanted

    second = _one_switch_controller(server, p4info, tmp_path)
    second.start()
    try:
        assert second.agents[0].wait_ready(5)
        programmed = second.agents[0].programmed
        assert programmed.how == "reconciled"
        assert programmed.detail.startswith("1 inserted, 1 modified, 1 deleted, ")
        assert server.servicer.pipeline_pushes == 1
        assert _entries(server) == wanted
        assert second.switches()[0].programmed.how == "reconciled"
    finally:
        second.stop()


def test_another_program_on_the_switch_is_replaced(server, p4info, tmp_path):
    ctl = _one_switch_controller(server, p4info, tmp_path)
    ctl.start()
    try:
        assert ctl.agents[0].wait_ready(5)
    finally:
        ctl.stop()
    ctl = _one_switch_controller(server, p4info, tmp_path)
    (tmp_path / "p.json").write_text('{"another": "program"}')  # a new BMv2 JSON, a new cookie
    ctl.start()
    try:
        assert ctl.agents[0].wait_ready(5)
        assert ctl.agents[0].programmed.how == "pushed"
        assert server.servicer.pipeline_pushes == 2
    finally:
        ctl.stop()


def test_set_weight_reports_unreachable_switch(server, p4info, tmp_path):
    json_file = tmp_path / "p.json"
    json_file.write_text("{}")
    ctl = Controller(
        _net(server.address),
        Pipeline(p4info),
        str(json_file),
        ControllerSettings(poll_interval=0.05, write_timeout=1),
    )
    ctl.start()
    try:
        assert ctl.agents[0].wait_ready(5)
        with pytest.raises(UnavailableError, match="s2"):
            ctl.set_weight(1, 3)
        assert ctl.weights()[1] == 3  # intended state kept for when s2 comes back
        assert _ends(server, p4info)[:2] == [49152, 65536]
        with pytest.raises(ValueError):
            ctl.set_weight(1, 256)
    finally:
        ctl.stop()


def test_controller_process_serves_rest(server, p4info, tmp_path):
    """`python -m mpsched.controller` end to end on os-ken's native hub (the only one it
    runs on: src/mpsched/controller/__main__.py's check_hub)."""
    import json
    import os
    import subprocess

    import requests
    from google.protobuf import text_format

    from mpsched.controller.__main__ import command as controller_command
    from mpsched.proc.bmv2 import free_port

    (tmp_path / "p4info.txt").write_text(text_format.MessageToString(p4info.message))
    (tmp_path / "p.json").write_text("{}")
    net = _net(server.address)
    (tmp_path / "net.json").write_text(json.dumps({"switches": [net.to_dict()["switches"][0]]}))
    port = free_port()
    proc = subprocess.Popen(
        controller_command(
            tmp_path / "net.json",
            port,
            0.1,
            tmp_path / "p4info.txt",
            tmp_path / "p.json",
            token_file(tmp_path),
        ),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env={k: v for k, v in os.environ.items() if k != "OSKEN_HUB_TYPE"},
    )
    base = f"http://127.0.0.1:{port}"
    try:

        def ready():
            try:
                return requests.get(base + "/switches", timeout=1).json()[0]["state"] == "ready"
            except requests.RequestException:
                return False

        assert wait_until(ready, timeout=15), "controller not ready"
        r = requests.put(headers=AUTH, url=base + "/paths/1/weight", json={"weight": 0}, timeout=5)
        assert r.status_code == 200, r.text
        assert _ends(server, p4info)[:2] == [0, 65536]
        # Many REST calls while the native threads poll: the hub stays live.
        for _ in range(20):
            assert requests.get(base + "/paths", timeout=2).status_code == 200
        proc.terminate()
        assert proc.wait(timeout=10) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()


def test_client_builds_packet_out_from_the_p4info(p4info):
    client = P4RuntimeClient("127.0.0.1:1", 1, p4info)
    request = client.build_packet_out(b"abc", {"path_id": 3, "dst_edge": 2})
    assert request.packet.payload == b"abc"
    meta = {m.metadata_id: int.from_bytes(m.value, "big") for m in request.packet.metadata}
    assert meta == {1: 3, 2: 2}
    with pytest.raises(ValueError, match="path_id"):
        client.build_packet_out(b"abc", {"dst_edge": 2})
    with pytest.raises(ValueError, match="no metadata"):
        client.build_packet_out(b"abc", {"path_id": 1, "dst_edge": 2, "bogus": 1})
    with pytest.raises(P4RuntimeError, match="primary"):
        client.packet_out(b"abc", {"path_id": 1, "dst_edge": 2})


def test_agent_probes_every_path_while_the_session_lasts(server, p4info, tmp_path):
    ctl = _one_switch_controller(server, p4info, tmp_path)
    ctl.start()
    try:
        assert ctl.agents[0].wait_ready(5)
        live = p4info.table_id(TABLE_LIVENESS_CONFIG)
        assert sum(1 for tid, _ in server.servicer.entries if tid == live) == 2
        # PROBE_INTERVAL_S = 10 ms: ~100 probes per path and second
        assert wait_until(lambda: len(server.servicer.packets_out) >= 40)
        # table writes are not held up by the probes (no lock between them): the write
        # completes while probes go on, however slowly a busy machine runs both
        result: list = []
        writer = threading.Thread(target=lambda: result.append(ctl.set_weight(2, 0)))
        before = len(server.servicer.packets_out)
        writer.start()
        writer.join(30)
        assert not writer.is_alive() and result[0].weight == 0
        assert wait_until(lambda: len(server.servicer.packets_out) > before)
        paths = {int.from_bytes(p.metadata[0].value, "big") for p in server.servicer.packets_out}
        assert paths == {1, 2}
    finally:
        ctl.stop()
    prober = ctl.agents[0].prober
    assert prober is not None
    assert wait_until(lambda: not prober.is_alive())
    sent = prober.sent
    time.sleep(0.1)
    assert prober.sent == sent


def _pins(server, p4info) -> dict[tuple[int, int], int]:
    """(src port, dst port) -> path of every subflow_pin entry on the fake switch."""
    from mpsched.p4rt.p4info import decode_uint
    from mpsched.p4rt.pipeline import TABLE_SUBFLOW_PIN

    fields = {f.name: f.id for f in p4info.match_fields(TABLE_SUBFLOW_PIN)}
    out = {}
    for (tid, _), e in server.servicer.entries.items():
        if tid != p4info.table_id(TABLE_SUBFLOW_PIN):
            continue
        match = {m.field_id: decode_uint(m.exact.value) for m in e.match}
        key = (match[fields["src_port"]], match[fields["dst_port"]])
        out[key] = decode_uint(e.action.action.params[0].value)
    return out


def test_mptcp_reports_pin_subflows_apart_repin_and_unpin(server, p4info, tmp_path):
    """A SYN/ACK report and a join: two subflows pinned to paths 1 and 2 in both directions;
    path 1 taken down: the initial subflow moves to path 2; steering off removes every
    pin, on again restores them; an RST of the join unpins it."""
    from mpsched.controller.scheduling.mptcp import Flow, MptcpReport, token

    ctl = _one_switch_controller(server, p4info, tmp_path)
    ctl.start()
    try:
        assert ctl.agents[0].wait_ready(5)
        initial = Flow(ap.H1_IP, 40000, ap.H2_IP, 5201)
        join = Flow(JOIN_SRC, 40001, ap.H2_IP, 5201)
        now = time.time()
        ctl.on_mptcp(MptcpReport("capable", initial.reversed(), now, tcp_flags=0x12,
                                     key_a=7, switch="s2"))
        ctl.on_mptcp(MptcpReport("join", join, now, tcp_flags=0x02, token=token(7),
                                     addr_id=1, switch="s1"))
        want = {(40000, 5201): 1, (5201, 40000): 1, (40001, 5201): 2, (5201, 40001): 2}
        assert wait_until(lambda: _pins(server, p4info) == want), _pins(server, p4info)
        (conn,) = ctl.mptcp_connections().connections
        assert [s.path_id for s in conn.subflows] == [1, 2]
        assert [s.pair for s in conn.subflows] == ["s1", "s1"]  # the sender's edge

        ctl.set_admin(1, False)
        assert wait_until(lambda: set(_pins(server, p4info).values()) == {2})
        ctl.set_admin(1, True)

        ctl.set_params({"mptcp": {"steering": False}})
        assert _pins(server, p4info) == {}
        assert ctl.mptcp_connections().steering is False
        ctl.set_params({"mptcp": {"steering": True}})
        assert len(_pins(server, p4info)) == 4

        ctl.on_mptcp(MptcpReport("close", join, now, tcp_flags=0x14, switch="s1"))
        assert wait_until(lambda: set(_pins(server, p4info)) == {(40000, 5201), (5201, 40000)})
        with pytest.raises(NotFoundError):
            ctl.mptcp_connection(99)
    finally:
        ctl.stop()
