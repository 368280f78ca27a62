"""`make bench-fabric-mptcp` without a testbed: the distinct-path share from the sampled
connections (src/mpsched/bench/fabric_mptcp_run.py) and the report over written runs
(src/mpsched/bench/fabric_mptcp.py), ending with its key=value lines."""

from __future__ import annotations

import json

from mpsched.bench import fabric_mptcp as bench
from mpsched.bench.fabric_mptcp_run import SAMPLES_FILE, distinct_share
from mpsched.lab.report import RunResult, write_run
from mpsched.lab.scenario import load


def conn(*paths):
    return {"subflows": [{"path_id": p} for p in paths]}


def test_distinct_share_counts_connections_with_every_subflow_pinned():
    samples = [
        {"t": 1.0, "connections": [conn(1, 2), conn(1)]},  # one subflow: not counted
        {"t": 2.0, "connections": [conn(1, 1), conn(2, None)]},  # unpinned: not counted
        {"t": 3.0, "connections": [conn(2, 1), conn(3, 1, 2)]},
    ]
    assert distinct_share(samples) == (3, 4)
    assert distinct_share(samples, 1.5, 2.5) == (0, 1)


def result(name: str, run: int, frac: float, cpu_bound: bool = False) -> RunResult:
    pairs = {"leaf1->leaf3": {"mptcp_goodput_frac": frac - 0.05},
             "leaf2->leaf4": {"mptcp_goodput_frac": frac + 0.05}, "leaf1->leaf2": {}}
    return RunResult(name, "ecmp", run, 1 + run, 60.0, cpu_bound=cpu_bound, pairs=pairs,
                     metrics={"mptcp_goodput_frac": frac, "mptcp_goodput_mbps": 4 * frac,
                              "mptcp_capacity_mbps": 4.0})


def test_the_report_ends_with_the_means_of_each_variant(tmp_path):
    runs = [result("fabric-mptcp-steered", 0, 0.9), result("fabric-mptcp-steered", 1, 0.94),
            result("fabric-mptcp-hash", 0, 0.6, cpu_bound=True),
            result("fabric-mptcp-hash", 1, 0.8)]
    for r in runs:
        run_dir = tmp_path / r.scenario / r.policy / f"run{r.run}"
        run_dir.mkdir(parents=True)
        write_run(run_dir, r)
        (run_dir / SAMPLES_FILE).write_text(json.dumps([{"t": 1, "connections": [conn(1, 2)]}]))
    lines = bench.report_lines(tmp_path)
    assert lines[-3:] == ["fabric_mptcp_cpu_bound_runs=1",
                          "fabric_mptcp_goodput_frac_steered=0.920",
                          "fabric_mptcp_goodput_frac_hashed=0.700"]
    assert lines[0].split(" | ")[-3:] == ["goodput / paths", "leaf1->leaf3", "leaf2->leaf4 |"]
    ratio = next(line for line in lines if line.startswith("steered / hashed"))
    assert ratio == "steered / hashed, paired by seed: 1.34 ± 2.06 (2 pairs)"  # 1.5, 1.175
    assert any("distinct paths in 2 of 2 samples" in line for line in lines)
    assert "  hashed run0 seed 1: 0.600 (leaf1->leaf3 0.550, leaf2->leaf4 0.650) *" in lines
    assert bench.by_seed(runs[:2]) == {1: 0.9, 2: 0.94}


def test_no_runs_give_nan_figures(tmp_path):
    lines = bench.report_lines(tmp_path)
    assert lines[-1] == "fabric_mptcp_goodput_frac_hashed=nan"


def test_the_variants_differ_in_steering_only():
    steered, hashed = (load(p, fabric=True) for p in bench.VARIANTS.values())
    assert steered.params == {"mptcp": {"steering": True}}
    assert hashed.params == {"mptcp": {"steering": False}}
    assert (steered.fabric, steered.fabric_workload, steered.duration_s) == (
        hashed.fabric, hashed.fabric_workload, hashed.duration_s)


def test_reuse_of_a_directory_without_runs_is_refused(tmp_path, capsys):
    assert bench.main(["--reuse", str(tmp_path)]) == 2
    assert "holds no runs" in capsys.readouterr().err
