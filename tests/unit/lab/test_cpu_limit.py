"""Machine load under a CPU limit (src/mpsched/lab/cpu.py, `--cpu-limit`): idle against the
limit, the cpu_bound mark it gives, and the limit in the run's record and tables."""

from __future__ import annotations

import csv
import json
import math

import pytest
import yaml

from mpsched.lab import cpu, report, tables
from mpsched.lab.cpu import CpuRule, CpuSample, CpuTimes
from mpsched.lab.cpu_sampler import read_cpu_sample
from mpsched.lab.report import RunResult
from mpsched.lab.run_window import cpu_load
from mpsched.lab.runner import RunRaw
from mpsched.lab.scenario import parse
from mpsched.proc.cgroups import CpuLimit
from mpsched.proc.cpulimit import ActiveLimit

HALF = CpuLimit(50.0, 2)  # a machine half as fast: one core's worth of 2


@pytest.mark.parametrize(
    ("usage", "wall", "machine", "idle"),
    [
        (0.5, 1.0, math.nan, 50.0),  # half of the limit's 1 core-second used
        (1.0, 1.0, math.nan, 0.0),  # all of it
        (1.004, 1.0, math.nan, 0.0),  # a little more (the quota is per period): clamped
        (0.0, 2.0, math.nan, 100.0),
        (0.5, 1.0, 80.0, 50.0),  # the machine had more idle than the limit left: the limit
        (0.5, 1.0, 10.0, 20.0),  # others took the machine: 0.2 core-s idle of 1
        (0.5, 1.0, 0.0, 0.0),
    ],
)
def test_idle_is_what_the_limit_left(usage, wall, machine, idle):
    assert cpu.limited_idle_pct(usage, wall, HALF, machine) == pytest.approx(idle)


def test_idle_against_the_limit_is_the_documented_formula():
    limit = CpuLimit(20.0, 4)  # 0.8 cores
    got = cpu.limited_idle_pct(1.2, 2.0, limit)
    assert got == pytest.approx(100 * (1 - 1.2 / (20 / 100 * 4 * 2.0)))


@pytest.mark.parametrize(("usage", "wall"), [(0.5, 0.0), (-0.1, 1.0)])
def test_no_time_or_usage_going_backwards_is_unknown(usage, wall):
    assert math.isnan(cpu.limited_idle_pct(usage, wall, HALF))


def limited(t: float, idle: int, total: int, usage: float) -> CpuSample:
    return CpuSample(t, CpuTimes(idle, total), {}, usage, HALF)


def test_series_under_a_limit():
    # the machine stays 90 % idle (another core is free), the testbed uses its whole limit
    samples = [limited(0.0, 0, 0, 10.0), limited(0.5, 90, 100, 10.5), limited(1.0, 180, 200, 11.0)]
    assert cpu.idle_series(samples) == [(0.0, 0.5, 0.0), (0.5, 1.0, 0.0)]
    plain = [CpuSample(s.t, s.cpu) for s in samples]
    assert cpu.idle_series(plain) == [(0.0, 0.5, 90.0), (0.5, 1.0, 90.0)]
    assert cpu.is_cpu_bound(cpu.idle_series(samples), CpuRule()) is True
    assert cpu.is_cpu_bound(cpu.idle_series(plain), CpuRule()) is False
    assert cpu.limit_pct(samples) == 50.0 and cpu.limit_pct(plain) is None


def test_a_sample_without_usage_falls_back_to_the_machine():
    a, b = limited(0.0, 0, 0, 10.0), CpuSample(0.5, CpuTimes(60, 100), {}, None, HALF)
    assert cpu.interval_idle_pct(a, b) == 60.0


def test_shares_stay_of_the_whole_machine_under_a_limit():
    a = CpuSample(0.0, CpuTimes(0, 0), {"s1": (7, 0)}, 10.0, HALF)
    b = CpuSample(1.0, CpuTimes(150, 200), {"s1": (7, 40)}, 10.8, HALF)
    roles, rows = cpu.interval_rows([a, b])
    assert roles == ["s1"]
    assert rows == [[0.0, 1.0, pytest.approx(20.0), 20.0]]  # idle of the limit, s1 of 200 ticks
    assert cpu.process_shares([a, b]) == {"s1": 20.0}


def test_the_sampler_reads_the_limits_usage(tmp_path):
    (tmp_path / "stat").write_text("cpu 10 0 5 85\n")
    usage = tmp_path / "cpu.stat"
    usage.write_text("usage_usec 2500000\nuser_usec 2000000\n")
    s = read_cpu_sample({}, tmp_path, limit=ActiveLimit(HALF, usage))
    assert (s.usage_s, s.limit) == (2.5, HALF)
    assert read_cpu_sample({}, tmp_path).usage_s is None


def run_raw(tmp_path, samples):
    doc = {"name": "t", "duration_s": 2, "warmup_s": 0, "paths": [{"rate_mbps": 10}],
           "workload": [{"kind": "bulk"}]}
    raw = RunRaw(parse(yaml.safe_load(yaml.safe_dump(doc))), "ecmp", 0, 1, tmp_path, t0=0.0)
    raw.cpu_samples = samples
    return raw


def test_the_run_records_its_limit(tmp_path):
    samples = [limited(t / 2, 90 * t, 100 * t, 10.0 + t / 2) for t in range(5)]
    load = cpu_load(run_raw(tmp_path, samples), 0.0, 2.0)
    assert load["cpu_limit_pct"] == 50.0
    assert load["cpu_bound"] is True
    assert load["metrics"]["cpu_idle_pct"] == 0.0
    plain = cpu_load(run_raw(tmp_path, [CpuSample(s.t, s.cpu) for s in samples]), 0.0, 2.0)
    assert plain["cpu_limit_pct"] is None and plain["cpu_bound"] is False


def result(run: int, limit: float | None) -> RunResult:
    return RunResult("sc", "ecmp", run, run, 10.0, metrics={"goodput_mbps": 5.0},
                     cpu_bound=False, cpu_limit_pct=limit)


def test_the_limit_travels_through_json_and_runs_csv(tmp_path):
    r = result(0, 50.0)
    path = report.write_run(tmp_path, r)
    assert json.loads(path.read_text())["cpu_limit_pct"] == 50.0
    assert report.read_run(path) == r
    runs_csv, _ = report.write_csv(tmp_path, [r, result(1, None)])
    rows = list(csv.DictReader(runs_csv.open()))
    assert [row["cpu_limit_pct"] for row in rows] == ["50.0", ""]
    assert [x.cpu_limit_pct for x in report.read_csv(runs_csv)] == [50.0, None]
    assert "goodput_mbps" in report.read_csv(runs_csv)[0].metrics


def test_runs_csv_without_a_limit_has_no_column(tmp_path):
    runs_csv, _ = report.write_csv(tmp_path, [result(0, None)])
    assert "cpu_limit_pct" not in runs_csv.read_text()
    assert report.read_csv(runs_csv)[0].cpu_limit_pct is None


def test_a_malformed_limit_in_runs_csv_is_named(tmp_path):
    path = tmp_path / "runs.csv"
    path.write_text("scenario,policy,run,seed,duration_s,cpu_bound,cpu_limit_pct\n"
                    "sc,ecmp,0,0,10,false,half\n")
    with pytest.raises(ValueError, match=r"runs.csv:2: malformed 'cpu_limit_pct'"):
        report.read_csv(path)


def test_the_tables_say_the_limit():
    text = tables.comparison_table([result(0, 50.0), result(1, 50.0)])
    assert ("Testbed limited to 50 % of the machine's CPU (--cpu-limit) in 2 of 2 run(s): "
            "their idle and CPU-bound mark are against the limit.\n") in text
    assert "Testbed limited" not in tables.comparison_table([result(0, None)])
