"""The controller (os-ken app on its native and eventlet hubs, gRPC in native threads)
against a real BMv2.

Starts simple_switch_grpc on veths, runs `python -m mpsched.controller` as a
process, and checks through REST and through an independent P4Runtime read
that the pipeline, routes and weights reach the switch, and that counters
flow back.
"""

from __future__ import annotations

import json
import os
import subprocess
import time

import pytest
import requests

from mpsched.controller.__main__ import command as controller_command
from mpsched.p4rt.client import P4RuntimeClient, param_value
from mpsched.p4rt.p4info import P4Info
from mpsched.p4rt.pipeline import ACTION_SET_WEIGHTS, TABLE_NEXTHOP, TABLE_ROUTE, TABLE_WEIGHTS
from mpsched.proc.bmv2 import CPU_PORT, Bmv2Switch, free_port
from mpsched.proc.cleanup import Registry
from mpsched.proc.veth import make_veths

from .conftest import AUTH, require, token_file

pytestmark = pytest.mark.integration



@pytest.fixture
def switch(tmp_path, artifacts):
    require("root", "simple_switch_grpc", "ethtool")
    registry = Registry()
    sw = None
    try:
        pairs = make_veths(registry, 3)
        sw = Bmv2Switch(
            "itest-bmv2",
            1,
            {i: s for i, (s, _) in enumerate(pairs, start=1)},
            tmp_path,
            registry=registry,
            cpu_port=CPU_PORT,
        )
        sw.start()
        yield sw, pairs
    finally:
        if sw is not None:
            sw.stop()
        registry.close()


def start_controller(tmp_path, artifacts, switches: list[dict], hub_type: str = "native"):
    path = tmp_path / "netcfg.json"
    path.write_text(json.dumps({"switches": switches}))
    port = free_port()
    log_path = tmp_path / "controller.log"
    with log_path.open("wb") as log:
        proc = subprocess.Popen(
            controller_command(
                path, port, 0.2, artifacts.p4info, artifacts.bmv2_json, token_file(tmp_path)
            ),
            stdout=log,
            stderr=subprocess.STDOUT,
            env=dict(os.environ, OSKEN_HUB_TYPE=hub_type),
        )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            break
        try:
            states = requests.get(base + "/switches", timeout=2).json()
            if states[0]["state"] == "ready":
                return base, proc
        except requests.RequestException:
            pass
        time.sleep(0.2)
    stop(proc)
    pytest.fail("controller/s1 not ready:\n" + log_path.read_text())


def stop(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def s1_config(sw: Bmv2Switch) -> dict:
    return {
        "name": "s1",
        "device_id": 1,
        "grpc_address": sw.grpc_address,
        "mac": "00:00:0a:00:01:fe",
        "subnets": ["10.0.1.0/24"],
        "hosts": [{"name": "h1", "ip": "10.0.1.1", "mac": "00:00:0a:00:01:01", "port": 1}],
        "paths": [{"id": 1, "port": 2, "rate_mbps": 10}, {"id": 2, "port": 3, "rate_mbps": 5}],
    }


REMOTE = {
    "name": "s2",
    "device_id": 2,
    "grpc_address": "127.0.0.1:1",
    "mac": "00:00:0a:00:02:fe",
    "subnets": ["10.0.2.0/24"],
    "hosts": [],
    "paths": [],
}


def reader(sw: Bmv2Switch, artifacts) -> tuple[P4RuntimeClient, P4Info]:
    """An independent, non-primary P4Runtime client: it can read, not write."""
    p4info = P4Info.from_file(artifacts.p4info)
    client = P4RuntimeClient(sw.grpc_address, 1, p4info)
    client.connect(primary=False)
    return client, p4info


def weight_ends(client: P4RuntimeClient, p4info: P4Info) -> list[int]:
    (entry,) = client.read_table(TABLE_WEIGHTS)
    return [param_value(entry, p.id) for p in p4info.action_params(ACTION_SET_WEIGHTS)]


@pytest.mark.parametrize("hub_type", ["native", "eventlet"])
def test_controller_programs_switch_and_serves_rest(switch, tmp_path, artifacts, hub_type):
    """Pipeline, routes and weights reach the switch; REST changes weights; counters flow;
    on os-ken's native hub and on its eventlet hub (gRPC stays in native threads)."""
    sw, pairs = switch
    base, proc = start_controller(tmp_path, artifacts, [s1_config(sw)], hub_type)
    client, p4info = reader(sw, artifacts)
    try:
        paths = requests.get(base + "/paths", timeout=5).json()
        assert [(p["id"], p["weight"]) for p in paths] == [(1, 1), (2, 1)]
        assert len(client.read_table(TABLE_ROUTE)) == 1  # h1's /32 (no remote switch)
        assert len(client.read_table(TABLE_NEXTHOP)) == 2
        assert weight_ends(client, p4info)[:2] == [32768, 65536]

        r = requests.put(base + "/paths/2/weight", json={"weight": 0}, timeout=10)
        assert r.status_code == 401, r.text  # writes need the token
        r = requests.put(headers=AUTH, url=base + "/paths/2/weight", json={"weight": 0}, timeout=10)
        assert r.status_code == 200 and r.json()["weight"] == 0, r.text
        assert weight_ends(client, p4info)[:2] == [65536, 65536]

        r = requests.put(
            headers=AUTH, url=base + "/paths/1/weight", json={"weight": 300}, timeout=5
        )
        assert r.status_code == 400 and r.json()["field"] == "weight"
        assert weight_ends(client, p4info)[:2] == [65536, 65536]

        # A packet arriving from path 2 is counted, and the count reaches REST.
        from scapy.all import IP, UDP, Ether, sendp

        sendp(
            Ether(dst="00:00:0a:00:01:fe") / IP(src="10.0.2.1", dst="10.0.1.1") / UDP(),
            iface=pairs[2][1],
            count=3,
            verbose=False,
        )
        deadline = time.monotonic() + 5
        rx = 0
        while time.monotonic() < deadline and rx < 3:
            time.sleep(0.3)
            rx = requests.get(base + "/paths/2", timeout=5).json()["by_switch"]["s1"]["rx_packets"]
        assert rx == 3
        assert proc.poll() is None
    finally:
        client.close()
        stop(proc)


def test_unacknowledged_write_is_503(switch, tmp_path, artifacts):
    """With one switch unreachable, a weight change answers 503; the reachable one applies it."""
    sw, _ = switch
    base, proc = start_controller(tmp_path, artifacts, [s1_config(sw), REMOTE])
    client, p4info = reader(sw, artifacts)
    try:
        states = {s["name"]: s["state"] for s in requests.get(base + "/switches", timeout=5).json()}
        assert states == {"s1": "ready", "s2": "down"} or states["s2"] == "connecting"
        r = requests.put(headers=AUTH, url=base + "/paths/2/weight", json={"weight": 0}, timeout=15)
        assert r.status_code == 503, r.text
        assert weight_ends(client, p4info)[:2] == [65536, 65536]
    finally:
        client.close()
        stop(proc)


def test_a_restarted_controller_keeps_the_switch_running(switch, tmp_path, artifacts):
    """kill -9 of the controller and a new one on the same BMv2: the program is not pushed
    again (its counters keep their counts, nothing is wiped) and nothing needs writing."""
    from scapy.all import IP, UDP, Ether, sendp

    from mpsched.p4rt.pipeline import COUNTER_RX

    sw, pairs = switch
    base, proc = start_controller(tmp_path, artifacts, [s1_config(sw)])
    client, _ = reader(sw, artifacts)
    try:
        first = requests.get(base + "/switches", timeout=5).json()[0]["programmed"]
        assert first["how"] == "pushed", first
        sendp(
            Ether(dst="00:00:0a:00:01:fe") / IP(src="10.0.2.1", dst="10.0.1.1") / UDP(),
            iface=pairs[2][1],
            count=3,
            verbose=False,
        )
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and client.read_counter(COUNTER_RX).get(2) is None:
            time.sleep(0.1)
        assert client.read_counter(COUNTER_RX)[2].packets == 3
        proc.kill()
        proc.wait()
        base, proc = start_controller(tmp_path, artifacts, [s1_config(sw)])
        again = requests.get(base + "/switches", timeout=5).json()[0]["programmed"]
        assert again["how"] == "reconciled", again
        assert again["detail"].startswith("0 inserted, 0 modified, 0 deleted, "), again
        assert client.read_counter(COUNTER_RX)[2].packets == 3  # not wiped
    finally:
        client.close()
        stop(proc)
