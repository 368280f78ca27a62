"""The controller (os-ken app on its native hub, gRPC in native threads)
against a real BMv2.

Starts simple_switch_grpc on veths, runs `python -m mpsched.controller` as a
process, and checks through REST and through an independent P4Runtime read
that the pipeline, routes and weights reach the switch, and that counters
flow back.
"""

from __future__ import annotations

import time

import pytest
import requests

from mpsched import addressing as ap
from mpsched.p4rt.client import P4RuntimeClient, param_value
from mpsched.p4rt.p4info import P4Info
from mpsched.p4rt.pipeline import ACTION_SET_WEIGHTS, TABLE_NEXTHOP, TABLE_ROUTE, TABLE_WEIGHTS
from mpsched.proc.bmv2 import Bmv2Switch
from tests.conftest import AUTH
from tests.controllers import ControllerProcess, first_in, start_controller
from tests.netdesc import edge_switch
from tests.waiting import wait_until

# a failure on a deadline says whether the machine was saturated (tests/integration/conftest.py)
pytestmark = [pytest.mark.integration, pytest.mark.usefixtures("machine_load")]



def start(tmp_path, artifacts, switches: list[dict]):
    """A controller on `switches`, once its first switch, s1, is ready."""
    return start_controller(tmp_path, artifacts, {"switches": switches},
                            ready=first_in("ready"))


def s1_config(sw: Bmv2Switch) -> dict:
    return edge_switch(1, sw.grpc_address, [{"id": 1, "port": 2, "rate_mbps": 10},
                                            {"id": 2, "port": 3, "rate_mbps": 5}],
                       with_host=True)


REMOTE = edge_switch(2)


def reader(sw: Bmv2Switch, artifacts) -> tuple[P4RuntimeClient, P4Info]:
    """An independent, non-primary P4Runtime client: it can read, not write."""
    p4info = P4Info.from_file(artifacts.p4info)
    client = P4RuntimeClient(sw.grpc_address, 1, p4info)
    client.connect(primary=False)
    return client, p4info


def weight_ends(client: P4RuntimeClient, p4info: P4Info) -> list[int]:
    (entry,) = client.read_table(TABLE_WEIGHTS)
    return [param_value(entry, p.id) for p in p4info.action_params(ACTION_SET_WEIGHTS)]


def from_s2_on_path(path_id: int):
    """A UDP packet from h2 to h1 as s2 (edge 2) sends it to s1 (edge 1) on path path_id: with
    its path tag (p4src/include/headers.p4: path_id, flags, src_edge, dst_edge, seq (4), tx_ts
    (6), feedback (8), next_type IPv4). s1 counts arrivals per tag, not per port."""
    from scapy.all import IP, UDP, Ether, Raw

    from mpsched.p4rt.pipeline import ETHERTYPE_PATH_TAG

    tag = bytes([path_id, 0, 2, 1]) + bytes(18) + b"\x08\x00"
    return (Ether(dst=ap.S1_MAC, type=ETHERTYPE_PATH_TAG) / Raw(tag)
            / IP(src=ap.H2_IP, dst=ap.H1_IP) / UDP())


def test_controller_programs_switch_and_serves_rest(switch, tmp_path, artifacts):
    """Pipeline, routes and weights reach the switch; REST changes weights; counters flow."""
    sw, pairs = switch
    ctl = start(tmp_path, artifacts, [s1_config(sw)])
    base = ctl.base
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

        # A packet arriving tagged from path 2 is counted, and the count reaches REST.
        from scapy.all import sendp

        sendp(from_s2_on_path(2), iface=pairs[2][1], count=3, verbose=False)

        def rx() -> int:
            path = requests.get(base + "/paths/2", timeout=5).json()
            return path["by_switch"]["s1"]["rx_packets"]

        wait_until(lambda: rx() >= 3, timeout=60, interval=0.3, what="3 packets counted in REST")
        assert rx() == 3
        assert ctl.proc.poll() is None
    finally:
        client.close()
        ctl.stop()


def test_unacknowledged_write_is_503(switch, tmp_path, artifacts):
    """With one switch unreachable, a weight change answers 503; the reachable one applies it."""
    sw, _ = switch
    ctl = start(tmp_path, artifacts, [s1_config(sw), REMOTE])
    base = ctl.base
    client, p4info = reader(sw, artifacts)
    try:
        states = {s["name"]: s["state"] for s in requests.get(base + "/switches", timeout=5).json()}
        assert states == {"s1": "ready", "s2": "down"} or states["s2"] == "connecting"
        r = requests.put(headers=AUTH, url=base + "/paths/2/weight", json={"weight": 0}, timeout=15)
        assert r.status_code == 503, r.text
        assert weight_ends(client, p4info)[:2] == [65536, 65536]
    finally:
        client.close()
        ctl.stop()


def test_a_restarted_controller_keeps_the_switch_running(switch, tmp_path, artifacts):
    """kill -9 of the controller and a new one on the same BMv2: the program is not pushed
    again (its counters keep their counts, nothing is wiped) and nothing needs writing."""
    from scapy.all import sendp

    from mpsched.p4rt.pipeline import COUNTER_RX, Pipeline

    sw, pairs = switch
    ctl = start(tmp_path, artifacts, [s1_config(sw)])
    base = ctl.base
    client, _ = reader(sw, artifacts)
    try:
        first = requests.get(base + "/switches", timeout=5).json()[0]["programmed"]
        assert first["how"] == "pushed", first
        sendp(from_s2_on_path(2), iface=pairs[2][1], count=3, verbose=False)
        cell = Pipeline(client.p4info).edge_path_index(2, 2)  # counted per (source edge, path)
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and client.read_counter(COUNTER_RX).get(cell) is None:
            time.sleep(0.1)
        assert client.read_counter(COUNTER_RX)[cell].packets == 3
        ctl.kill()
        ctl = start(tmp_path, artifacts, [s1_config(sw)])
        base = ctl.base
        again = requests.get(base + "/switches", timeout=5).json()[0]["programmed"]
        assert again["how"] == "reconciled", again
        assert again["detail"].startswith("0 inserted, 0 modified, 0 deleted, "), again
        assert client.read_counter(COUNTER_RX)[cell].packets == 3  # not wiped
    finally:
        client.close()
        ctl.stop()


def launch(tmp_path, artifacts, switches: list[dict], name: str, *extra: str, state=None):
    """A controller process with its own REST port, token and log (and the state file
    `state`); returns it and its auth headers without waiting."""
    token = tmp_path / f"{name}.token"
    token.write_text(f"token-{name}\n")
    ctl = start_controller(tmp_path, artifacts, {"switches": switches}, name=name, token=token,
                           state=state, extra=extra, ready=None)
    return ctl, {"Authorization": f"Bearer token-{name}"}


def wait_state(ctl: ControllerProcess, state: str) -> float:
    """Seconds until the controller's (only) switch is in `state`. The deadline is generous:
    how fast a takeover is belongs to `make bench-reliability`, not to these tests."""
    return ctl.wait(first_in(state), timeout=60.0, interval=0.05, what=f"the switch {state}")


def test_primary_and_backup_controllers(switch, tmp_path, artifacts):
    """Two controllers on one switch and one state file: the higher election id writes, the
    other is a backup that answers reads and refuses writes with 409; when the primary dies
    the backup takes over with what the operator wrote to the primary; the old primary comes
    back as the backup."""
    sw, _ = switch
    state = tmp_path / "state.json"
    a, a_auth = launch(tmp_path, artifacts, [s1_config(sw)], "a", "--election-id", "2",
                       state=state)
    b = None
    try:
        wait_state(a, "ready")
        b, b_auth = launch(
            tmp_path, artifacts, [s1_config(sw)], "b", "--election-id", "1", "--peer", a.base,
            state=state,
        )  # fmt: skip
        wait_state(b, "backup")
        assert requests.get(b.base + "/paths", timeout=5).status_code == 200
        r = requests.put(b.base + "/paths/2/weight", json={"weight": 0}, headers=b_auth, timeout=5)
        assert r.status_code == 409, r.text
        assert "backup" in r.json()["error"] and a.base in r.json()["error"]
        r = requests.put(a.base + "/paths/2/weight", json={"weight": 3}, headers=a_auth, timeout=5)
        assert r.status_code == 200, r.text

        a.kill()
        wait_state(b, "ready")
        switches = requests.get(b.base + "/switches", timeout=5).json()
        assert switches[0]["programmed"]["how"] == "reconciled", switches
        assert switches[0]["election_id"] == 3  # above the old primary's 2
        paths = {p["id"]: p["weight"] for p in requests.get(b.base + "/paths", timeout=5).json()}
        assert paths == {1: 1, 2: 3}  # the primary's write, taken over from the state file
        client, p4info = reader(sw, artifacts)
        try:
            assert weight_ends(client, p4info)[:2] == [16384, 65536]  # 1:3 on the switch
        finally:
            client.close()
        r = requests.put(b.base + "/paths/2/weight", json={"weight": 0}, headers=b_auth, timeout=5)
        assert r.status_code == 200, r.text

        a, a_auth = launch(tmp_path, artifacts, [s1_config(sw)], "a", "--election-id", "2",
                           state=state)
        wait_state(a, "backup")
        r = requests.put(a.base + "/paths/2/weight", json={"weight": 1}, headers=a_auth, timeout=5)
        assert r.status_code == 409, r.text
        assert requests.get(b.base + "/switches", timeout=5).json()[0]["state"] == "ready"
    finally:
        for ctl in (a, b):
            if ctl is not None:
                ctl.stop()


def test_a_restarted_switch_gets_the_program_and_every_entry_again(switch, tmp_path, artifacts):
    """BMv2 killed and started again on the same ports: the controller notices, pushes the
    program and the whole state, and the switch's tables are back."""
    sw, _ = switch
    ctl = start(tmp_path, artifacts, [s1_config(sw)])
    base = ctl.base
    try:
        r = requests.put(base + "/paths/2/weight", json={"weight": 0}, headers=AUTH, timeout=10)
        assert r.status_code == 200, r.text
        sw.process.kill()
        sw.stop()
        restarted = time.time()
        sw.start()
        wait_state(ctl, "ready")
        deadline = time.monotonic() + 60
        programmed = None
        while time.monotonic() < deadline:
            programmed = requests.get(base + "/switches", timeout=5).json()[0]["programmed"]
            if programmed["at"] > restarted:
                break
            time.sleep(0.05)
        assert programmed["how"] == "pushed" and programmed["at"] > restarted, programmed
        client, p4info = reader(sw, artifacts)
        try:
            assert len(client.read_table(TABLE_NEXTHOP)) == 2
            assert weight_ends(client, p4info)[:2] == [65536, 65536]  # the operator's 1:0
        finally:
            client.close()
    finally:
        ctl.stop()


def test_the_switch_drops_are_exported_by_reason(switch, tmp_path, artifacts):
    """Frames with a bad IPv4 header checksum and with TTL 1 are dropped by the switch, and
    GET /switches shows them under their reasons."""
    from scapy.all import IP, UDP, Ether, sendp

    sw, pairs = switch
    ctl = start(tmp_path, artifacts, [s1_config(sw)])
    base = ctl.base
    try:
        frame = Ether(dst=ap.S1_MAC, src=ap.H1_MAC)
        sendp(frame / IP(src=ap.H1_IP, dst=ap.H2_IP, chksum=0x1234) / UDP(),
              iface=pairs[0][1], count=2, verbose=False)  # fmt: skip
        sendp(frame / IP(src=ap.H1_IP, dst=ap.H2_IP, ttl=1) / UDP(),
              iface=pairs[0][1], count=3, verbose=False)  # fmt: skip
        deadline = time.monotonic() + 5
        drops: dict = {}
        while time.monotonic() < deadline:
            drops = requests.get(base + "/switches", timeout=5).json()[0]["drops"]
            if drops.get("ipv4_checksum") == 2 and drops.get("ttl_expired") == 3:
                break
            time.sleep(0.2)
        assert drops.get("ipv4_checksum") == 2 and drops.get("ttl_expired") == 3, drops
        assert drops.get("ipv4_version") == 0
        # no probe_iface in this network description: the probes go as PacketOuts, and with
        # no traffic of its own on the paths the switch skips none
        probes = requests.get(base + "/switches", timeout=5).json()[0]["probes"]
        assert probes["via"] == "packet_out" and probes["sent"] > 0, probes
        assert probes["skipped"] == 0, probes
    finally:
        ctl.stop()
