"""The pure parts of `make bench-reliability` and `make soak`: the figures, the capture file
format, the soak's policy cycle and growth figure."""

from __future__ import annotations

import itertools

from mpsched.bench.framecap import RECORD, read_frames
from mpsched.bench.reliability import Figures
from mpsched.bench.soak_plan import policy_changes
from mpsched.bench.soak_series import growth_pct, proc_sample
from mpsched.controller.policies import REGISTRY


def test_figures_print_one_key_value_line_each_in_order():
    f = Figures()
    f.values["b_ms"] = 1.5
    f.values["a"] = 0
    assert f.lines() == ["b_ms=1.5", "a=0"]


def test_capture_records_read_back(tmp_path):
    frames = [b"\x01" * 60, b"", b"\x02" * 1514]
    path = tmp_path / "cap.bin"
    path.write_bytes(b"".join(RECORD.pack(len(f)) + f for f in frames))
    assert read_frames(path) == frames
    path.write_bytes(path.read_bytes()[:-10])  # a record cut short by a kill
    assert read_frames(path)[:2] == frames[:2]


def test_the_soak_cycles_through_every_policy_with_lm3_where_it_applies():
    combos = list(itertools.islice(policy_changes(), 200))
    assert {c["name"] for c in combos} == set(REGISTRY)
    lm3 = {c["name"] for c in combos if c["lm3"]}
    assert lm3 == {"llhd", "cmtla", "fdmvqs", "qos"}
    assert {c["flowlet_gap_us"] for c in combos} == {0, 500, 2000}


def test_growth_and_a_process_sample():
    assert growth_pct(100, 110) == 10.0
    assert growth_pct(0, 5) == 0.0
    import os

    sample = proc_sample(os.getpid())
    assert sample.rss_kb > 0 and sample.fds > 0 and sample.threads >= 1


def test_the_scenario_section_runs_alone_without_the_testbeds_prerequisites(
        monkeypatch, capsys):
    from mpsched.bench import reliability, scenario_fuzz

    monkeypatch.setattr(reliability.prereqs, "missing", lambda *names: ["root: not root"])
    monkeypatch.setattr(reliability, "interrupt_on_signals", lambda: None)
    monkeypatch.setattr(reliability, "run", lambda *a: (_ for _ in ()).throw(AssertionError))
    monkeypatch.setattr(scenario_fuzz, "bench", lambda: (
        ["a note"], {"scenario_fuzz_cases": 155, "scenario_fuzz_failures": 0}))
    assert reliability.main(["--only", "scenario"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "a note", "scenario_fuzz_cases=155", "scenario_fuzz_failures=0"]
    assert reliability.main(["--only", "scenario,fuzz"]) == 2  # the testbed's need root
