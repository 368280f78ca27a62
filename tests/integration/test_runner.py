"""The experiment runner end to end on the real stack: a short scenario with a failure
schedule, cross traffic and file transfers; results, tables and plots; Ctrl-C cleans up."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time

import pytest
import yaml

from mpsched import addressing as ap
from tests.conftest import require
from tests.integration.test_testbed import links as all_links

pytestmark = pytest.mark.integration
TESTBED_LINK = re.compile(r"^[sehxy]\d+-eth\d+$")


def links() -> set[str]:
    """The testbed's interfaces (other tools' veths may come and go meanwhile)."""
    return {name for name in all_links() if TESTBED_LINK.match(name)}

SCENARIO = {
    "name": "tiny",
    "description": "two paths, path 2 fails for 2 s, VBR cross traffic on path 1",
    "duration_s": 8,
    "warmup_s": 1,
    "paths": [
        {"rate_mbps": 8, "delay_ms": 5, "loss_pct": 1, "cross_traffic": True},
        {"rate_mbps": 4, "delay_ms": 2, "schedule": [{"down_s": 3, "up_s": 5}]},
    ],
    "workload": [
        {"kind": "files", "sizes_kb": [50, 200], "count": 40, "concurrency": 4,
         "interarrival_ms": 100},
        {"kind": "vbr", "path": 1, "load_pct": 20},
    ],
    "compare": ["static", "fdmvqs+lm3"],
}


@pytest.fixture
def prerequisites(artifacts):
    require("root", "simple_switch_grpc", "mininet", "ethtool", "tcpdump", "linkem")
    return artifacts


def test_run_writes_results_tables_and_plots(prerequisites, tmp_path):
    scenario = tmp_path / "tiny.yaml"
    scenario.write_text(yaml.safe_dump(SCENARIO))
    out = tmp_path / "out"
    before = links()
    proc = subprocess.run(
        [sys.executable, "-m", "mpsched.cli", "compare", str(scenario), "--runs", "1",
         "--backend", "linkem", "--out", str(out)],
        capture_output=True, text=True, timeout=240,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "[2/2] tiny · fdmvqs+lm3 · run 1/1" in proc.stderr
    runs = sorted((out / "tiny").glob("*/run0/tiny__*__run000.json"))
    assert len(runs) == 2
    bound = []
    for path in runs:
        result = json.loads(path.read_text())
        m = result["metrics"]
        # the machine's load was recorded: idle over time and each process's CPU share
        assert result["cpu_bound"] in (True, False), result["cpu_bound"]
        bound.append(result["cpu_bound"])
        assert len(result["cpu_idle"]) >= 8, result["cpu_idle"]  # 7 s measured, 0.5 s samples
        assert all(0 <= x <= 100 for _, _, x in result["cpu_idle"]), result["cpu_idle"]
        assert 0 <= m["cpu_idle_pct"] <= 100 and 0 <= m["cpu_low_idle_pct"] <= 100, m
        shares = result["cpu_shares"]
        assert min(shares["s1"], shares["s2"], shares["controller"]) > 0, shares
        assert {"e1", "e2", "send0@h1", "sink0@h2"} <= set(shares), shares
        assert sum(shares.values()) <= 100.5, shares  # % of all cores
        cpu_csv = (path.parent / "cpu.csv").read_text().splitlines()
        header = cpu_csv[0].split(",")
        assert header[:3] == ["start_s", "end_s", "idle_pct"], header
        assert set(header[3:]) == set(shares), header
        assert len(cpu_csv) >= 15, cpu_csv  # a row per 0.5 s of the 8 s run
        assert m["goodput_mbps"] > 1.0, m
        assert 0 < m["goodput_frac"] <= 1.2, m
        assert m["transfers"] >= 5 and result["fct"], m
        assert m["path1_mbps"] > 0.5, m  # the cross traffic is pinned to path 1
        assert {"total", "path1", "path2"} <= set(result["series"])
        # while path 2 was down (3..5 s) its link delivered nothing
        down = [v for t, v in result["series"]["path2"] if 3.6 <= t <= 4.6]
        assert down and max(down) < 0.1, result["series"]["path2"]
    decisions = json.loads((out / "tiny" / "fdmvqs+lm3" / "run0" / "decisions.json").read_text())
    assert decisions["decisions"], decisions  # the control loop decided and wrote
    ours = [d for d in decisions["decisions"] if d["policy"] == "fdmvqs+lm3"]
    assert ours and {d["mode"] for d in ours} == {"vq"}, decisions  # after the start's ecmp
    assert decisions["decisions"][-1]["policy"] == "fdmvqs+lm3"
    switches = json.loads((out / "tiny" / "fdmvqs+lm3" / "run0" / "switches.json").read_text())
    assert {s["name"] for s in switches} == {"s1", "s2"}, switches
    assert all(s["probes"]["sent"] > 0 for s in switches), switches
    # path 1 carries traffic throughout (cross traffic): the switches' probe gates drop probes
    assert sum(s["probes"]["gated"] for s in switches) > 0, switches
    summary = (out / "summary.md").read_text()
    assert "| goodput_mbps" in summary and "fdmvqs+lm3" in summary and "static" in summary
    assert list((out / "tiny" / "plots").glob("*.png"))
    assert (out / "tiny" / "runs.csv").read_text().count("\n") == 3
    assert ",cpu_bound," in (out / "tiny" / "runs.csv").read_text().splitlines()[0]
    assert ("were CPU-bound" in proc.stderr) == any(bound), proc.stderr[-2000:]
    assert ("†" in summary) == any(bound), summary
    assert not list(out.rglob("*.pcap"))  # captures are dropped unless --keep-captures
    assert links() == before == set()


def test_interrupted_run_leaves_nothing_behind(prerequisites, tmp_path):
    scenario = tmp_path / "tiny.yaml"
    scenario.write_text(yaml.safe_dump({**SCENARIO, "duration_s": 60}))
    before = links()
    netns_before = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    proc = subprocess.Popen(
        [sys.executable, "-m", "mpsched.cli", "run", str(scenario), "--out", str(tmp_path / "o")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
    )
    deadline = time.monotonic() + 60
    seen = ""
    while time.monotonic() < deadline and "t=" not in seen:
        seen += proc.stderr.readline()
    assert "t=" in seen, seen
    time.sleep(2)
    os.killpg(proc.pid, signal.SIGINT)  # like Ctrl-C in a terminal: the whole process group
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err[-2000:]
    assert "interrupted" in err
    assert links() == before == set()
    assert subprocess.run(["ip", "netns", "list"], capture_output=True,
                          text=True).stdout == netns_before
    leftover = subprocess.run(["pgrep", "-f", f"mpsched.traffic.gen .*{tmp_path}"],
                              capture_output=True, text=True).stdout
    assert leftover == ""


def test_the_capture_holds_every_byte_the_receiver_got(prerequisites, tmp_path):
    """The receiver-side capture is buffered (no wake-up and write per packet): the runner
    waits for libpcap's last block before it stops tcpdump, so every data byte h2's sink
    received is in the capture (retransmissions make its sum larger, never smaller). A bulk
    transfer sends up to the end, so a lost last block (up to 1 s of 8) would show."""
    from mpsched.lab.pcap import read_pcap

    scenario = tmp_path / "bulk.yaml"
    scenario.write_text(yaml.safe_dump({
        **SCENARIO, "name": "bulk", "workload": [{"kind": "bulk", "streams": 2}],
    }))  # fmt: skip
    out = tmp_path / "out"
    proc = subprocess.run(
        [sys.executable, "-m", "mpsched.cli", "run", str(scenario), "--policy", "ecmp",
         "--runs", "1", "--backend", "linkem", "--keep-captures", "--out", str(out)],
        capture_output=True, text=True, timeout=240,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    run_dir = out / "bulk" / "ecmp" / "run0"
    packets, stats = read_pcap(run_dir / "h2.pcap")
    assert stats.truncated_file == 0, stats
    captured = sum(p.payload_len for p in packets
                   if ap.in_subnet(p.src, 1) and ap.in_subnet(p.dst, 2))
    sink = json.loads((run_dir / "sink0.json").read_text())
    received = sum(c["bytes"] for c in sink["connections"])
    assert received > 1_000_000, sink
    assert captured >= received, (captured, received)
