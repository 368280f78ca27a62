"""A fabric's traffic on live hosts without switches: one network namespace per host of a
3-leaf fabric on one Linux bridge (10.0.e.1/16, so every host reaches every other), the
runner's own process handling (`Run._gen`, `_popen`, `_finish_senders`) behind a fake
testbed, `FabricTraffic` starting sinks, captures and senders, and `fabric_analysis`
turning the reports and captures into per-pair metrics."""

from __future__ import annotations

import contextlib
import os
import subprocess
import time
from types import SimpleNamespace

import pytest

from mpsched.lab import fabric_analysis
from mpsched.lab.fabric_launch import FabricTraffic
from mpsched.lab.fabric_workload import plan_hosts
from mpsched.lab.runner import BASE_PORT, Run
from mpsched.lab.scenario import parse
from tests.conftest import require
from tests.sockets import wait_listening

pytestmark = pytest.mark.integration

DOC = {
    "name": "fabric-traffic",
    "duration_s": 8,
    "warmup_s": 1,
    "fabric": {"leaf_spine": {"leaves": 3, "spines": 1,
                              "link": {"rate_mbps": 10, "delay_ms": 1}}},
    "workload": [
        {"kind": "poisson", "sizes": "websearch", "load_pct": 20, "max_kb": 300, "drain_s": 3},
        {"kind": "incast", "receiver": "h2_1", "size_kb": 20, "period_ms": 500, "drain_s": 2},
    ],
}


def sh(*args: str) -> None:
    subprocess.run(args, check=True, capture_output=True)


class NetnsHost:
    """A Mininet host's interface to the runner: popen inside the namespace."""

    def __init__(self, ns: str, intf: str) -> None:
        self.ns, self.intf = ns, intf

    def popen(self, args, **kwargs):
        return subprocess.Popen(["ip", "netns", "exec", self.ns, *args], **kwargs)

    def defaultIntf(self):  # noqa: N802 (Mininet's name)
        return SimpleNamespace(name=self.intf)


@pytest.fixture
def hosts():
    """host name -> NetnsHost, one namespace per host of the fabric, torn down after."""
    require("root", "tcpdump")
    tag = f"{os.getpid() % 10000}"
    bridge = f"fwbr{tag}"
    made: list[str] = []
    out: dict[str, NetnsHost] = {}
    sh("ip", "link", "add", bridge, "type", "bridge")
    try:
        sh("ip", "link", "set", bridge, "up")
        for e in (1, 2, 3):
            ns, outer, inner = f"fw{tag}h{e}", f"fw{tag}e{e}", "eth0"
            sh("ip", "netns", "add", ns)
            made.append(ns)
            sh("ip", "link", "add", outer, "type", "veth", "peer", "name", f"fw{tag}i{e}")
            sh("ip", "link", "set", f"fw{tag}i{e}", "netns", ns)
            sh("ip", "netns", "exec", ns, "ip", "link", "set", f"fw{tag}i{e}", "name", inner)
            sh("ip", "netns", "exec", ns, "ip", "addr", "add", f"10.0.{e}.1/16", "dev", inner)
            sh("ip", "netns", "exec", ns, "ip", "link", "set", inner, "up")
            sh("ip", "netns", "exec", ns, "ip", "link", "set", "lo", "up")
            sh("ip", "link", "set", outer, "master", bridge, "up")
            out[f"h{e}_1"] = NetnsHost(ns, inner)
        yield out
    finally:
        for ns in made:
            with contextlib.suppress(subprocess.CalledProcessError):
                sh("ip", "netns", "del", ns)
        with contextlib.suppress(subprocess.CalledProcessError):
            sh("ip", "link", "del", bridge)


def test_a_fabric_workload_runs_and_is_measured_per_pair(hosts, tmp_path):
    sc = parse(DOC, fabric=True)
    run = Run(sc, "ecmp", 0, tmp_path)
    registry = SimpleNamespace(add_process=lambda *_: None, forget_process=lambda *_: None)
    run.bed = SimpleNamespace(host=hosts.__getitem__, registry=registry)
    run.fabric = FabricTraffic(run, plan_hosts(sc.fabric), BASE_PORT)
    try:
        run.fabric.start_receivers()
        for name, proc in list(run.procs):
            if name.startswith("sink"):  # sink<i>_<host>: workload i's, on port BASE_PORT + i
                wait_listening(proc, BASE_PORT + int(name[4:].split("_")[0]))
        t0 = time.monotonic()
        run.raw.t0 = time.time()
        run.timers = run.fabric.schedule(t0)
        time.sleep(sc.duration_s)
        run._cancel_timers()
        run._finish_senders(timeout=15)
    finally:
        run._stop_all()
    assert run.failure is None
    result = fabric_analysis.analyse(run.raw)
    pairs = result.pairs
    # every leaf sends to the others (poisson) and leaf1, leaf3 to h2_1 (incast)
    assert set(pairs) == {f"leaf{a}->leaf{b}" for a in (1, 2, 3) for b in (1, 2, 3) if a != b}
    incast = [tr for name in ("send1_h1_1", "send1_h3_1")
              for tr in run.raw.reports[name]["transfers"]]
    assert len(incast) == 2 * 12 and all("fct_s" in tr for tr in incast)
    for label in ("leaf1->leaf2", "leaf3->leaf2"):
        assert pairs[label]["flows_lt100k"] >= 12
        assert pairs[label]["goodput_mbps"] > 0
        assert pairs[label]["reorder_ratio"] == 0  # one bridge: nothing to reorder
    m = result.metrics
    assert m["completed_frac"] > 0.9
    assert m["goodput_mbps"] == pytest.approx(
        sum(p["goodput_mbps"] for p in pairs.values()))
    assert m["offered_load_pct"] == 20 and "fct_lt100k_p99_s" in m
    assert m["incast_completed_frac"] == 1 and m["incast_qct_mean_s"] > 0
    assert m["rtt_p50_ms"] >= 0 and result.rtt_ms
