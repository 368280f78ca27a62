"""`make demo FABRIC=1`'s parts that need no testbed (src/mpsched/demo_fabric.py)."""

from __future__ import annotations

import math

from mpsched import demo
from mpsched.demo_fabric import SCENARIO, pair_lines
from mpsched.lab.scenario import load
from mpsched.testing import browser


def test_pair_lines_sum_the_buckets_and_mark_missing_values():
    pairs = {"leaf2->leaf1": {"goodput_mbps": 1.5, "flows_lt100k": 3, "flows_gt1m": 1,
                              "fct_lt100k_mean_s": 0.0421},
             "leaf1->leaf2": {"goodput_mbps": 0.25, "fct_lt100k_mean_s": math.nan}}
    lines = pair_lines(pairs, 1.75)
    assert lines[1].split() == ["leaf1->leaf2", "0.25", "0", "-"]
    assert lines[2].split() == ["leaf2->leaf1", "1.50", "4", "0.042"]
    assert lines[-1].split() == ["all", "pairs", "1.75"]


def test_the_demo_runs_a_fabric_with_all_to_all_traffic():
    sc = load(SCENARIO, fabric=True)
    assert sc.fabric is not None and len(sc.fabric.edges) == 4
    assert [w.kind for w in sc.fabric_workload] == ["poisson"]
    assert not sc.fabric_workload[0].matrix  # all-to-all


def test_fabric_flag_and_default_seconds():
    args = demo.build_parser().parse_args(["--fabric"])
    assert args.fabric and args.seconds is None and args.policy == "ca"
    assert demo.build_parser().parse_args([]).fabric is False


def test_the_screenshot_goes_to_the_fabric_default_a_given_path_or_nowhere(tmp_path):
    from mpsched.demo_fabric import SCREENSHOT

    path = demo.build_parser().parse_args(["--fabric"]).screenshot
    assert browser.screenshot_path(path, SCREENSHOT) == SCREENSHOT
    assert SCREENSHOT != demo.SCREENSHOT  # the two-edge demo's stays its own
    assert browser.screenshot_path(str(tmp_path / "x.png"), SCREENSHOT) == tmp_path / "x.png"
    assert browser.screenshot_path("", SCREENSHOT) is None


def test_bad_options_are_refused_before_anything_starts(monkeypatch, capsys):
    """Exit 2 naming the option, before the prerequisites are looked at or the fabric demo's
    previous results are removed."""
    import pytest

    from mpsched import demo_fabric

    def started(*_a, **_k):
        raise AssertionError("started despite a bad option")

    monkeypatch.setattr(demo.prereqs, "missing", started)
    monkeypatch.setattr(demo_fabric, "execute", started)
    for argv, message in (
        (["--seconds", "0"], "--seconds: must be > 0, got 0"),
        (["--fabric", "--seconds", "-1"], "--seconds: must be > 0, got -1"),
        (["--seconds", "nan"], "--seconds: must be > 0, got nan"),
        (["--streams", "0"], "--streams: must be 1..128, got 0"),
        (["--rates", "10,x"], "--rates: not a list of numbers: '10,x'"),
        (["--rates", "1,2,3,4,5"], "--rates: 1..4 paths, got 5"),
        (["--rates", "0"], "--rates: rate_mbps: must be 0.1..1000 Mbit/s"),
    ):
        assert demo.execute(demo.build_parser().parse_args(argv)) == 2
        assert f"demo: {message}" in capsys.readouterr().err
    with pytest.raises(AssertionError, match="started"):
        demo.execute(demo.build_parser().parse_args(["--fabric"]))
