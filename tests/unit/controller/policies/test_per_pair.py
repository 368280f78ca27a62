"""Every policy decides per pair on a fabric (docs/fabric.md, "Scheduling per pair"): each
ordered pair of edges, its own paths' estimates (telemetry/intake.py), its own policy instance
(scheduling/scheduler.py).

The fake fabric is tests/unit/controller/fakes.py's leaf-spine of 3 leaves and 2 spines, every
link 10 Mbit/s: leaf1 -> leaf3 and leaf2 -> leaf3 share spine1 -> leaf3 (their path 1) and
spine2 -> leaf3 (their path 2). The estimates are fed as the switches report them (path reports
of the egress leaf3 naming the ingress, RTT reports of the ingresses naming leaf3), and the
scheduler steps each pair's view as the stepper does.
"""

from __future__ import annotations

from typing import Any

import pytest

from mpsched.controller.fabric.routes import Routes
from mpsched.controller.model.decision import Decision, Mode
from mpsched.controller.model.reports import PathReport, RttReport
from mpsched.controller.policies.lm3 import Lm3, Lm3Params, quality
from mpsched.controller.scheduling.classes import DEFAULT_CLASS_ID, ClassPolicy, TrafficClass
from mpsched.controller.scheduling.scheduler import GlobalParams, Scheduler
from mpsched.controller.telemetry.estimators import EstimatorSettings, TelemetryConfig
from mpsched.controller.telemetry.intake import TelemetryIntake
from tests.unit.controller.fakes import fabric

NOW = 1_000.0
A, B = "leaf1->leaf3", "leaf2->leaf3"  # ingress edges 1 and 2, egress edge 3
EDGE = {A: 1, B: 2}
INGRESS = {A: "leaf1", B: "leaf2"}

# (policy, its parameters, LM3 on)
WEIGHTED = ["minrtt", "llhd", "cmtla", "qos"]  # the preferred path gets the larger weight
SCORED_LOW = ["fdmvqs", "ca", "llhd-ca", "cmtla-ca", "fdmvqs-ca", "qos-ca"]  # lower score
ALL = ["ecmp", "rr", "letflow", "wcmp", *WEIGHTED, *SCORED_LOW]
CASES: list[tuple[str, dict[str, Any], bool]] = [
    *[(name, {}, False) for name in ALL],
    *[(name, {}, True) for name in ALL],
    ("adaptive", {}, False),
    ("adaptive", {"arms": "cmtla,letflow"}, False),  # its first arm decides
]


def case_id(case: tuple[str, dict[str, Any], bool]) -> str:
    name, params, lm3 = case
    return name + ("+lm3" if lm3 else "") + ("[" + ",".join(params) + "]" if params else "")


def feed(intake: TelemetryIntake, pair: str, bad: int | None, dead: int | None = None,
         mbps: dict[int, float] | None = None) -> None:
    """3 s of reports of `pair`'s two paths: each delivers its `mbps` (2 Mbit/s unless
    given); path `bad` loses 10 % and builds a queue (one-way delay rising to 46 ms, RTT 80 ms
    against 4 ms); path `dead` stopped reporting 2 s ago (beyond dead_after)."""
    for path in (1, 2):
        worse = path == bad
        rate = (mbps or {}).get(path, 2.0)
        for k in range(31):
            t = NOW - 3 + k * 0.1
            if path == dead and t > NOW - 2:
                break
            packets, rx = 20 * (k + 1), int(t * 1e6)
            owd = 1_000 + (k * 1_500 if worse else 0)
            intake.ingest_report(PathReport(
                "leaf3", path, packets, rx - owd + 5_000_000, rx, packets,
                int(rate * 12_500 * (k + 1)), packets // 10 if worse else 0, 0, 0, t,
                src_edge=EDGE[pair]))
            if k % 5 == 0:
                intake.ingest_rtt_report(RttReport(
                    INGRESS[pair], path, 3, 80_000 if worse else 4_000, 0, 3_000, t))


def run(case: tuple[str, dict[str, Any], bool], bad: dict[str, int | None],
        dead: dict[str, int | None] | None = None, periods: int = 3,
        mbps: dict[str, dict[int, float]] | None = None) -> dict[str, dict]:
    """The latest decision log entry of pairs A and B after `periods` steps, with the
    placement (`"placement"`)."""
    name, params, lm3 = case
    net = fabric()
    intake = TelemetryIntake(net, EstimatorSettings(), TelemetryConfig(), Routes(net))
    for pair in (A, B):
        feed(intake, pair, bad[pair], (dead or {}).get(pair), (mbps or {}).get(pair))
    units = [u.key for u in intake.routes.units()]
    cls = TrafficClass(DEFAULT_CLASS_ID, "default",
                       policy=ClassPolicy(name, params=params, lm3=lm3))
    sched = Scheduler(units, [1, 2], [cls], GlobalParams())
    for k in range(periods):
        for pair in (A, B):
            sched.step(intake.unit_view(intake.routes.unit(pair), NOW), NOW + k * 0.1)
    latest = {}
    for entry in sched.log:
        latest[entry["switch"]] = entry
    return {pair: {**latest[pair], "placement": sched.placement_of(pair, DEFAULT_CLASS_ID)}
            for pair in (A, B)}


def preferred(name: str, entry: dict) -> int:
    """The path the decision favours: the larger weight, or (mode ca and vq, where the switch
    chooses) the lower score."""
    if name in WEIGHTED or name == "adaptive":
        weights = {int(p): w for p, w in entry["weights"].items()}
        assert len(set(weights.values())) > 1, entry
        return max(weights, key=lambda p: weights[p])
    scores = {int(p): s for p, s in entry["scores"].items()}
    assert len(set(scores.values())) > 1, entry
    return min(scores, key=lambda p: scores[p])


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_a_pairs_dead_path_is_its_own(case):
    """A's path 2 and B's path 1 are dead (each pair's own liveness): each pair gives weight
    0 to its own dead path only."""
    got = run(case, {A: None, B: None}, {A: 2, B: 1})
    assert got[A]["weights"]["2"] == 0 and got[A]["weights"]["1"] > 0
    assert got[B]["weights"]["1"] == 0 and got[B]["weights"]["2"] > 0


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_a_pairs_decision_does_not_read_another_pairs_estimates(case):
    """Pair B's loss, delay and RTT (its load the same) leave A's decision as it was."""
    one = run(case, {A: 2, B: 1})
    other = run(case, {A: 2, B: 2})
    for key in ("weights", "mode", "scores", "reason"):
        assert one[A][key] == other[A][key], key


PREFERRING = [c for c in CASES if c[0] in WEIGHTED + SCORED_LOW or c[1]]


@pytest.mark.parametrize("case", PREFERRING, ids=case_id)
def test_each_pair_favours_the_path_that_is_good_for_it(case):
    """Path 2 is bad for A (loss, queue, RTT), path 1 for B: the scores rank by each pair's
    own estimates."""
    name = case[0]
    got = run(case, {A: 2, B: 1})
    assert preferred(name, got[A]) == 1
    assert preferred(name, got[B]) == 2


# Shared links (docs/control-loop.md, "Shared links"): A's two paths carry 1 Mbit/s each, alike;
# B fills its path 1 (8 of spine1 -> leaf3's 10 Mbit/s, which A's path 1 crosses too) without a
# standing queue or loss yet, so only the other pair's load tells the paths apart for A.
SHARED = {A: {1: 1.0, 2: 1.0}, B: {1: 8.0, 2: 0.02}}
IDLE_B = {A: {1: 1.0, 2: 1.0}, B: {1: 0.02, 2: 0.02}}
READS_CAPACITY = ["minrtt", "llhd", "cmtla", "qos", "fdmvqs", "ca", "llhd-ca", "cmtla-ca",
                  "fdmvqs-ca", "qos-ca"]
STATIC = ["ecmp", "rr", "letflow", "wcmp"]


def pull(entry: dict) -> float:
    """How much the decision draws A's new traffic to path 1 rather than path 2: its share of
    the weights; mode vq: its share of the virtual queues' BDP (the switch's argmin sends to
    the path whose queue is below its BDP); mode ca: the cost of path 2 minus path 1's."""
    placement = entry["placement"]
    if placement.mode == "vq":
        bdp = {p: v[1] for p, v in placement.vq}
        return bdp[1] / (bdp[1] + bdp[2])
    if placement.mode == "ca":
        return entry["scores"]["2"] - entry["scores"]["1"]
    weights = placement.weight_map()
    return weights[1] / (weights[1] + weights[2])


@pytest.mark.parametrize("name", READS_CAPACITY)
def test_a_score_does_not_chase_capacity_another_pair_uses(name):
    before = run((name, {}, False), {A: None, B: None}, mbps=IDLE_B)
    after = run((name, {}, False), {A: None, B: None}, mbps=SHARED)
    assert pull(after[A]) < pull(before[A]), (before[A]["reason"], after[A]["reason"])


@pytest.mark.parametrize("name", STATIC)
def test_policies_that_read_no_capacity_keep_their_weights(name):
    """ecmp, rr and letflow weigh every alive path alike, wcmp by the configured bottleneck
    (its weights are the topology's)."""
    before = run((name, {}, False), {A: None, B: None}, mbps=IDLE_B)
    after = run((name, {}, False), {A: None, B: None}, mbps=SHARED)
    assert after[A]["placement"].weights == before[A]["placement"].weights


def a_paths(mbps: dict[str, dict[int, float]]) -> list:
    net = fabric()
    intake = TelemetryIntake(net, EstimatorSettings(), TelemetryConfig(), Routes(net))
    for pair in (A, B):
        feed(intake, pair, None, None, mbps[pair])
    return list(intake.unit_view(intake.routes.unit(A), NOW).paths)


def test_lm3_keeps_the_path_no_other_pair_fills():
    """LM3's R_p (window stand-in capacity * srtt): with B's load on A's path 1, a blocking
    event halves A's active set to path 2."""
    assert quality(a_paths(IDLE_B), Lm3Params()) == {1: 0.5, 2: 0.5}
    shared = a_paths(SHARED)
    r = quality(shared, Lm3Params())
    assert r[2] > r[1]
    lm3 = Lm3()
    equal = Decision({1: 1.0, 2: 1.0}, Mode.FLOWLET, {}, "policy")
    assert lm3.apply(shared, equal, 1, NOW).weights == {1: 0.0, 2: 1.0}
