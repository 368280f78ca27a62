"""The fabric testbed (src/mpsched/topo/fabric_testbed.py): a 3-leaf x 2-spine fabric comes up with
a
BMv2 switch per fabric switch answering P4Runtime under its device id, one linkem per link
configured and limiting at its rate, the network description written and loading, hosts with
their addresses; and nothing is left once it stops."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from mpsched import addressing as ap
from mpsched.netcfg import NetCfg
from tests.conftest import require
from tests.integration.test_testbed import links, running, swept
from tests.waiting import netcfg_line, wait_until

pytestmark = pytest.mark.integration

SECTION = {
    "leaf_spine": {
        "leaves": 3, "spines": 2, "hosts_per_leaf": 2,
        "link": {"rate_mbps": 10, "delay_ms": 1, "queue_packets": 50},
        "overrides": [
            {"link": "leaf1-spine2", "rate_mbps": 4, "reverse": {"rate_mbps": 2}},
            {"link": "leaf3-spine1", "schedule": [{"down_s": 0.5, "up_s": 1.8}]},
        ],
    },
}


@pytest.fixture
def prerequisites(artifacts):
    require("root", "simple_switch_grpc", "mininet", "ethtool", "linkem")
    return artifacts


def _mtu(iface: str) -> int:
    return int(Path(f"/sys/class/net/{iface}/mtu").read_text())


def _answers_p4runtime(address: str, device_id: int, artifacts, tls) -> None:
    """Primary arbitration under `device_id` and a pipeline push succeed over TLS with the
    description's client certificate."""
    from mpsched.p4rt.client import P4RuntimeClient
    from mpsched.p4rt.p4info import P4Info

    client = P4RuntimeClient(address, device_id, P4Info.from_file(artifacts.p4info), tls=tls)
    try:
        client.connect()
        client.set_pipeline(str(artifacts.bmv2_json))
    finally:
        client.close()


def _refuses_strangers(address: str, device_id: int, artifacts, tls) -> None:
    """A local process without the controller's key takes no mastership: in plaintext with
    a higher election id, nor over TLS without a client certificate (docs/security.md,
    "Local users")."""
    from mpsched.p4rt.client import P4RuntimeClient
    from mpsched.p4rt.messages import P4RuntimeError
    from mpsched.p4rt.p4info import P4Info
    from mpsched.p4rt.tls import TlsSettings

    p4info = P4Info.from_file(artifacts.p4info)
    plain = P4RuntimeClient(address, device_id, p4info, election_id=(1, 0), timeout=3)
    with pytest.raises(P4RuntimeError, match="speaks TLS"):
        plain.connect()
    plain.close()
    anonymous = P4RuntimeClient(address, device_id, p4info, election_id=(1, 0), timeout=3,
                                tls=TlsSettings(ca_cert=tls.ca_cert))
    with pytest.raises(P4RuntimeError, match="refused over TLS: .*client certificate"):
        anonymous.connect()
    anonymous.close()


def _delivered_mbps(bed, link: str, iface: str, seconds: float = 1.5) -> float:
    """Frames of 1500 bytes offered into `iface` (a switch port) at about 30 Mbit/s for
    `seconds`: the rate the link's linkem delivers a -> b meanwhile (tx_bytes over the time
    after its queue filled)."""
    frame = bytes.fromhex("ffffffffffff" "00000a0000aa" "88b5") + bytes(1486)
    with socket.socket(socket.AF_PACKET, socket.SOCK_RAW) as sock:
        sock.bind((iface, 0))
        start = time.monotonic()
        sent = 0
        first = None
        while time.monotonic() - start < seconds:
            target = int((time.monotonic() - start) * 30e6 / 8 / len(frame)) + 1
            while sent < target:
                sock.send(frame)
                sent += 1
            if first is None and time.monotonic() - start > 0.3:
                first = (time.monotonic(), bed.link_stats()[link]["ab"]["tx_bytes"])
            time.sleep(0.002)
        last = (time.monotonic(), bed.link_stats()[link]["ab"]["tx_bytes"])
    assert first is not None
    return (last[1] - first[1]) * 8 / (last[0] - first[0]) / 1e6


def test_leaf_spine_comes_up_and_goes(prerequisites, tmp_path):
    from mpsched.topo.bed import PATH_MTU
    from mpsched.topo.fabric_testbed import FabricSpec, FabricTestbed

    before = links()
    spec = FabricSpec(SECTION, backend="linkem", log_dir=tmp_path)
    with FabricTestbed(spec) as bed:
        recorded = dict(bed.registry.processes)
        net = NetCfg.load(bed.netcfg_path)
        assert [s.name for s in net.switches] == ["leaf1", "leaf2", "leaf3", "spine1", "spine2"]
        assert net.topology == spec.model
        assert net.tls is not None and net.tls_for(net.switch("leaf1")) is not None
        for sw in net.switches:
            _answers_p4runtime(sw.grpc_address, sw.device_id, prerequisites, net.tls_for(sw))
        leaf1 = net.switch("leaf1")
        _refuses_strangers(leaf1.grpc_address, leaf1.device_id, prerequisites,
                           net.tls_for(leaf1))
        assert all(s.probe_iface for s in net.edge_switches())
        assert net.switch("spine1").probe_iface is None
        assert bed.hosts() == {1: ["h1_1", "h1_2"], 2: ["h2_1", "h2_2"], 3: ["h3_1", "h3_2"]}
        # ports as port_map numbers them: leaf hosts 1..2, then spine1, spine2; a spine's
        # leaves 1..3; one linkem per link, PATH_MTU on every inter-switch interface
        assert bed.host("leaf1").ports_by_number() == {n: f"leaf1-eth{n}" for n in (1, 2, 3, 4)}
        assert bed.host("spine2").ports_by_number() == {n: f"spine2-eth{n}" for n in (1, 2, 3)}
        for name in ("leaf1-eth3", "leaf1-eth4", "spine2-eth1", "lk2-eth1", "lk2-eth2"):
            assert _mtu(name) == PATH_MTU, name
        assert _mtu("leaf1-eth1") == 1500
        assert sorted(bed.links) == sorted(link.name for link in spec.model.links)
        h = bed.host("h2_2")
        assert f"inet {ap.host_ip(2, 2)}/24" in h.cmd("ip -4 addr show dev h2_2-eth0")
        assert f"via {ap.gateway_ip(2)}" in h.cmd("ip route show default")
        assert ap.router_mac(2) in h.cmd(f"ip neigh show {ap.gateway_ip(2)}")
        assert ap.router_mac(2) in h.cmd(f"ip neigh show {ap.host_ip(2, 1)}")
        # the emulators hold each direction's rate; leaf1-spine2's forward one delivers it
        em = bed.links["leaf1-spine2"].linkem
        assert (em.get("ab")["rate_bps"], em.get("ba")["rate_bps"]) == (4_000_000, 2_000_000)
        assert bed.links["leaf2-spine1"].linkem.get("ab")["rate_bps"] == 10_000_000
        rate = _delivered_mbps(bed, "leaf1-spine2", "leaf1-eth4")
        assert 3.4 <= rate <= 4.4, rate
        # a link's schedule takes both directions of that link only down and up again
        down = bed.links["leaf3-spine1"].linkem

        def state(linkem) -> list[int]:
            return [linkem.get(d)["up"] for d in ("ab", "ba")]

        bed.start_schedules(3.0)
        # down at 0.5 s, up at 1.8 s: polled, so a busy machine's late timers slow it only
        wait_until(lambda: state(down) == [0, 0], timeout=10, interval=0.02,
                   what="leaf3-spine1 down in both directions")
        assert state(em) == [1, 1]
        wait_until(lambda: state(down) == [1, 1], timeout=10, interval=0.02,
                   what="leaf3-spine1 up again in both directions")
        assert bed.dead_switches() == []
    assert not any(running(pid) for pid in recorded), recorded
    assert links() == before
    assert not (tmp_path / "p4rt-tls").exists(), "the keys are removed with the testbed"


def test_mpsched_run_brings_a_fabric_up(prerequisites, tmp_path):
    """`mpsched run` on a fabric scenario: the fabric testbed, the controller on its
    description, every switch and link in the CPU roles, the links' counters saved; nothing
    left afterwards."""
    require("tcpdump")
    doc = {"name": "fabric-tiny", "duration_s": 4, "warmup_s": 1,
           "fabric": {"leaf_spine": {k: v for k, v in SECTION["leaf_spine"].items()
                                     if k != "overrides"}}}
    scenario = tmp_path / "fabric-tiny.yaml"
    scenario.write_text(yaml.safe_dump(doc))
    out = tmp_path / "out"
    before = links()
    proc = subprocess.run(
        [sys.executable, "-m", "mpsched.cli", "run", str(scenario), "--runs", "1",
         "--backend", "linkem", "--out", str(out)],
        capture_output=True, text=True, timeout=240,
    )
    assert links() == before
    run_dir = out / "fabric-tiny" / "ecmp" / "run0"
    # the run's description names its P4Runtime certificates, gone with its testbed
    described = json.loads((run_dir / "logs" / "netcfg.json").read_text())
    ca_cert = Path(described.pop("tls")["ca_cert"])
    assert ca_cert.parent == run_dir / "logs" / "p4rt-tls" and not ca_cert.parent.exists()
    assert NetCfg.from_dict(described).topology is not None
    assert proc.returncode == 0, proc.stderr[-3000:]
    (path,) = run_dir.glob("fabric-tiny__*__run000.json")
    shares = json.loads(path.read_text())["cpu_shares"]
    names = ["leaf1", "leaf2", "leaf3", "spine1", "spine2", "leaf1-spine1", "leaf3-spine2"]
    assert set(names) <= set(shares), shares
    saved = json.loads((run_dir / "links.json").read_text())
    assert sorted(saved) == sorted(f"leaf{i}-spine{j}" for i in (1, 2, 3) for j in (1, 2))


def test_killed_owner_of_a_fabric_is_swept(prerequisites, tmp_path):
    """`mpsched topo --scenario` with a fabric, killed: `sweep` (`mpsched cleanup`) removes
    its switches, link emulators, host shells and veths (probe veths included)."""
    import os
    import signal

    from mpsched.proc.cleanup import STATE_DIR, sweep
    from mpsched.proc.layout import build_dir, linkem_binary

    scenario = tmp_path / "fabric.yaml"
    scenario.write_text(yaml.safe_dump({"name": "f", "duration_s": 10, "fabric": SECTION}))
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "linkem").symlink_to(linkem_binary())
    (tmp_path / "p4").symlink_to(build_dir() / "p4")
    env = dict(os.environ, MPSCHED_BUILD_DIR=str(tmp_path))
    before = links()
    proc = subprocess.Popen(
        [sys.executable, "-m", "mpsched.topo", "--scenario", str(scenario), "--backend",
         "linkem"], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        seen = netcfg_line(proc)
        assert seen[-1].startswith("netcfg:"), "".join(seen)
        made = links() - before
        assert {"leaf3-prb", "lk6-eth2", "spine2-eth3"} <= made
        state = json.loads((STATE_DIR / f"{proc.pid}.json").read_text())
        pids = [int(pid) for pid in state["processes"]]
        assert len(pids) >= 5 + 6 + 6  # BMv2s, linkems, host shells (and switch shells)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    sweep()
    swept(made, pids)


def test_the_controller_programs_it_and_every_host_pings_every_other(prerequisites, tmp_path):
    """The controller on the testbed's description: every host reaches every other, across
    the spines and within its own leaf, also with full-size frames (1500-byte IP, DF) that
    carry the path tag over three switches."""
    import itertools

    from mpsched.proc.controller import start_controller, stop_controller
    from mpsched.topo.fabric_testbed import FabricSpec, FabricTestbed

    section = {"leaf_spine": {k: v for k, v in SECTION["leaf_spine"].items()
                              if k != "overrides"}}
    with FabricTestbed(FabricSpec(section, backend="linkem", log_dir=tmp_path)) as bed:
        ctl, _rest = start_controller(
            bed.netcfg_path, tmp_path / "ctl.log", bed.registry, poll=0.5,
            p4info=prerequisites.p4info, bmv2_json=prerequisites.bmv2_json, timeout=60)
        try:
            names = [n for hosts in bed.hosts().values() for n in hosts]
            failed = []
            for a, b in itertools.permutations(names, 2):
                out = bed.host(a).cmd(f"ping -c 2 -i 0.2 -W 2 {bed.host_ip(b)}")
                if " 0% packet loss" not in out:
                    failed.append(f"{a} -> {b}")
            assert not failed, failed
            out = bed.host("h1_1").cmd(f"ping -c 3 -i 0.2 -W 2 -M do -s 1472 "
                                       f"{bed.host_ip('h3_2')}")
            assert " 0% packet loss" in out, out
        finally:
            stop_controller(ctl, bed.registry)
