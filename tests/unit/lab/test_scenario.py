"""Scenario files: the shipped ones load; bad keys are named; netem arguments."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from pathlib import Path

import pytest
import yaml

from mpsched.emu.netem import netem_args
from mpsched.emu.params import GilbertElliott, LinkParams
from mpsched.emu.schedule import Ramp, Step
from mpsched.fabric.files import parse_fabric
from mpsched.lab.scenario import ScenarioError, load, parse
from mpsched.proc.layout import REPO_ROOT

FABRICS = sorted((REPO_ROOT / "scenarios").glob("fabric-*.yaml"))  # the runnable fabrics
SCENARIOS = sorted(set((REPO_ROOT / "scenarios").glob("*.yaml")) - set(FABRICS))  # two edges
MINIMAL = {
    "name": "t",
    "duration_s": 10,
    "paths": [{"rate_mbps": 10, "delay_ms": 5}, {"rate_mbps": 5}],
    "workload": [{"kind": "bulk", "streams": 2}],
}


def test_every_design_row_has_a_scenario():
    names = {p.stem for p in SCENARIOS}
    for required in (
        "llhd-1", "llhd-2", "llhd-3", "llhd-comprehensive", "cmt-la", "fd-mvqs",
        "lm3-failure", "fairness-002",
    ):  # fmt: skip
        assert required in names


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.stem)
def test_shipped_scenarios_load_and_cite_the_paper(path: Path):
    sc = load(path)
    assert sc.name == path.stem
    assert path.read_text().startswith("# "), "a comment citing the paper's parameters"
    assert 1 <= len(sc.topo.paths) <= 4


@pytest.mark.parametrize("path", FABRICS, ids=lambda p: p.stem)
def test_shipped_fabrics_load_and_say_what_they_stress(path: Path):
    sc = load(path, fabric=True)
    assert sc.name == path.stem and sc.fabric is not None and not sc.topo.paths
    assert "What it stresses" in path.read_text().split("\nname:")[0]
    assert sc.fabric_workload
    if path.stem.startswith("fabric-mptcp-"):  # the variants differ in MPTCP steering only
        assert sc.compare == ("ecmp",) and any(w.mptcp for w in sc.fabric_workload)
    else:
        assert sc.compare == ("ecmp", "letflow", "ca")


def test_llhd1_parameters():
    sc = load(REPO_ROOT / "scenarios" / "llhd-1.yaml")
    p1, p2 = sc.topo.paths
    assert (p1.forward.rate_mbps, p1.forward.delay_ms, p1.forward.loss) == (10, 10, 0.01)
    assert (p2.forward.rate_mbps, p2.forward.delay_ms, p2.forward.loss) == (5, 5, 0.02)
    assert p1.reverse == p1.forward
    assert sc.capacities_mbps() == [10, 5]
    assert sc.policy_weights("ecmp") == {1: 1, 2: 1}
    assert sc.policy_weights("static") == {1: 100, 2: 50}


def test_lm3_failure_schedule():
    sc = load(REPO_ROOT / "scenarios" / "lm3-failure.yaml")
    path3 = sc.topo.paths[2]
    downs = [e for e in path3.forward_events if isinstance(e, Step)]
    assert [(e.at_s, e.changes["up"]) for e in downs] == [(10, False), (30, True), (50, False)]
    assert isinstance(path3.forward.gilbert, GilbertElliott)
    assert path3.forward.mean_loss() == pytest.approx(0.045)
    assert path3.core is not None and path3.core.forward.delay_ms == 30
    assert sc.capacities_mbps() == [10, 11, 2]  # the access links are the bottlenecks


def test_path_rate_is_the_slowest_segment_and_zero_while_down():
    doc = yaml.safe_load(yaml.safe_dump(MINIMAL))
    doc["paths"][0]["core"] = {"rate_mbps": 4, "schedule": [{"down_s": 2, "up_s": 3}]}
    path = parse(doc).topo.paths[0]
    assert [path.rate_at(t) for t in (0, 2.5, 3)] == [4, 0, 4]
    doc["paths"][0]["core"] = {"rate_mbps": 4, "dealy_ms": 1}
    with pytest.raises(ScenarioError) as err:
        parse(doc)
    assert err.value.field == "paths[0].core.dealy_ms"


def test_controller_params_are_checked_with_the_controllers_validation():
    doc = yaml.safe_load(yaml.safe_dump(MINIMAL))
    doc["params"] = {"mptcp": {"steering": False}, "control_period_ms": 50}
    assert parse(doc).params == {"mptcp": {"steering": False}, "control_period_ms": 50}
    assert parse(yaml.safe_load(yaml.safe_dump(MINIMAL))).params == {}
    for bad, field in (({"mptcp": {"idle_timeout_s": 0}}, "params.mptcp.idle_timeout_s"),
                       ({"nope": 1}, "params.nope"), ([1], "params")):
        doc["params"] = bad
        with pytest.raises(ScenarioError) as err:
            parse(doc)
        assert err.value.field == field, (bad, err.value.field)


@pytest.mark.parametrize("prefix", ["mptcp", "mptcp-failure"])
def test_mptcp_scenarios_differ_only_in_steering(prefix):
    hashed, steered = (
        load(REPO_ROOT / "scenarios" / f"{prefix}-{v}.yaml") for v in ("hash", "steered")
    )
    assert (hashed.params, steered.params) == (
        {"mptcp": {"steering": False}}, {"mptcp": {"steering": True}})
    assert hashed.topo.paths == steered.topo.paths
    assert steered.topo.host_addresses == 3


def test_reverse_override_and_direction():
    doc = yaml.safe_load(yaml.safe_dump(MINIMAL))
    doc["paths"][0]["reverse"] = {"loss_pct": 0}
    doc["paths"][0]["loss_pct"] = 3
    doc["paths"][0]["schedule"] = [
        {"at_s": 5, "set": {"loss_pct": 9}, "direction": "forward"},
        {"ramp": "rate_mbps", "from_s": 0, "to_s": 4, "start": 10, "end": 20},
    ]
    sc = parse(doc)
    p = sc.topo.paths[0]
    assert p.forward.loss == 0.03 and p.reverse.loss == 0.0
    assert p.reverse.delay_ms == 5
    assert len(p.forward_events) == 2 and len(p.reverse_events) == 1
    assert isinstance(p.reverse_events[0], Ramp)


@pytest.mark.parametrize(
    ("mutate", "field"),
    [
        (lambda d: d.pop("duration_s"), "duration_s"),
        (lambda d: d.update(bogus=1), "bogus"),
        (lambda d: d["paths"][0].update(delay_ms=-1), "paths[0].delay_ms"),
        (lambda d: d["paths"][0].update(dealy_ms=5), "paths[0].dealy_ms"),
        (lambda d: d["paths"][1].update(loss_pct=101), "paths[1].loss_pct"),
        (lambda d: d["paths"][1].update(rate_mbps="fast"), "paths[1].rate_mbps"),
        (lambda d: d["paths"][0].update(gilbert={"p_pct": 1}), "paths[0].gilbert.r_pct"),
        (
            lambda d: d["paths"][0].update(schedule=[{"at_s": -1, "set": {}}]),
            "paths[0].schedule[0].at_s",
        ),
        (
            lambda d: d["paths"][0].update(schedule=[{"at_s": 1, "set": {"loss": 1}}]),
            "paths[0].schedule[0].set.loss",
        ),
        (
            lambda d: d["paths"][0].update(
                schedule=[{"ramp": "up", "from_s": 0, "to_s": 1, "start": 0, "end": 1}]
            ),
            "paths[0].schedule[0].ramp",
        ),
        (lambda d: d["paths"][0].update(schedule=[{"when": 1}]), "paths[0].schedule[0]"),
        (
            lambda d: d["paths"][0].update(schedule=[{"trace": "nope.csv"}]),
            "paths[0].schedule[0].trace",
        ),
        (lambda d: d["workload"][0].update(kind="ftp"), "workload[0].kind"),
        (lambda d: d["workload"][0].update(streams=0), "workload[0].streams"),
        (lambda d: d["workload"][0].update(sizes_kb=[1]), "workload[0].sizes_kb"),
        (lambda d: d["workload"].append({"kind": "vbr", "path": 1}), "workload[1].path"),
        (lambda d: d["workload"].append({"kind": "files", "count": 3}), "workload[1].sizes_kb"),
        (lambda d: d.update(paths=[]), "paths"),
        (
            lambda d: d["paths"][0].update(
                schedule=[{"ramp": "rate_mbps", "from_s": 0, "to_s": 1, "start": None, "end": 5}]
            ),
            "paths[0].schedule[0].start",
        ),
        (
            lambda d: d["paths"][0].update(
                gilbert={"p_pct": 1, "r_pct": 9}, schedule=[{"at_s": 1, "set": {"loss_pct": 3}}]
            ),
            "paths[0].schedule[0]",
        ),
        (
            lambda d: (
                d["paths"][0].update(cross_traffic=True),
                d["workload"].append({"kind": "vbr", "path": 1, "load_pct": 0}),
            ),
            "workload[1].load_pct",
        ),
        (lambda d: d.update(policy={"name": "magic"}), "policy.name"),
        (lambda d: d.update(policy={"weights": [1]}), "policy.weights"),
        (lambda d: d.update(policy={"weights": [0, 0]}), "policy.weights"),
    ],
)
def test_bad_scenarios_name_the_key(mutate, field):
    doc = yaml.safe_load(yaml.safe_dump(MINIMAL))
    mutate(doc)
    with pytest.raises(ScenarioError) as err:
        parse(doc)
    assert err.value.field == field, str(err.value)


def test_not_yaml_and_missing_file(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: [unclosed\n")
    with pytest.raises(ScenarioError, match="not valid YAML"):
        load(bad)
    with pytest.raises(ScenarioError):
        load(tmp_path / "missing.yaml")


def test_mptcp_workload_gives_hosts_enough_addresses():
    doc = yaml.safe_load(yaml.safe_dump(MINIMAL))
    doc["workload"].append({"kind": "bulk", "mptcp": True, "subflows": 3})
    assert parse(doc).topo.host_addresses == 3


def test_netem_arguments():
    args = netem_args(LinkParams(delay_ms=10, jitter_ms=1, loss=0.01, rate_mbps=10))
    assert args[:5] == ["delay", "10ms", "1ms", "distribution", "normal"]
    assert args[5:8] == ["loss", "random", "1%"]
    assert args[8:10] == ["rate", "10000000bit"]
    # limit = queue + packets in flight during the delay at the rate (10 Mbit/s * 13 ms / 1514 B)
    assert args[10:] == ["limit", str(100 + 11)]
    ge = netem_args(LinkParams(gilbert=GilbertElliott(0.01, 0.3, 0.0, 0.5)))
    assert ge[:6] == ["loss", "gemodel", "1%", "30%", "50%", "0%"]
    down = netem_args(LinkParams(up=False, loss=0.5))
    assert down[:3] == ["loss", "random", "100%"]


def test_netem_link_commands_with_a_fake_tc():
    """The netem backend's commands (this kernel has no netem to run them on)."""
    import subprocess

    from mpsched.emu.netem import NetemLink

    calls: list[list[str]] = []

    def run(cmd: list[str]) -> subprocess.CompletedProcess:
        calls.append(cmd)
        out = "qdisc netem 8001: root refcnt 2 limit 111\n Sent 1514 bytes 1 pkt (dropped 2, ...)\n"
        return subprocess.CompletedProcess(cmd, 0, out if "-s" in cmd else "", "")

    link = NetemLink("s1-eth2", "s2-eth2", run_ab=run, run_ba=run)
    link.set("ab", LinkParams(delay_ms=5, rate_mbps=10))
    assert calls[-1][:7] == ["tc", "qdisc", "replace", "dev", "s1-eth2", "root", "netem"]
    link.set("ba", LinkParams(loss=0.02))
    assert calls[-1][4] == "s2-eth2" and "2%" in calls[-1]
    # dropping the rate needs a fresh qdisc: replace keeps an old rate
    link.set("ab", LinkParams(delay_ms=5))
    assert calls[-2] == ["tc", "qdisc", "del", "dev", "s1-eth2", "root"]
    assert link.stats()["ab"] == {"tx_bytes": 1514, "tx": 1, "drop": 2}


def test_scenario_policies_are_the_controllers():
    """Every policy the controller registers can be named in a scenario, and no other."""
    from mpsched.controller.policies import REGISTRY
    from mpsched.lab.scenario import ADAPTIVE, BASELINES, CONGESTION_AWARE, PAPERS

    assert sorted(BASELINES + PAPERS + CONGESTION_AWARE + ADAPTIVE) == sorted(REGISTRY)


# -- data-centre workloads: kind poisson ------------------------------------------------------

POISSON = {"kind": "poisson", "sizes": "datamining", "load_pct": 70}


def test_files_are_open_loop_unless_a_concurrency_is_given():
    doc = yaml.safe_load(yaml.safe_dump(MINIMAL))
    doc["workload"] = [{"kind": "files", "sizes_kb": [10], "count": 3}]
    assert parse(doc).workload[0].concurrency == 0


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"sizes": "hadoop"}, "workload[0].sizes"),
        ({"load_pct": None}, "workload[0].load_pct"),
        ({"load_pct": 150}, "workload[0].load_pct"),
        ({"max_kb": 0}, "workload[0].max_kb"),
        ({"scale": -1}, "workload[0].scale"),
        ({"max_concurrent": -1}, "workload[0].max_concurrent"),
        ({"drain_s": 10}, "workload[0].drain_s"),  # the run is 10 s long
        ({"path": 1}, "workload[0].path"),
        ({"sizes_kb": [1]}, "workload[0].sizes_kb"),
    ],
)
def test_bad_poisson_workloads_name_the_key(change, field):
    doc = yaml.safe_load(yaml.safe_dump(MINIMAL))
    doc["workload"] = [{k: v for k, v in {**POISSON, **change}.items() if v is not None}]
    with pytest.raises(ScenarioError) as err:
        parse(doc)
    assert err.value.field == field, str(err.value)


def test_poisson_needs_paths_with_a_rate():
    doc = yaml.safe_load(yaml.safe_dump(MINIMAL))
    doc["paths"] = [{"rate_mbps": None}]
    doc["workload"] = [POISSON]
    with pytest.raises(ScenarioError) as err:
        parse(doc)
    assert err.value.field == "workload[0].load_pct"


def test_load_sweep_variants():
    from mpsched.lab.experiment import load_variants

    doc = yaml.safe_load(yaml.safe_dump(MINIMAL))
    doc["workload"] = [POISSON, {"kind": "bulk"}]
    sc = parse(doc)
    variants = load_variants(sc, [30, 90])
    assert [v.name for v in variants] == ["t-load30", "t-load90"]
    assert [v.workload[0].load_pct for v in variants] == [30, 90]
    assert all(v.workload[1] == sc.workload[1] for v in variants)
    assert load_variants(sc, None) == [sc]
    with pytest.raises(ScenarioError) as err:
        load_variants(parse(MINIMAL), [50])
    assert err.value.field == "--load-pct"


DATACENTRE = ("asymmetric", "bursty-cross", "capacity-trace", "delay-jump", "failure-return",
              "grey-loss")


@pytest.mark.parametrize("name", DATACENTRE)
def test_datacentre_scenarios_say_what_they_stress(name):
    text = (REPO_ROOT / "scenarios" / f"{name}.yaml").read_text()
    assert "What it stresses" in text.split("\nname:")[0]
    doc = yaml.safe_load(text)
    assert doc["duration_s"] == 30 and len(doc["paths"]) == 4
    assert {"kind": "poisson", "sizes": "websearch", "load_pct": 70} in doc["workload"]
    assert 20 <= sum(p["rate_mbps"] for p in doc["paths"]) <= 30
    assert {"ecmp", "wcmp", "letflow", "minrtt"} <= set(doc["compare"])


# -- two edges (paths) or a fabric ------------------------------------------------------

DIGESTS = REPO_ROOT / "tests/unit/lab/scenario_digests.json"
# The fields a Scenario had before fabrics; their repr, hashed, was recorded in DIGESTS by
# the loader of that time (log_dir is the checkout's, so it is left out). A change meant to
# alter what a shipped file loads to (a new field of LinkParams, another default) records
# them again: `.venv/bin/python -c "from tests.unit.lab.test_scenario import record_digests;
# record_digests()"`.
FIELDS = ("name", "description", "duration_s", "seed", "topo", "workload", "policy", "compare",
          "warmup_s", "params", "cpu_rule")
FABRIC = {"leaf_spine": {"leaves": 2, "spines": 2, "link": {"rate_mbps": 10}}}


def digest(sc) -> str:
    sc = dataclasses.replace(sc, topo=dataclasses.replace(sc.topo, log_dir=Path("logs")))
    return hashlib.sha256(repr({k: getattr(sc, k) for k in FIELDS}).encode()).hexdigest()


def record_digests() -> None:
    """Write DIGESTS from what the shipped files load to now."""
    digests = {p.name: digest(load(p)) for p in SCENARIOS}
    DIGESTS.write_text(json.dumps(digests, indent=1, sort_keys=True) + "\n")


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.stem)
def test_shipped_scenarios_load_as_before_fabrics(path: Path):
    """Every file of scenarios/ loads to the Scenario it loaded to before the `fabric`
    section existed (and has none)."""
    recorded = json.loads(DIGESTS.read_text())
    sc = load(path)
    assert sc.fabric is None
    assert digest(sc) == recorded[path.name]
    assert set(recorded) == {p.name for p in SCENARIOS}


def fabric_doc(**changes) -> dict:
    doc = {"name": "f", "duration_s": 10, "fabric": FABRIC}
    doc.update(changes)
    return {k: v for k, v in doc.items() if v is not None}


def test_a_fabric_scenario_is_refused_unless_asked_for():
    with pytest.raises(ScenarioError) as err:
        parse(fabric_doc(), source=Path("f.yaml"))
    assert err.value.field == "fabric"
    assert str(err.value).startswith("f.yaml: fabric: a fabric is inspected with "
                                     "`mpsched fabric FILE` and run with `mpsched run`")
    sc = parse(fabric_doc(), fabric=True)
    assert sc.fabric is not None and [s.name for s in sc.fabric.edges] == ["leaf1", "leaf2"]
    assert sc.topo.paths == () and sc.workload == ()
    # the section as written, for the network description; it parses to the same fabric
    assert sc.fabric_section == FABRIC and parse_fabric(sc.fabric_section) == sc.fabric


@pytest.mark.parametrize(
    ("changes", "field", "message"),
    [
        ({"paths": MINIMAL["paths"]}, "fabric", "either paths (two edge switches) or fabric"),
        ({"workload": MINIMAL["workload"]}, "workload[0].pairs", "missing (needed by kind bulk)"),
        ({"workload": [{"kind": "files"}]}, "workload[0].kind", "poisson, incast, bulk in a"),
        ({"policy": {"name": "static", "weights": [1, 2]}}, "policy.weights", "per path"),
        ({"fabric": {"graph": {}}}, "fabric.graph.switches", "missing"),
        ({"fabric": {**FABRIC, "graph": {}}}, "fabric.graph.switches", "missing"),
        ({"fabric": {}}, "fabric.leaf_spine", "missing (a fabric is either"),
        ({"fabric": None}, "paths", "missing"),
    ],
)
def test_fabric_or_paths(changes, field, message):
    with pytest.raises(ScenarioError) as err:
        parse(fabric_doc(**changes), fabric=True)
    assert (err.value.field, message in err.value.message) == (field, True), err.value


def test_two_edge_scenarios_still_need_their_workload():
    doc = {k: v for k, v in MINIMAL.items() if k != "workload"}
    with pytest.raises(ScenarioError) as err:
        parse(doc)
    assert (err.value.field, err.value.message) == ("workload", "missing")


def test_a_fabric_sections_traces_become_absolute(tmp_path, monkeypatch):
    """The section the description copies (fabric_section) names a trace from the scenario
    file's directory, so the controller finds it beside netcfg.json in another directory."""
    (tmp_path / "sc").mkdir()
    (tmp_path / "sc" / "t.csv").write_text("time_s,rate_mbps\n0,6\n3,2\n")
    doc = {"name": "t", "duration_s": 10, "fabric": {
        "leaf_spine": {"leaves": 2, "spines": 2, "link": {"rate_mbps": 10},
                       "overrides": [{"link": "leaf1-spine2", "schedule": [{"trace": "t.csv"}]}]}},
        "workload": [{"kind": "poisson", "sizes": "websearch", "load_pct": 10}]}
    path = tmp_path / "sc" / "f.yaml"
    path.write_text(yaml.safe_dump(doc))
    monkeypatch.chdir(tmp_path)
    section = load(path, fabric=True).fabric_section
    got = section["leaf_spine"]["overrides"][0]["schedule"][0]["trace"]
    assert got == str(tmp_path / "sc" / "t.csv")
    assert parse_fabric(section).link_by_name["leaf1-spine2"].params("leaf1", 4).rate_mbps == 2
