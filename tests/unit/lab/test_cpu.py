"""Machine load of a run (src/mpsched/lab/cpu.py): /proc parsing, shares, the cpu_bound rule, and
how the mark travels through RunResult, runs.csv, the Markdown tables and the closing warning."""

from __future__ import annotations

import csv
import json
import math
import os
import time

import pytest

from mpsched.lab import cpu, report, tables
from mpsched.lab.cpu import CpuRule, CpuSample, CpuTimes
from mpsched.lab.cpu_sampler import CpuSampler, read_cpu_sample, write_cpu_csv
from mpsched.lab.experiment import cpu_warning
from mpsched.lab.report import RunResult
from mpsched.lab.scenario import ScenarioError, parse

PROC_STAT = """\
cpu  4705 150 1120 16250 520 0 45 0 30 0
cpu0 2000 100 600 8000 300 0 20 0 15 0
cpu1 2705 50 520 8250 220 0 25 0 15 0
intr 114930548 113199788 3 0 5 263 0 4 [... 50 more ...]
ctxt 1990473
btime 1062191376
processes 2915
procs_running 1
procs_blocked 0
"""

# comm with spaces and parentheses; utime 1200 (field 14), stime 345 (field 15)
PID_STAT = (
    "4242 (simple_switch (grpc)) S 1 4242 4242 0 -1 4194560 5151 0 0 0 1200 345 0 0 20 0 "
    "9 0 12345 123456789 4567 18446744073709551615 1 1 0 0 0 0 0 4096 0 0 0 0 17 1 0 0 0 0 0\n"
)


def sample(t: float, idle: int, total: int, **procs: tuple[int, int]) -> CpuSample:
    return CpuSample(t, CpuTimes(idle, total), procs)


# -- parsing -------------------------------------------------------------------------------


def test_parse_proc_stat_sums_the_first_eight_fields():
    times = cpu.parse_proc_stat(PROC_STAT)
    assert times.idle == 16250 + 520  # idle + iowait
    assert times.total == 4705 + 150 + 1120 + 16250 + 520 + 0 + 45 + 0  # guest is inside user


def test_parse_proc_stat_old_kernel_four_fields():
    assert cpu.parse_proc_stat("cpu 10 0 5 85\n") == CpuTimes(idle=85, total=100)


@pytest.mark.parametrize(
    "text", ["", "cpu0 1 2 3 4\n", "cpu 1 2\n", "cpu 1 2 x 4 5\n"], ids=["empty", "no-total",
                                                                       "short", "not-a-number"]
)  # fmt: skip
def test_parse_proc_stat_rejects(text):
    with pytest.raises(cpu.ProcParseError, match="/proc/stat"):
        cpu.parse_proc_stat(text)


def test_parse_proc_stat_sums_the_cores_asked_for():
    assert cpu.parse_proc_stat(PROC_STAT, {1}) == CpuTimes(idle=8250 + 220, total=11770)
    both = cpu.parse_proc_stat(PROC_STAT, {0, 1})
    assert both.idle == 8000 + 300 + 8250 + 220
    assert both.total == 11020 + 11770


@pytest.mark.parametrize("cores", [{2}, {0, 5}, set()], ids=["absent", "one-absent", "none"])
def test_parse_proc_stat_rejects_cores_it_does_not_have(cores):
    with pytest.raises(cpu.ProcParseError, match="/proc/stat"):
        cpu.parse_proc_stat(PROC_STAT, cores)


def test_allowed_cpus_is_none_unless_confined():
    assert cpu.allowed_cpus({0, 1}, 2) is None
    assert cpu.allowed_cpus({0}, 2) == frozenset({0})
    assert cpu.allowed_cpus({1, 3}, 4) == frozenset({1, 3})


def test_read_cpu_sample_on_some_cores(tmp_path):
    (tmp_path / "stat").write_text(PROC_STAT)
    s = read_cpu_sample({}, tmp_path, cpus=frozenset({0}))
    assert s.cpu == CpuTimes(idle=8300, total=11020)


def test_parse_pid_stat_counts_fields_after_the_comm():
    assert cpu.parse_pid_stat(PID_STAT) == 1200 + 345


@pytest.mark.parametrize("text", ["", "12 (x) S 1 2", "12 (x) S 1 2 3 4 5 6 7 8 9 a b c d"])
def test_parse_pid_stat_rejects(text):
    with pytest.raises(cpu.ProcParseError):
        cpu.parse_pid_stat(text)


def test_read_cpu_sample_from_a_proc_tree(tmp_path):
    (tmp_path / "stat").write_text(PROC_STAT)
    (tmp_path / "4242").mkdir()
    (tmp_path / "4242" / "stat").write_text(PID_STAT)
    s = read_cpu_sample({"s1": 4242, "gone": 999999}, tmp_path)
    assert s.cpu == cpu.parse_proc_stat(PROC_STAT)
    assert s.procs == {"s1": (4242, 1545)}  # an exited process is left out


# -- arithmetic ------------------------------------------------------------------------------


def test_idle_pct():
    assert cpu.idle_pct(CpuTimes(100, 1000), CpuTimes(150, 1200)) == 25.0
    assert math.isnan(cpu.idle_pct(CpuTimes(100, 1000), CpuTimes(100, 1000)))  # no time passed
    assert math.isnan(cpu.idle_pct(CpuTimes(100, 1000), CpuTimes(90, 1200)))  # went backwards


def test_idle_series_relative_to_t0():
    samples = [sample(10.0, 0, 0), sample(10.5, 50, 100), sample(11.0, 55, 200)]
    assert cpu.idle_series(samples, t0=10.0) == [(0.0, 0.5, 50.0), (0.5, 1.0, 5.0)]


def test_shares_of_the_whole_machine():
    samples = [
        sample(0.0, 0, 0, s1=(1, 100), controller=(2, 10)),
        sample(0.5, 20, 100, s1=(1, 150), controller=(2, 20)),
        sample(1.0, 40, 200, s1=(1, 200), controller=(2, 30)),
    ]
    assert cpu.process_ticks(samples) == {"s1": 100, "controller": 20}
    assert cpu.process_shares(samples) == {"controller": 10.0, "s1": 50.0}


def test_a_process_started_during_the_run_counts_from_zero():
    samples = [sample(0.0, 0, 0, s1=(1, 100)), sample(1.0, 0, 100, s1=(1, 110), gen=(7, 30))]
    assert cpu.process_ticks(samples) == {"s1": 10, "gen": 30}


def test_a_process_that_exits_counts_up_to_its_last_sample():
    samples = [
        sample(0.0, 0, 0, gen=(7, 5)),
        sample(1.0, 0, 100, gen=(7, 25)),
        sample(2.0, 0, 200),  # gone
    ]
    assert cpu.process_ticks(samples) == {"gen": 20}
    assert cpu.process_shares(samples) == {"gen": 10.0}


def test_a_replaced_process_or_a_counter_going_down_starts_a_new_segment():
    pid_changed = [
        sample(0.0, 0, 0, e1=(5, 100)), sample(1.0, 0, 100, e1=(5, 120)),
        sample(2.0, 0, 200, e1=(6, 7)),  # restarted with a new pid
    ]  # fmt: skip
    assert cpu.process_ticks(pid_changed) == {"e1": 20 + 7}
    wrapped = [sample(0.0, 0, 0, e1=(5, 100)), sample(1.0, 0, 100, e1=(5, 3))]
    assert cpu.process_ticks(wrapped) == {"e1": 3}


def test_shares_need_two_samples():
    assert cpu.process_shares([]) == {}
    assert cpu.process_shares([sample(0.0, 0, 0, s1=(1, 100))]) == {}
    assert cpu.process_shares([sample(0.0, 0, 100), sample(1.0, 0, 100)]) == {}


def test_interval_rows_per_role():
    samples = [
        sample(0.0, 0, 0, s1=(1, 100)),
        sample(0.5, 50, 100, s1=(1, 130), gen=(7, 10)),
        sample(1.0, 80, 200, s1=(1, 140)),
    ]
    roles, rows = cpu.interval_rows(samples)
    assert roles == ["s1", "gen"]
    assert rows[0] == [0.0, 0.5, 50.0, 30.0, 10.0]
    assert rows[1][:4] == [0.5, 1.0, 30.0, 10.0] and math.isnan(rows[1][4])


def test_write_cpu_csv(tmp_path):
    samples = [sample(5.0, 0, 0, s1=(1, 0)), sample(5.5, 25, 100, s1=(1, 50))]
    write_cpu_csv(tmp_path / "cpu.csv", samples, t0=5.0)
    assert list(csv.reader((tmp_path / "cpu.csv").open())) == [
        ["start_s", "end_s", "idle_pct", "s1"],
        ["0.000", "0.500", "25.000", "50.000"],
    ]


# -- the rule --------------------------------------------------------------------------------


def test_low_idle_fraction_weights_intervals_by_length():
    series = [(0.0, 1.0, 5.0), (1.0, 4.0, 50.0), (4.0, 5.0, math.nan)]
    assert cpu.low_idle_fraction(series, 10.0) == 0.25
    assert math.isnan(cpu.low_idle_fraction([], 10.0))


@pytest.mark.parametrize(
    ("low_s", "expected"),
    [(0.0, False), (2.0, False), (2.5, True), (10.0, True)],
)
def test_marking_rule(low_s, expected):
    # 10 s measured; idle 5 % for low_s seconds, 60 % for the rest; rule: > 20 % of the time
    series = [(0.0, low_s, 5.0), (low_s, 10.0, 60.0)]
    assert cpu.is_cpu_bound(series, CpuRule(10.0, 20.0)) is expected


def test_marking_rule_threshold_is_strict():
    assert cpu.is_cpu_bound([(0.0, 1.0, 10.0)], CpuRule(10.0, 20.0)) is False  # not < 10


def test_a_run_shorter_than_one_sample_is_unknown():
    assert cpu.is_cpu_bound([], CpuRule()) is None
    one = [sample(0.0, 0, 0)]
    assert cpu.is_cpu_bound(cpu.idle_series(one), CpuRule()) is None
    no_time = [sample(0.0, 0, 0), sample(0.0, 0, 0)]
    assert cpu.is_cpu_bound(cpu.idle_series(no_time), CpuRule()) is None


def test_window_clips_intervals():
    series = [(0.0, 1.0, 5.0), (1.0, 2.0, 6.0), (2.0, 3.0, 7.0)]
    assert cpu.window(series, 0.5, 2.0) == [(0.5, 1.0, 5.0), (1.0, 2.0, 6.0)]


# -- the scenario option ---------------------------------------------------------------------

SCENARIO = {
    "name": "x", "duration_s": 5, "paths": [{"rate_mbps": 10}],
    "workload": [{"kind": "bulk"}],
}  # fmt: skip


def test_scenario_thresholds_default_and_override():
    assert parse(SCENARIO).cpu_rule == CpuRule(10.0, 20.0)
    sc = parse({**SCENARIO, "cpu_bound": {"idle_below_pct": 5, "max_time_pct": 50}})
    assert sc.cpu_rule == CpuRule(5.0, 50.0)


@pytest.mark.parametrize(
    ("value", "field"),
    [
        ({"idle_below_pct": 150}, "cpu_bound.idle_below_pct"),
        ({"max_time_pct": "lots"}, "cpu_bound.max_time_pct"),
        ({"idle_pct": 5}, "cpu_bound.idle_pct"),
        (10, "cpu_bound"),
    ],
)
def test_scenario_thresholds_rejected_naming_the_field(value, field):
    with pytest.raises(ScenarioError) as info:
        parse({**SCENARIO, "cpu_bound": value})
    assert info.value.field == field


# -- results ---------------------------------------------------------------------------------


def _run(policy: str, k: int, bound: bool | None) -> RunResult:
    r = RunResult("sc", policy, k, k, 10.0, metrics={"goodput_mbps": 5.0 + k})
    if bound is not None:
        r.cpu_bound = bound
        r.cpu_rule = {"idle_below_pct": 10.0, "max_time_pct": 20.0}
        r.cpu_idle = [(2.0, 2.5, 4.0 if bound else 70.0)]
        r.cpu_shares = {"s1": 40.0, "controller": 9.5}
        r.metrics.update(cpu_idle_pct=4.0 if bound else 70.0, cpu_low_idle_pct=100.0 * bound)
    return r


@pytest.mark.parametrize("bound", [True, False, None])
def test_run_result_round_trip(tmp_path, bound):
    r = _run("ecmp", 0, bound)
    path = report.write_run(tmp_path, r)
    assert json.loads(path.read_text())["cpu_bound"] is bound
    assert report.read_run(path) == r


def test_an_older_result_without_the_field_loads_as_unknown():
    d = _run("ecmp", 0, True).to_dict()
    for key in ("cpu_bound", "cpu_rule", "cpu_idle", "cpu_shares"):
        del d[key]
    r = RunResult.from_dict(d)
    assert r.cpu_bound is None and r.cpu_shares == {} and r.cpu_idle == []


def test_a_malformed_mark_is_rejected():
    with pytest.raises(ValueError, match="cpu_bound"):
        RunResult.from_dict({**_run("ecmp", 0, True).to_dict(), "cpu_bound": "yes"})


def test_runs_csv_has_the_mark(tmp_path):
    results = [_run("ecmp", 0, True), _run("ecmp", 1, False), _run("ecmp", 2, None)]
    runs_csv, _ = report.write_csv(tmp_path, results)
    rows = list(csv.DictReader(runs_csv.open()))
    assert [row["cpu_bound"] for row in rows] == ["true", "false", ""]
    assert rows[0]["cpu_idle_pct"] == "4.0" and rows[2]["cpu_idle_pct"] == ""


def test_comparison_table_marks_cpu_bound_runs():
    results = [_run("ecmp", 0, True), _run("ecmp", 1, False), _run("rr", 0, False)]
    text = tables.comparison_table(results)
    assert "runs per policy: ecmp: 2 (1 cpu-bound†), rr: 1\n" in text
    assert "| metric | ecmp † | rr |\n" in text
    assert (
        "† CPU-bound run(s) (machine idle < 10 % for more than 20 % of the measured time): "
        "the machine, not only the policy, limited them: sc/ecmp/run0.\n"
    ) in text
    assert "not recorded" not in text


def test_comparison_table_without_cpu_bound_runs_has_no_mark():
    text = tables.comparison_table([_run("ecmp", 0, False), _run("rr", 0, False)])
    assert "†" not in text and "not recorded" not in text


def test_tables_say_when_the_load_is_unknown():
    results = [_run("ecmp", 0, None), _run("ecmp", 1, False)]
    assert "CPU load not recorded for 1 of 2 run(s).\n" in tables.comparison_table(results)
    assert "†" not in tables.comparison_table(results)


def test_summary_table_counts_cpu_bound_runs_per_row():
    results = [_run("ecmp", 0, True), _run("ecmp", 1, True), _run("rr", 0, False)]
    text = tables.summary_table(results)
    assert "| sc | ecmp | 2 (2†) |" in text and "| sc | rr | 1 |" in text
    assert "sc/ecmp/run0, sc/ecmp/run1." in text


def test_closing_warning_names_the_runs():
    results = [_run("ecmp", 0, True), _run("rr", 1, False)]
    text = cpu_warning("mpsched compare", results)
    assert text.startswith("mpsched compare: warning: 1 of 2 run(s) were CPU-bound")
    assert "  sc/ecmp/run0: idle < 10 % for 100 % of the measured time (mean idle 4 %)" in text
    assert "rr" not in text
    assert cpu_warning("mpsched run", [_run("rr", 0, False), _run("rr", 1, None)]) == ""


# -- the sampler on this machine -------------------------------------------------------------


def test_sampler_reads_this_process():
    sampler = CpuSampler(lambda: {"me": os.getpid()}, period=0.05)
    sampler.start()
    busy_until = time.monotonic() + 0.3
    while time.monotonic() < busy_until:  # CPU time of our own
        pass
    samples = sampler.stop()
    assert len(samples) >= 2 and all("me" in s.procs for s in samples)
    assert cpu.process_shares(samples)["me"] > 0
    series = cpu.idle_series(samples)
    assert series and all(0.0 <= idle <= 100.0 for _, _, idle in series if not math.isnan(idle))
