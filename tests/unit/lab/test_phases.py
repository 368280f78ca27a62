"""Per-phase rates of a scenario with a link schedule (`mpsched.lab.phases`), no runs."""

from __future__ import annotations

import pytest
import yaml

from mpsched.lab.phases import main, phase_edges, phase_rates, phase_table
from mpsched.lab.report import RunResult, write_run
from mpsched.lab.scenario import parse

SCENARIO = {
    "name": "ph",
    "duration_s": 30,
    "paths": [
        {"rate_mbps": 6, "delay_ms": 5,
         "schedule": [{"at_s": 10, "set": {"rate_mbps": 2}, "direction": "forward"}]},
        {"rate_mbps": 4, "delay_ms": 5,
         "schedule": [{"ramp": "loss_pct", "from_s": 15, "to_s": 19, "start": 0, "end": 2,
                       "interval_s": 1, "direction": "forward"},
                      {"at_s": 20, "set": {"loss_pct": 0}, "direction": "forward"}]},
    ],
    "workload": [{"kind": "bulk", "streams": 2}],
}


def result(policy, run, path1, path2):
    """A run whose path series hold the given (t, value) samples."""
    return RunResult("ph", policy, run, run, 30.0, metrics={},
                     series={"path1": path1, "path2": path2, "total": [(0.0, 99.0)]})


def test_edges_come_from_the_schedule_and_short_phases_merge():
    sc = parse(SCENARIO)
    # steps at 10 and 20, the ramp from 15 to 19: 19 -> 20 is shorter than 2 s and merges
    assert phase_edges(sc) == [0.0, 10.0, 15.0, 20.0, 30.0]
    assert phase_edges(sc, min_phase_s=0.5) == [0.0, 10.0, 15.0, 19.0, 20.0, 30.0]


def test_capacity_is_the_rate_in_force_averaged_over_the_phase():
    sc = parse(SCENARIO)
    assert sc.mean_capacity_mbps(0, 10) == pytest.approx(10.0)
    assert sc.mean_capacity_mbps(10, 20) == pytest.approx(6.0)
    assert sc.mean_capacity_mbps(5, 15) == pytest.approx(8.0)  # half before the drop


def test_phase_rates_sum_the_paths_means():
    r = result("x", 0, [(1, 6.0), (2, 4.0), (12, 2.0)], [(1, 3.0), (12, 1.0), (13, 3.0)])
    assert phase_rates(r, [0, 10, 20]) == pytest.approx([5.0 + 3.0, 2.0 + 2.0])
    assert phase_rates(r, [0, 10, 20, 30])[2] != phase_rates(r, [0, 10, 20, 30])[2]  # NaN


def test_table_marks_the_best_per_phase_with_the_fraction_of_capacity(tmp_path, capsys):
    sc = parse(SCENARIO)
    runs = [result("a", 0, [(1, 6.0), (12, 1.0)], [(1, 4.0), (12, 4.0)]),
            result("a", 1, [(1, 6.0), (12, 1.0)], [(1, 4.0), (12, 4.0)]),
            result("b", 0, [(1, 5.0), (12, 2.0)], [(1, 4.0), (12, 4.0)])]
    text = phase_table(runs, sc, [0, 10, 20])
    assert "| policy | runs | 0-10 s (10 Mbit/s) | 10-20 s (6 Mbit/s) |" in text
    assert "| a | 2 | **10.0 ± 0.0 (1.00)** | 5.00 ± 0.00 (0.83) |" in text
    assert "| b | 1 | 9.00 (0.90) | **6.00 (1.00)** |" in text
    for r in runs:
        write_run(tmp_path / r.policy / f"run{r.run}", r)
    path = tmp_path / "ph.yaml"

    path.write_text(yaml.safe_dump(SCENARIO))
    assert main([str(path), str(tmp_path), "--edges", "0,10,20"]) == 0
    assert capsys.readouterr().out == text
    assert main([str(path), str(tmp_path), "--edges", "ten"]) == 2
    assert "--edges" in capsys.readouterr().err
    assert main([str(path), str(tmp_path / "none")]) == 2
    assert "no runs of scenario 'ph'" in capsys.readouterr().err
