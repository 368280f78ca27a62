"""The soak's figures (src/mpsched/bench/soak.py): growth, the RSS slope that tells a leak from a
warm-up, and the key=value lines."""

from __future__ import annotations

import math

from mpsched.bench.soak import summarise
from mpsched.bench.soak_series import ProcSample, Series, largest


def _series(rss: list[int], every_s: float = 60.0, fds: int = 10) -> Series:
    return Series("p", 1, [(i * every_s, ProcSample(r, fds + i, 5)) for i, r in enumerate(rss)])


def test_a_one_time_step_has_no_slope_after_it() -> None:
    # 100 MB, a 9 MB step at minute 3, then flat: growth 9 %, slope 0 from minute 10 on
    rss = [100_000] * 3 + [109_000] * 20
    s = _series(rss)
    assert math.isclose(s.rss_growth_pct(), 9.0)
    assert s.rss_slope_kb_per_min(600) == 0.0


def test_a_leak_keeps_its_slope() -> None:
    s = _series([100_000 + 80 * i for i in range(30)])
    assert math.isclose(s.rss_slope_kb_per_min(600), 80.0)


def test_too_few_samples_after_the_slope_start_give_nan() -> None:
    assert math.isnan(_series([1, 2, 3]).rss_slope_kb_per_min(600))
    assert math.isnan(largest([math.nan]))
    assert largest([math.nan, 3.0, 1.0]) == 3.0


def test_growth_of_fds() -> None:
    assert _series([1, 1, 1, 1]).growth("fds") == 3
    assert Series("p", 1, []).growth("threads") == 0


def test_a_descriptor_open_at_every_other_sample_is_no_growth() -> None:
    """The controller's fds through a fabric soak: 19, 20, 19, ... ending on 20 (a request in
    flight at some samples); a descriptor that stays open from the middle on is growth."""
    flapping = [19, 20] * 12
    assert _fds(flapping).growth("fds") == 0
    assert _fds([19, 20] * 6 + [20, 21] * 6).growth("fds") == 1


def _fds(values: list[int]) -> Series:
    return Series("p", 1, [(i * 10.0, ProcSample(1, v, 4)) for i, v in enumerate(values)])


def test_summary_ends_with_the_keys(capsys) -> None:
    summarise([_series([100_000 + 10 * i for i in range(20)])], [4.0, 6.5], 600)
    lines = capsys.readouterr().out.splitlines()
    keys = [line.split("=")[0] for line in lines if "=" in line]
    assert keys == ["soak_rss_growth_pct", "soak_rss_slope_kb_per_min",
                    "soak_rss_ls_slope_kb_per_min", "soak_fds_growth", "soak_threads_growth",
                    "soak_loop_p99_ms"]
    assert "soak_rss_slope_kb_per_min=10.0" in lines
    assert "soak_loop_p99_ms=6.5" in lines


def test_a_later_life_fits_its_slope_from_its_own_birth() -> None:
    # born at 300 s: a 9 MB start-up step at 400 s, then a 20 kB/min leak; the window
    # starts 600 s after the birth (900 s), past the step
    samples = [(float(t), ProcSample(100_000 + (9_000 if t >= 400 else 0) + t // 3, 9, 3))
               for t in range(300, 1500, 10)]
    s = Series("spine1#2", 2, samples, born_s=300)
    assert math.isclose(s.rss_slope_kb_per_min(600), 20.0, rel_tol=0.01)
    assert Series("p", 1, samples).rss_ls_slope_kb_per_min(0) > 100  # the step, unshifted


def test_a_life_without_samples_is_left_out_of_the_summary(capsys) -> None:
    summarise([Series("gone", 3, []), _series([100_000] * 12)], [1.0], 600)
    out = capsys.readouterr().out
    assert "gone" not in out and "soak_fds_growth=9" in out  # fds 10..21: 12 at most in the
    # first quarter, 21 in the last


def test_the_span_shows_a_rise_that_came_back() -> None:
    s = Series("p", 1, [(t, ProcSample(1, fds, 4)) for t, fds in enumerate([10, 14, 10])])
    assert (s.growth("fds"), s.span("fds"), s.span("threads")) == (0, "10..14", "4..4")
    assert Series("p", 1, []).span("fds") == "-"


def test_the_two_edges_are_warmed_through_the_first_paths_link_emulator(monkeypatch) -> None:
    """s1 faces port 1 of the first path's linkem (e1), s2 its port 2 (src/mpsched/topo/testbed.py);
    0
    frames: no warm-up."""
    from mpsched.bench import soak

    calls: list[tuple[str, str, int, int]] = []
    monkeypatch.setattr(soak, "proc_sample", lambda pid: ProcSample(pid * 10, 0, 0))
    monkeypatch.setattr(soak, "warm_switch", lambda name, iface, rss_kb, frames: calls.append(
        (name, iface, rss_kb(), frames)))
    soak.warm_edges({"controller": 1, "s1": 2, "s2": 3}, 500, "e1")
    assert calls == [("s1", "e1-eth1", 20, 500), ("s2", "e1-eth2", 30, 500)]
    calls.clear()
    soak.warm_edges({"controller": 1, "s1": 2, "s2": 3}, 0, "e1")
    assert calls == []


def test_one_late_step_tilts_the_least_squares_line_and_not_the_slope() -> None:
    """A switch's pool reaching a new high-water mark 20 minutes in (the hour's soak: +4.7
    MB): least squares reads some 90 kB/min over the hour's last 50 minutes, Theil-Sen the
    flat either side; a leak in steps every 5 minutes keeps its slope in both."""
    step = _series([130_000 + (4_700 if i >= 20 else 0) for i in range(60)])
    assert step.rss_ls_slope_kb_per_min(600) > 80
    assert step.rss_slope_kb_per_min(600) == 0.0
    stairs = _series([130_000 + 500 * (i // 5) for i in range(60)])
    assert 90 <= stairs.rss_slope_kb_per_min(600) <= 110
    assert 90 <= stairs.rss_ls_slope_kb_per_min(600) <= 110


def test_a_finished_soaks_samples_summarise_as_they_ran(tmp_path, capsys) -> None:
    from mpsched.bench.soak import main
    from mpsched.bench.soak_series import SAMPLES_HEADER, read_samples, sample_row

    csv = tmp_path / "samples.csv"
    rows = [SAMPLES_HEADER + "\n"]
    for i in range(20):
        t = 60.0 + 60 * i
        rows.append(sample_row(t, "controller", 7, ProcSample(100_000 + 30 * i, 19, 50), 40.0 + i))
        rows.append(sample_row(t, "spine1", 8, ProcSample(170_000, 25, 30), 40.0 + i))
        if t >= 300:  # restarted at 240 s, sampled from its warm-up's end (60 s) on
            rows.append(sample_row(t, "spine1#2", 9, ProcSample(220_000, 25, 30), 40.0 + i))
    csv.write_text("".join(rows))
    series, p99 = read_samples(csv, warmup_s=60)
    assert [s.name for s in series] == ["controller", "spine1", "spine1#2"]
    assert series[2].born_s == 240.0 and series[2].pid == 9 and len(series[0].samples) == 20
    assert p99 == [40.0 + i for i in range(20)]  # the controller's rows only
    assert main(["--summarise", str(csv)]) == 0
    out = capsys.readouterr().out
    assert "soak_rss_slope_kb_per_min=30.0" in out and "soak_loop_p99_ms=59.0" in out
    csv.write_text(SAMPLES_HEADER + "\n" + "60.0,controller,7,lots,19,50,\n")
    assert main(["--summarise", str(csv)]) == 2
    assert "samples.csv:2:" in capsys.readouterr().err
    csv.write_text("t,rss\n")
    assert main(["--summarise", str(csv)]) == 2
    assert "not a soak's samples" in capsys.readouterr().err
