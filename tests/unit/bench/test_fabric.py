"""`make bench-fabric` without a testbed: its figures (src/mpsched/bench/fabric.py) and the failover
measurement from captured frames (src/mpsched/bench/fabric_failover.py, the captures'
parser src/mpsched/testing/tagcap.py)."""

from __future__ import annotations

import json
import math
import struct

import pytest

from mpsched.bench import fabric as bench
from mpsched.bench import fabric_failover as fo
from mpsched.lab.fct import fct_rows
from mpsched.lab.report import RunResult, write_run
from mpsched.lab.scenario import load
from mpsched.p4rt.pipeline import ETHERTYPE_PATH_TAG, PATH_FLAG_PROBE
from mpsched.proc.layout import REPO_ROOT
from mpsched.testing import tagcap

SWITCHES = ("leaf1", "leaf2", "leaf3", "leaf4", "spine1", "spine2")


def run(policy: str, seed: int, short: float, goodput: float, cpu_bound: bool = False,
        pair_short: float = math.nan, switch_share: float = 2.0) -> RunResult:
    return RunResult("fabric-asymmetric", policy, seed, seed, 60.0, metrics={
        "fct_lt100k_mean_s": short, "fct_p99_s": 5.0, "goodput_mbps": goodput,
        "offered_load_pct": 70.0, "cpu_cores": 2.0, "cpu_idle_pct": 50.0 - seed},
        cpu_bound=cpu_bound,
        cpu_shares={"controller": 1.0 + seed, **dict.fromkeys(SWITCHES, switch_share)},
        pairs={"leaf1->leaf2": {"fct_lt100k_mean_s": pair_short}})


RESULTS = [
    *(run("ecmp", s, 1.0, 8.0, pair_short=2.0) for s in (1, 2)),
    *(run("letflow", s, 0.4, 10.0, pair_short=1.0) for s in (1, 2)),
    run("ca", 1, 0.2, 10.0, pair_short=0.3), run("ca", 2, 0.3, 11.0, True, pair_short=0.5),
]


def test_figures_are_ratios_of_the_means_and_the_median_failover():
    got = bench.figures(fct_rows(RESULTS), "ca", [120.0, math.nan, 300.0, 80.0], 1)
    assert got["fabric_fct_short_ratio_vs_ecmp"] == pytest.approx(0.25)
    assert got["fabric_fct_short_ratio_vs_letflow"] == pytest.approx(0.625)
    assert got["fabric_goodput_ratio_vs_letflow"] == pytest.approx(1.05)
    assert got["fabric_failover_ms"] == pytest.approx(120.0)  # NaN runs left out
    assert got["fabric_cpu_bound_runs"] == 1


def test_figures_without_runs_are_nan():
    got = bench.figures(fct_rows([r for r in RESULTS if r.policy != "ecmp"]), "ca", [], 0)
    assert math.isnan(got["fabric_fct_short_ratio_vs_ecmp"])
    assert math.isnan(got["fabric_failover_ms"])


def test_pair_table_means_per_policy():
    table = bench.pair_table(RESULTS, ["ecmp", "letflow", "ca"])
    assert "  leaf1->leaf2        2.000      1.000      0.400" in table


PAPERS = [run("llhd-ca", 1, 0.3, 10.0), run("llhd-ca", 2, 0.2, 10.0),  # 0.75, 0.5: 0.625
          run("qos-ca", 1, 0.2, 10.0), run("qos-ca", 2, 0.2, 10.0),  # 0.5, 0.5: 0.5
          run("cmtla-ca", 1, math.nan, 10.0)]  # no finite short FCT: no ratio


def test_the_best_paper_variant_has_the_least_paired_ratio_to_letflow():
    assert bench.paper_ratios(RESULTS + PAPERS) == {
        "llhd-ca": (pytest.approx(0.625), pytest.approx(1.588, abs=1e-3), 2),
        "qos-ca": (pytest.approx(0.5), pytest.approx(0.0), 2)}
    assert bench.best_paper(RESULTS + PAPERS) == ("qos-ca", pytest.approx(0.5))
    assert bench.best_paper(RESULTS) is None


def test_the_waits_table_lists_the_policies_that_ran():
    results = [RunResult("fabric-asymmetric", "ca", 0, 1, 60.0, fct=[(20_000, 0.2), (30_000, 2.0)]),
               RunResult("fabric-asymmetric", "ecmp", 0, 1, 60.0, fct=[(20_000, 3.0)])]
    text = bench.waits_lines(results, ["ecmp", "letflow", "ca"])
    assert "letflow" not in text and "ca             2   1.100     1 ( 50 %)   91 %" in text


def test_papers_option():
    assert bench.parse_papers("all") == list(bench.PAPER_CA)
    assert bench.parse_papers("none") == []
    assert bench.parse_papers("qos-ca, llhd-ca,qos-ca") == ["qos-ca", "llhd-ca"]
    assert bench.parse_papers(bench.DEFAULT_PAPERS) == ["llhd-ca"]
    with pytest.raises(ValueError, match="ca, "):
        bench.parse_papers("ca")


def test_the_report_keeps_the_five_keys_then_the_best_papers(tmp_path):
    for r in RESULTS + PAPERS:
        d = tmp_path / "fct" / r.scenario / r.policy / f"run{r.seed}"
        d.mkdir(parents=True)
        write_run(d, r)
    lines = bench.report_lines(tmp_path, "ca")
    keys = [line.split("=")[0] for line in lines if "=" in line and " " not in line]
    assert keys == ["fabric_fct_short_ratio_vs_ecmp", "fabric_fct_short_ratio_vs_letflow",
                    "fabric_goodput_ratio_vs_letflow", "fabric_failover_ms",
                    "fabric_cpu_bound_runs", "fabric_fct_short_ratio_best_paper_vs_letflow",
                    "fabric_controller_cpu_pct", "fabric_idle_pct_min",
                    "fabric_switch_cpu_ratio_plain", "fabric_quiet_busy_pct"]
    assert lines[-5] == "fabric_fct_short_ratio_best_paper_vs_letflow=0.500"
    assert "  best: qos-ca" in "\n".join(lines)


def frame(t: float, key: tuple[int, int, int], probe: bool = False) -> tagcap.TagFrame:
    return tagcap.TagFrame(t, key, probe)


DEAD = {(1, 2, 2), (2, 1, 2)}


def test_failover_is_the_last_data_frame_on_a_dead_path():
    frames = [frame(99.0, (1, 2, 2)), frame(100.05, (1, 2, 2)), frame(100.18, (2, 1, 2)),
              frame(100.5, (1, 2, 1)),  # a live path
              frame(101.0, (1, 2, 2), probe=True),  # probes keep testing the dead path
              frame(121.0, (1, 2, 2))]  # after the link is back
    got = fo.failover(frames, DEAD, down_t=100.0, up_t=120.0)
    assert got.ms == pytest.approx(180.0)
    assert (got.frames_before, got.frames_after, got.worst) == (1, 2, (2, 1, 2))
    assert got.late == ((50.0, (1, 2, 2)), (180.0, (2, 1, 2)))


def test_failover_without_traffic_before_is_nan_and_without_frames_after_zero():
    assert math.isnan(fo.failover([frame(100.1, (1, 2, 2))], DEAD, 100.0, 120.0).ms)
    got = fo.failover([frame(97.0, (1, 2, 2)), frame(100.1, (1, 2, 1))], DEAD, 100.0, 120.0)
    assert got.ms == 0.0 and got.worst is None


def pcap(records: list[tuple[float, bytes]]) -> bytes:
    out = struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 64, 1)
    for t, data in records:
        out += struct.pack("<IIII", int(t), round((t % 1) * 1e6), len(data), len(data)) + data
    return out


def tagged(path_id: int, flags: int, src: int, dst: int) -> bytes:
    eth = b"\x00" * 12 + ETHERTYPE_PATH_TAG.to_bytes(2, "big")
    return eth + bytes([path_id, flags, src, dst]) + b"\x00" * 20


def test_parse_tag_frames_reads_tags_and_skips_other_frames():
    data = pcap([(5.25, tagged(2, 0, 1, 3)), (6.0, b"\x00" * 12 + b"\x08\x00" + b"\x00" * 20),
                 (7.5, tagged(1, PATH_FLAG_PROBE, 4, 1))])
    got = list(tagcap.parse_tag_frames(data + b"\x00" * 10))  # a truncated last record
    assert [(f.ts, f.key, f.probe) for f in got] == [
        (pytest.approx(5.25), (1, 3, 2), False), (pytest.approx(7.5), (4, 1, 1), True)]
    with pytest.raises(ValueError, match="pcap"):
        list(tagcap.parse_tag_frames(b"nope" * 10))


def test_crossing_keys_of_the_failure_scenario():
    fabric = load(fo.FAILURE_SCENARIO, fabric=True).fabric
    assert fo.failed_link(fabric) == ("leaf1-spine2", 20.0, 40.0)
    assert fo.crossing_keys(fabric, "leaf1-spine2") == {
        (1, 2, 2), (1, 3, 2), (1, 4, 2), (2, 1, 2), (3, 1, 2), (4, 1, 2)}
    uplinks = tagcap.edge_uplinks(fabric, lambda n, p: f"{n}-eth{p}")
    assert uplinks[:2] == ["leaf1-eth2", "leaf1-eth3"]


def test_crossing_keys_leave_out_an_id_the_reroute_reuses():
    fabric = load(REPO_ROOT / "scenarios" / "fabric-wan.yaml", fabric=True).fabric
    keys = fo.crossing_keys(fabric, "den-kc")
    assert (1, 3, 2) not in keys  # sea -> chi's path 2 is a new path while den-kc is down


def test_failed_link_needs_exactly_one():
    with pytest.raises(ValueError, match="one link"):
        fo.failed_link(load(bench.SCENARIO, fabric=True).fabric)


def test_reuse_reports_every_figure(tmp_path, capsys):
    plain = [run("plain-ecmp", s, 0.9, 10.0, switch_share=0.5) for s in (1, 2)]
    for r in RESULTS + plain:
        write_run(tmp_path / "fct" / r.policy / f"run{r.run}", r)
    (tmp_path / "quiet").mkdir()
    (tmp_path / "quiet" / "quiet.json").write_text(json.dumps(
        {"lines": ["  quiet ca ...", "  quiet plain-ecmp ..."], "fabric_quiet_busy_pct": 7.25}))
    fail = tmp_path / "failover" / "fabric-failure" / "ca" / "run0"
    fail.mkdir(parents=True)
    write_run(fail, RunResult("fabric-failure", "ca", 0, 1, 60.0, cpu_bound=False))
    (fail / fo.FAILOVER_FILE).write_text(json.dumps(
        {"run": "run0", "link": "leaf1-spine2", "down_s": 20, "ms": 150.0, "frames_before": 40,
         "frames_after": 3, "worst": [1, 2, 2], "probes_after": 9}))
    assert bench.main(["--reuse", str(tmp_path)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert "  quiet plain-ecmp ..." in out
    assert out[-10:] == ["fabric_fct_short_ratio_vs_ecmp=0.250",
                        "fabric_fct_short_ratio_vs_letflow=0.625",
                        "fabric_goodput_ratio_vs_letflow=1.050",
                        "fabric_failover_ms=150", "fabric_cpu_bound_runs=1",
                        "fabric_fct_short_ratio_best_paper_vs_letflow=nan",  # none ran
                        # ca's runs: shares 2 and 3 % of 2 cores; idle 48 % at seed 2
                        "fabric_controller_cpu_pct=5.0", "fabric_idle_pct_min=48.0",
                        # 4 x the switches' share per Mbit/s: seed 1 (10/10), seed 2 (10/11)
                        "fabric_switch_cpu_ratio_plain=3.818",
                        "fabric_quiet_busy_pct=7.2"]


def test_reuse_of_a_directory_without_runs_exits_2(tmp_path, capsys):
    assert bench.main(["--reuse", str(tmp_path)]) == 2
    assert "no fct/ runs" in capsys.readouterr().err


def test_parse_tag_frames_reads_the_feedback():
    tag = bytes([2, 0, 4, 1]) + b"\x00" * 10 + bytes([1, 5]) + b"\x00" * 8
    data = pcap([(3.0, b"\x00" * 12 + ETHERTYPE_PATH_TAG.to_bytes(2, "big") + tag)])
    (got,) = tagcap.parse_tag_frames(data)
    assert (got.key, got.fb_path, got.fb_age_s) == ((4, 1, 2), 1, pytest.approx(5 * 4096e-6))
