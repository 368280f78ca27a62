"""Starting a fabric's traffic: sinks and captures on the receiving hosts, one sender per
source host at its workload's start, with the run's seed (a fake run records the processes)."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from mpsched.lab import fabric_launch as fl
from mpsched.lab.fabric_workload import (
    mptcp_initiators,
    mptcp_subflows,
    plan_hosts,
    sender_plans,
)
from mpsched.lab.runner import BASE_PORT, RunRaw
from mpsched.lab.scenario import parse
from mpsched.traffic.gen.cli import parser
from mpsched.traffic.gen.openloop import read_flows

FABRIC = {"leaf_spine": {"leaves": 3, "spines": 2, "hosts_per_leaf": 2,
                         "link": {"rate_mbps": 10, "delay_ms": 1}}}
WORKLOAD = [
    {"kind": "poisson", "sizes": "datamining", "load_pct": 40, "drain_s": 1},
    {"kind": "incast", "receiver": "h2_1", "size_kb": 10, "start_s": 0.2, "senders": ["leaf1"]},
    {"kind": "bulk", "pairs": [{"src": "h3_2", "dst": "leaf1"}], "streams": 3},
]


class FakeRun:
    """What FabricTraffic uses of runner.Run: processes are recorded, not started."""

    def __init__(self, tmp_path, sc):
        self.scenario = sc
        self.seed = 7
        self.raw = RunRaw(sc, "ecmp", 0, 7, tmp_path)
        self.lock = threading.RLock()
        self.closing = False
        self.failure = None
        intf = SimpleNamespace(name="eth0")
        self.bed = SimpleNamespace(host=lambda name: SimpleNamespace(defaultIntf=lambda: intf))
        self.started: list[tuple[str, list[str], str]] = []

    def _gen(self, host, args, name):
        self.started.append((host, args, name))

    def _popen(self, host, args, name):
        self.started.append((host, args, name))

    def _fail(self, message):
        self.failure = message


@pytest.fixture
def run(tmp_path):
    doc = {"name": "f", "duration_s": 10, "fabric": FABRIC, "workload": WORKLOAD}
    return FakeRun(tmp_path, parse(doc, fabric=True))


def test_receivers_get_a_sink_per_workload_and_one_capture(run):
    traffic = fl.FabricTraffic(run, plan_hosts(run.scenario.fabric), BASE_PORT)
    traffic.start_receivers()
    sinks = {name: (host, args) for host, args, name in run.started if name.startswith("sink")}
    assert sinks["sink1_h2_1"] == ("h2_1", ["sink", "--port", str(BASE_PORT + 1), "--peers"])
    assert sinks["sink2_h1_1"] == ("h1_1", ["sink", "--port", str(BASE_PORT + 2), "--peers"])
    assert {n for n in sinks if n.startswith("sink0_")} == {
        f"sink0_h{e}_{k}" for e in (1, 2, 3) for k in (1, 2)}
    captures = [(h, a) for h, a, n in run.started if n.startswith("tcpdump")]
    assert len(captures) == 6 and set(run.raw.captures) == {h for h, _ in captures}
    assert ("h2_1", ["tcpdump", "-i", "eth0", "-s", "96", "-B", "8192", "-n", "-w",
                     str(run.raw.dir / "h2_1.pcap"), "tcp and dst host 10.0.2.1"]) in captures


def test_senders_start_at_their_time_with_the_plans_and_the_runs_seed(run):
    traffic = fl.FabricTraffic(run, plan_hosts(run.scenario.fabric), BASE_PORT)
    timers = traffic.schedule(time.monotonic())
    for t in timers:
        t.join(timeout=5)
    senders = {name: (host, args) for host, args, name in run.started}
    assert set(senders) == {*(f"send0_h{e}_{k}" for e in (1, 2, 3) for k in (1, 2)),
                            "send1_h1_1", "send1_h1_2", "send2_0_h3_2"}
    host, args = senders["send2_0_h3_2"]
    assert (host, args) == ("h3_2", ["bulk", "--dst", "10.0.1.1", "--port", str(BASE_PORT + 2),
                                     "--seconds", "10", "--seed", "702", "--streams", "3"])
    host, args = senders["send1_h1_2"]
    parsed = parser().parse_args([*args, "--out", "x.json"])  # the generator accepts them
    assert (parsed.role, parsed.port, parsed.seed, parsed.seconds) == ("plan", BASE_PORT + 1,
                                                                      701, 9.8)
    flows = read_flows(parsed.flows)
    plan = next(p for p in traffic.plans if p.name == "send1_h1_2")
    assert flows == [(f.at, f.size, f.dst) for f in plan.flows]
    assert json.loads((run.raw.dir / "send1_h1_2.flows.json").read_text())["host"] == "h1_2"


def test_no_sender_starts_once_the_run_is_closing(run):
    run.closing = True
    traffic = fl.FabricTraffic(run, plan_hosts(run.scenario.fabric), BASE_PORT)
    for t in traffic.schedule(time.monotonic()):
        t.join(timeout=5)
    assert run.started == []


def test_hosts_from_the_testbeds_names():
    hosts = fl.hosts_from_names({1: ["h1_2", "h1_1"], 2: ["h2_1"]})
    assert [(h.name, h.k, h.address) for h in hosts[1]] == [("h1_1", 1, "10.0.1.1"),
                                                            ("h1_2", 2, "10.0.1.2")]
    with pytest.raises(ValueError, match="not named h2_<k>"):
        fl.hosts_from_names({2: ["h1_1"]})


def test_an_mptcp_bulk_sends_with_kernel_mptcp():
    doc = {"name": "f", "duration_s": 10, "fabric": FABRIC,
           "workload": [{"kind": "bulk", "pairs": [{"src": "h1_1", "dst": "h3_1"}],
                         "mptcp": True, "subflows": 3}]}
    sc = parse(doc, fabric=True)
    (plan,) = sender_plans(sc.fabric_workload, sc.fabric, sc.duration_s, 1)
    args = fl.sender_args(plan, BASE_PORT, 1, Path("unused.flows.json"))
    assert plan.mptcp and args[-1] == "--mptcp"
    assert parser().parse_args([*args, "--out", "x.json"]).mptcp
    assert mptcp_subflows(sc.fabric_workload) == 3
    assert mptcp_subflows(parse({**doc, "workload": WORKLOAD}, fabric=True).fabric_workload) == 0


def test_only_the_sources_of_mptcp_bulks_open_subflows():
    doc = {"name": "f", "duration_s": 10, "fabric": FABRIC,
           "workload": [*WORKLOAD, {"kind": "bulk", "mptcp": True, "subflows": 2,
                                    "pairs": [{"src": "leaf2", "dst": "h3_1"},
                                              {"src": "h1_2", "dst": "h3_1"},
                                              {"src": "h2_1", "dst": "h1_1"}]}]}
    sc = parse(doc, fabric=True)
    assert mptcp_initiators(sc.fabric_workload, sc.fabric) == ["h2_1", "h1_2"]
