"""The controller programs a fabric on real BMv2 switches: 3 leaves x 2 spines, each a
simple_switch_grpc of its own (no links between them: the tables are read back, traffic is
the Mininet fabric testbed's to show). Every switch gets the program and its forwarding from
the fabric's routing (src/mpsched/controller/fabric/routes.py); each leaf a placement per
destination edge; a
link taken administratively down re-routes and rewrites only the changed entries."""

from __future__ import annotations

import time

import pytest
import requests

from mpsched.fabric.files import parse_fabric
from mpsched.fabric.netdesc import describe
from mpsched.p4rt.client import P4RuntimeClient, param_value
from mpsched.p4rt.p4info import P4Info
from mpsched.p4rt.pipeline import (
    TABLE_LIVENESS_CONFIG,
    TABLE_NEXTHOP,
    TABLE_SWITCH_CONFIG,
    TABLE_TRANSIT,
    TABLE_WEIGHTS,
)
from mpsched.proc.bmv2 import Bmv2Switch
from tests.conftest import AUTH, require
from tests.controllers import start_controller

pytestmark = [pytest.mark.integration, pytest.mark.usefixtures("machine_load")]

SECTION = {"leaf_spine": {"leaves": 3, "spines": 2, "hosts_per_leaf": 1,
                          "link": {"rate_mbps": 10, "delay_ms": 1}}}
NAMES = ["leaf1", "leaf2", "leaf3", "spine1", "spine2"]


@pytest.fixture
def fabric_switches(tmp_path, artifacts):
    """One BMv2 per switch of the fabric, without ports (device ids 1..5)."""
    from mpsched.proc.cleanup import Registry

    require("root", "simple_switch_grpc")
    registry = Registry()
    started: list[Bmv2Switch] = []
    try:
        for device_id, name in enumerate(NAMES, start=1):
            sw = Bmv2Switch(f"itest-{name}", device_id, {}, tmp_path, registry=registry)
            sw.start()
            started.append(sw)
        yield {name: sw for name, sw in zip(NAMES, started, strict=True)}
    finally:
        for sw in started:
            sw.stop()
        registry.close()


def start(tmp_path, artifacts, switches: dict[str, Bmv2Switch]):
    """A controller on the fabric's description, once every switch of it is ready."""
    net = describe(SECTION, parse_fabric(SECTION), lambda i: switches[NAMES[i - 1]].grpc_address)

    def ready(states: list[dict]) -> bool:
        return [s["state"] for s in states] == ["ready"] * len(NAMES)

    return start_controller(tmp_path, artifacts, net.to_dict(), ready=ready, timeout=60,
                            interval=0.3)


def read(sw: Bmv2Switch, p4info: P4Info, table: str) -> list:
    client = P4RuntimeClient(sw.grpc_address, sw.device_id, p4info)
    client.connect(primary=False)
    try:
        return client.read_table(table)
    finally:
        client.close()


def nexthops(sw: Bmv2Switch, p4info: P4Info) -> dict[tuple[int, int], int]:
    """path_nexthop as {(dst_edge, path_id): port}."""
    out = {}
    for entry in read(sw, p4info, TABLE_NEXTHOP):
        key = tuple(int.from_bytes(m.exact.value, "big") for m in entry.match)
        out[key] = param_value(entry, 1)
    return out


def liveness(sw: Bmv2Switch, p4info: P4Info) -> dict[tuple[int, int], int]:
    """liveness_config as {(peer_edge, path_id): dead_after_us}."""
    out = {}
    for entry in read(sw, p4info, TABLE_LIVENESS_CONFIG):
        key = tuple(int.from_bytes(m.exact.value, "big") for m in entry.match)
        out[key] = param_value(entry, 1)
    return out


def test_the_controller_programs_a_leaf_spine_and_reroutes_a_link(
        fabric_switches, tmp_path, artifacts):
    p4info = P4Info.from_file(artifacts.p4info)
    ctl = start(tmp_path, artifacts, fabric_switches)
    base = ctl.base
    try:
        leaf1, spine1 = fabric_switches["leaf1"], fabric_switches["spine1"]
        assert len(read(leaf1, p4info, TABLE_SWITCH_CONFIG)) == 1
        assert read(spine1, p4info, TABLE_SWITCH_CONFIG) == []  # transit only
        # leaf1: (dst_edge, path) -> spine port (host 1 on port 1, spine j on port 1 + j)
        assert nexthops(leaf1, p4info) == {(2, 1): 2, (2, 2): 3, (3, 1): 2, (3, 2): 3}
        assert len(read(spine1, p4info, TABLE_TRANSIT)) == 6  # every pair's path 1
        assert read(leaf1, p4info, TABLE_TRANSIT) == []
        weights = read(leaf1, p4info, TABLE_WEIGHTS)
        assert sorted(int.from_bytes(e.match[0].exact.value, "big") for e in weights) == [2, 3]
        assert read(spine1, p4info, TABLE_WEIGHTS) == []
        states = {s["name"]: s for s in requests.get(base + "/switches", timeout=5).json()}
        assert states["spine1"]["probes"] is None  # a transit switch has no prober
        assert states["leaf1"]["probes"] is not None
        # no traffic: every pair idle, its paths probed every 200 ms and dead after 1 s
        # (src/mpsched/controller/telemetry/regimes.py)
        pairs = requests.get(base + "/pairs", timeout=5).json()
        assert {p["probing"] for p in pairs} == {"idle"} and len(pairs) == 6
        assert liveness(leaf1, p4info) == {(e, p): 1_000_000 for e in (2, 3) for p in (1, 2)}
        sent = states["leaf1"]["probes"]["sent"]
        time.sleep(1.0)
        states = {s["name"]: s for s in requests.get(base + "/switches", timeout=5).json()}
        # 4 (destination, path) every 200 ms: about 20 in a second (every 10 ms: 400)
        assert states["leaf1"]["probes"]["sent"] - sent <= 40, (sent, states["leaf1"])

        links = requests.get(base + "/links", timeout=5).json()
        assert len(links) == 6 and all(link["admin"] == "up" for link in links)
        r = requests.put(base + "/links/leaf1-spine2/admin", json={"state": "down"},
                         headers=AUTH, timeout=15)
        assert r.status_code == 200, r.text
        assert r.json()["admin"] == "down"
        assert nexthops(leaf1, p4info) == {(2, 1): 2, (3, 1): 2}  # path 2 is gone
        assert len(read(fabric_switches["spine2"], p4info, TABLE_TRANSIT)) == 2  # 2 <-> 3
        pair = requests.get(base + "/pairs/leaf1-%3Eleaf3", timeout=5).json()
        assert [p["id"] for p in pair["paths"]] == [1]
        assert pair["placement"]["0"]["weights"]["2"] == 0  # out of service for leaf1 -> leaf3
        other = requests.get(base + "/pairs/leaf2->leaf3", timeout=5).json()
        assert other["placement"]["0"]["weights"]["2"] > 0  # leaf2 -> leaf3 keeps its path 2
        r = requests.put(base + "/links/leaf1-spine2/admin", json={"state": "up"},
                         headers=AUTH, timeout=15)
        assert r.status_code == 200, r.text
        assert nexthops(leaf1, p4info) == {(2, 1): 2, (2, 2): 3, (3, 1): 2, (3, 2): 3}
        time.sleep(0.5)
        assert ctl.proc.poll() is None
    finally:
        ctl.stop()
