"""bench/scale.py and bench/scale_model.py: the fabric of a size, the figures' lines, the
targets missed, the memory check, /proc parsing and the plot (no BMv2)."""

from __future__ import annotations

import pytest

from mpsched.bench import scale
from mpsched.bench.scale_model import (
    FIGURES,
    SizeResult,
    cpu_pct,
    fabric_section,
    jobs_line,
    meminfo_available_mb,
    memory_fits,
    misses,
    pairs,
    phases_line,
    plot,
    result_lines,
    spine_links,
    status_rss_mb,
)
from mpsched.controller.scheduling.loop import Phases
from mpsched.controller.southbound.agent_model import JobTime
from mpsched.controller.telemetry.config import TelemetryConfig
from mpsched.fabric.files import parse_fabric
from mpsched.fabric.model import ANY_BUILD_MAX_EDGES


def test_a_size_is_a_leaf_spine_of_four_spines_whose_links_a_spine_failure_names():
    fabric = parse_fabric(fabric_section(32), max_edges=ANY_BUILD_MAX_EDGES)
    assert len(fabric.edges) == 32 and fabric.spines() == ["spine1", "spine2", "spine3",
                                                           "spine4"]
    assert len(fabric.pairs()) == pairs(32) == 992
    links = spine_links(32, 2)
    assert len(links) == 32 and set(links) <= set(fabric.link_by_name)
    assert all(name.endswith("-spine2") for name in links)


def test_result_lines_name_every_figure_of_every_size():
    r8 = SizeResult(8, program_s=1.25, loop_p99_ms=12.0, entries_edge=120)
    lines = result_lines([r8, SizeResult(16)])
    assert len(lines) == 2 * len(FIGURES)
    assert "scale_program_s_8=1.2" in lines or "scale_program_s_8=1.3" in lines
    assert "scale_entries_edge_8=120" in lines  # counts stay integers
    assert "scale_reroute_ms_16=n/a" in lines


def test_misses_name_the_figures_over_their_targets():
    ok = SizeResult(8, loop_p99_ms=100.0, rss_mb=200.0, cpu_pct=10.0, reroute_ms=50.0)
    bad = SizeResult(48, loop_p99_ms=250.0, cpu_pct=80.0)
    assert misses([ok]) == []
    assert misses([ok, bad]) == ["loop_p99_ms at 48 leaves: 250.0 > 100",
                                 "cpu_pct at 48 leaves: 80.0 > 50"]


def test_the_loop_phases_line_gives_each_phase_its_own_share():
    phases = [Phases(1.0, 11.0, 41.0)] * 98 + [Phases(100.0, 150.0, 450.0)] * 2
    line = phases_line(phases)
    assert line.startswith("loop phases, p50 / p99 ms: ")
    assert "the lock 1.0 / 100.0" in line
    assert "the pairs' steps and entries 10.0 / 50.0" in line
    assert "the writes until acknowledged 30.0 / 300.0" in line
    assert phases_line([]) == "loop phases: no writing step"


def test_the_jobs_line_gives_their_waits_and_runs():
    times = [JobTime(0.001, 0.004)] * 98 + [JobTime(0.2, 0.05)] * 2
    assert jobs_line(times) == ("agents' jobs (100), p50 / p99 ms: waited in the queue "
                                "1.0 / 200.0, ran 4.0 / 50.0")
    assert jobs_line([]) == "agents' jobs: none"


def test_memory_fits_within_the_margin_of_the_available_memory():
    assert memory_fits(52, per_switch_mb=100, controller_mb=400, available_mb=10_000)
    assert not memory_fits(52, per_switch_mb=150, controller_mb=400, available_mb=10_000)


def test_proc_texts_parse_to_mib():
    assert meminfo_available_mb("MemTotal: 1 kB\nMemAvailable:   2048 kB\n") == 2.0
    assert status_rss_mb("Name:\tx\nVmRSS:\t  10240 kB\n") == 10.0
    with pytest.raises(ValueError):
        status_rss_mb("Name:\tkthreadd\n")
    assert cpu_pct(0.5, 2.0) == 25.0 and cpu_pct(1.0, 0.0) == 0.0


def test_the_plot_scales_bars_to_the_largest_size_and_skips_unmeasured_figures():
    lines = plot([SizeResult(8, loop_p99_ms=10.0), SizeResult(16, loop_p99_ms=40.0)],
                 ("loop_p99_ms", "rss_mb"))
    assert lines[0] == "loop_p99_ms (target <= 100)"
    assert lines[1].count("#") == 10 and lines[2].count("#") == 40
    assert not any(line.startswith("rss_mb") for line in lines)


def test_sizes_beyond_the_build_are_refused():
    assert scale.parse_args(["--sizes", "8", "16"]).sizes == [8, 16]
    with pytest.raises(SystemExit):
        scale.parse_args(["--sizes", str(scale.SCALE_EDGES + 1)])


def test_the_controllers_telemetry_options_are_its_own(capsys):
    """The bench takes the controller's telemetry, budget and liveness options, with its
    defaults and its checks (errors name the option)."""
    args = scale.parse_args(["--probe-max-pps", "100", "--dead-after-ms", "200"])
    assert (args.telemetry.probe_max_pps, args.telemetry.dead_after_us) == (100, 200_000)
    assert scale.parse_args([]).telemetry == TelemetryConfig()
    assert scale.parse_args(["--step-budget-pct", "7"]).step_budget_pct == 7.0
    for bad, message in ((["--dead-after-ms", "0"], "--dead-after-ms: must be >= 0.001"),
                         (["--step-budget-pct", "0"], "--step-budget-pct: must be > 0"),
                         (["--probe-budget-pps", "-1"], "--probe-budget-pps: must be >= 0"),
                         (["--counter-budget-cps", "-1"], "--counter-budget-cps: must be >= 0")):
        with pytest.raises(SystemExit):
            scale.parse_args(bad)
        assert message in capsys.readouterr().err


def test_a_threads_stat_gives_its_cpu_and_its_name_its_group():
    from mpsched.bench.scale_model import stat_cpu_s, thread_group

    # pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime
    text = "4242 (python3 (x) y) S 1 2 3 4 5 6 7 8 9 10 150 50 0 0 20 0 1"
    assert stat_cpu_s(text, 100) == pytest.approx(2.0)
    assert thread_group("agent-leaf3") == "agent" and thread_group("control") == "control"
    assert thread_group("p4rt-stream-7") == "p4rt"


def test_the_machine_marks_a_size_cpu_bound():
    """/proc/stat samples 0.5 s apart: idle below 10 % for 3 of 4 intervals marks the size
    cpu_bound (the lab's rule); its idle share is over the whole measurement."""
    from mpsched.bench.scale_model import SizeResult, machine_mark, plot, result_lines
    from mpsched.lab.cpu import CpuSample, CpuTimes

    def samples(idles):
        out, idle, total = [CpuSample(0.0, CpuTimes(0, 0), {})], 0, 0
        for k, share in enumerate(idles, start=1):
            idle, total = idle + share, total + 100
            out.append(CpuSample(k * 0.5, CpuTimes(idle, total), {}))
        return out

    busy, calm = SizeResult(8), SizeResult(16)
    machine_mark(busy, samples([5, 5, 5, 50]))
    machine_mark(calm, samples([40, 30, 5, 50]))
    assert (busy.cpu_bound, busy.machine_idle_pct) == (1, pytest.approx(16.25))
    assert (calm.cpu_bound, calm.machine_idle_pct) == (1, pytest.approx(31.25))
    machine_mark(calm, samples([40, 30, 50, 50]))
    assert calm.cpu_bound == 0
    unknown = SizeResult(32)
    machine_mark(unknown, samples([]))
    assert unknown.cpu_bound is None and unknown.machine_idle_pct is None
    lines = result_lines([busy, calm, unknown])
    assert "scale_cpu_bound_8=1" in lines and "scale_cpu_bound_16=0" in lines
    assert "scale_cpu_bound_32=n/a" in lines and "scale_machine_idle_pct_8=16.2" in lines
    assert not [line for line in plot([busy, calm]) if line.startswith("cpu_bound")]
