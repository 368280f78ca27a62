"""`mpsched run --program plain-ecmp` end to end: a 3-leaf x 2-spine fabric whose BMv2
switches run the plain ECMP program (entries written once, no controller) carries a bulk
transfer between every ordered pair of leaves, over both spines, and the run is recorded as
any other: policy plain-ecmp, per-pair goodput, CPU shares by switch, the links' counters,
and each switch's drops by reason."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import yaml

from mpsched.proc.layout import plain_ecmp_artifacts
from tests.conftest import require

pytestmark = pytest.mark.integration

LEAVES = (1, 2, 3)
DOC = {
    "name": "plain-tiny",
    "duration_s": 6,
    "warmup_s": 1,
    "fabric": {"leaf_spine": {"leaves": len(LEAVES), "spines": 2,
                              "link": {"rate_mbps": 5, "delay_ms": 1, "queue_packets": 50}}},
    "workload": [{"kind": "bulk", "pairs": [
        {"src": f"leaf{a}", "dst": f"leaf{b}"} for a in LEAVES for b in LEAVES if a != b]}],
}


@pytest.fixture
def prerequisites():
    require("root", "simple_switch_grpc", "mininet", "ethtool", "tcpdump", "linkem")
    art = plain_ecmp_artifacts()
    if art.missing():
        pytest.skip(f"plain ECMP program not compiled ({art.missing()[0]}); run `make p4`")


def test_plain_ecmp_carries_every_pair_without_a_controller(prerequisites, tmp_path):
    scenario = tmp_path / "plain-tiny.yaml"
    scenario.write_text(yaml.safe_dump(DOC))
    out = tmp_path / "out"
    proc = subprocess.run(
        [sys.executable, "-m", "mpsched.cli", "run", str(scenario), "--runs", "1",
         "--backend", "linkem", "--program", "plain-ecmp", "--out", str(out)],
        capture_output=True, text=True, timeout=240,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    run_dir = out / "plain-tiny" / "plain-ecmp" / "run0"
    (path,) = run_dir.glob("plain-tiny__*__run000.json")
    result = json.loads(path.read_text())
    assert result["policy"] == "plain-ecmp"
    pairs = {f"leaf{a}->leaf{b}" for a in LEAVES for b in LEAVES if a != b}
    assert set(result["pairs"]) == pairs
    for pair in sorted(pairs):
        assert result["pairs"][pair]["goodput_mbps"] > 0.2, (pair, result["pairs"][pair])
    shares = result["cpu_shares"]
    assert {"leaf1", "spine1", "spine2"} <= set(shares) and "controller" not in shares
    assert not (run_dir / "controller.log").exists()
    delivered = json.loads((run_dir / "links.json").read_text())
    for spine in (1, 2):  # six flows each way hashed over two spines: both carry some
        assert sum(delivered[f"leaf{a}-spine{spine}"]["ab"]["tx_bytes"] for a in LEAVES) > 0
    drops = json.loads((run_dir / "drops.json").read_text())
    assert set(drops) == {"leaf1", "leaf2", "leaf3", "spine1", "spine2"}
    assert all(d["no_route"] == 0 and d["no_nexthop"] == 0 for d in drops.values()), drops
    assert "runs per policy: plain-ecmp: 1" in (out / "summary.md").read_text()
