"""failures.py: the controller infers a failed link from the paths' liveness, re-routes
around it with the stable re-route, keeps probing what it cut and re-admits it when it
returns; the operator's admin states stay apart. On fabric-wan.yaml, where a cut path has a
k-shortest replacement (sea -> chi's path 2 while den-kc is down, docs/fabric.md)."""

from __future__ import annotations

import dataclasses
import threading

import pytest

from mpsched.controller.fabric.failures import FailureWatch
from mpsched.controller.fabric.routes import Routes
from mpsched.controller.intent.intent import IntentKeeper
from mpsched.controller.intent.mastership import Mastership
from mpsched.controller.intent.operator import Operator
from mpsched.controller.model.reports import PathReport
from mpsched.controller.scheduling.classes import DEFAULT_CLASS_ID, ClassPolicy, TrafficClass
from mpsched.controller.scheduling.params import GlobalParams
from mpsched.controller.scheduling.pins import PinManager
from mpsched.controller.scheduling.scheduler import Scheduler
from mpsched.controller.scheduling.stepper import Stepper
from mpsched.controller.telemetry.estimators import EstimatorSettings, TelemetryConfig
from mpsched.controller.telemetry.intake import TelemetryIntake
from mpsched.controller.telemetry.report_rates import ACTIVE_REPORT_INTERVAL_US
from mpsched.fabric.paths import route
from tests.unit.controller.fakes import FakeAgent, fabric
from tests.unit.controller.helpers import pipeline
from tests.unit.fabric.helpers import example

SEA_CHI = (1, 3)  # edges sea (1) and chi (3)


class Net:
    """The WAN under a controller's routing, intake and operator (fake agents), with the
    links truly down (`cut`) and a clock: `tick` has every installed path that avoids `cut`
    reported by its egress edge, then checks for failures."""

    def __init__(self, tmp_path, ready: bool = True) -> None:
        self.net = fabric(example("wan"))
        self.routes = Routes(self.net, max_paths=4)  # the program's 4 ids, k = 3
        self.agents = [FakeAgent(sw, "ready" if ready else "down") for sw in self.net.switches]
        self.intake = TelemetryIntake(self.net, EstimatorSettings(), TelemetryConfig(),
                                      self.routes)
        default = TrafficClass(DEFAULT_CLASS_ID, "default", policy=ClassPolicy("ecmp"))
        units = [u.key for u in self.routes.units()]
        keeper = IntentKeeper(Scheduler(units, [1, 2, 3], [default], GlobalParams()),
                              {1: 1, 2: 1, 3: 1}, None, self.routes)
        stepper = Stepper(self.agents, pipeline(), self.intake, PinManager(self.net, pipeline()))
        stepper.submit(keeper.scheduler, 0.0)
        lock = threading.Lock()
        self.operator = Operator(lock, Mastership(self.agents, keeper, apply=pytest.fail),
                                 keeper, stepper, write_timeout=1.0)
        by_name = {a.sw.name: a for a in self.agents}
        self.watch = FailureWatch(lock, self.routes, self.intake, self.operator,
                                  lambda sw: by_name[sw].status.state == "ready")
        self.cut: set[str] = set()
        self.t = 0.0
        self.seq = 0

    def tick(self, seconds: float = 0.5) -> None:
        self.t += seconds
        self.seq += 10
        for unit in self.routes.units():
            for pid, path in self.routes.installed(unit).items():
                if not self.cut & set(path.links):
                    self.intake.ingest_report(PathReport(
                        unit.egress, pid, self.seq, 0, round(self.t * 1e6), self.seq, 0, 0, 0,
                        0, self.t, src_edge=self.net.edge_id(self.net.switch(unit.ingress))))
        self.watch.check(self.t)

    def run(self, seconds: float) -> None:
        for _ in range(round(seconds / 0.5)):
            self.tick()


def test_a_failed_link_is_inferred_routed_around_watched_and_readmitted(tmp_path):
    w = Net(tmp_path)
    baseline = route(w.routes.fabric).baseline
    w.run(3.0)
    assert w.routes.links_failed == frozenset()
    w.cut = {"den-kc"}
    w.run(2.0)  # dead after 1 s without reports, checked every 0.5 s
    assert w.routes.links_failed == {"den-kc"} and w.routes.links_down == set()
    assert w.watch.hops == {("den", "kc"), ("kc", "den")}
    now = w.routes.routing.current[SEA_CHI]
    assert now[2].switches == ("sea", "kc", "atl", "chi")  # the k-shortest replacement
    assert now[1] == baseline[SEA_CHI][1] and now[3] == baseline[SEA_CHI][3]  # untouched
    # the cut path stays installed, unweighted, under the program's spare id, and probed
    assert w.routes.watch[SEA_CHI] == {4: baseline[SEA_CHI][2]}
    assert w.intake.probe_installed("sea", 3, 4) and not w.intake.probe_installed("sea", 2, 4)
    pl = w.operator.stepper.pipeline
    sea = {a.sw.name: a for a in w.agents}["sea"]
    written = [e for op, *entries in sea.client.calls if op == "modify" for e in entries]
    assert pl.path_nexthop(3, 4, w.routes.ports["sea"].neighbours["den"]) in written
    # reported as an active pair's path (no probe regimes here: every pair active)
    assert pl.report_config(3, 4, ACTIVE_REPORT_INTERVAL_US) in written
    # the replacement's estimator held the cut path's last report: no evidence against it
    w.run(3.0)
    assert w.routes.links_failed == {"den-kc"}
    w.cut = set()  # den-kc returns: the watched paths report again
    w.run(1.0)
    assert w.routes.links_failed == frozenset() and w.routes.watch == {}
    assert w.routes.routing.current == baseline


def test_the_operators_admin_state_stays_apart_from_the_inferred(tmp_path):
    w = Net(tmp_path)
    w.run(3.0)
    w.operator.set_link_admin("sea-kc", up=False)
    w.cut = {"den-kc"}
    w.run(2.5)
    assert w.routes.links_down == {"sea-kc"} and w.routes.links_failed == {"den-kc"}
    assert not any({"sea-kc", "den-kc"} & set(p.links) for paths in
                   w.routes.routing.current.values() for p in paths.values())
    w.cut = set()
    w.run(1.0)
    assert w.routes.links_down == {"sea-kc"} and w.routes.links_failed == frozenset()
    assert w.operator.keeper.snapshot().links_down == {"sea-kc"}  # only the admin state kept


def test_pairs_whose_edges_are_not_ready_are_no_evidence(tmp_path):
    """An edge whose agent is down neither probes nor reports: its pairs look dead, which
    says nothing about the links."""
    w = Net(tmp_path, ready=False)
    w.cut = {"den-kc"}
    w.run(4.0)
    assert w.routes.links_failed == frozenset()


def test_pairs_whose_ingress_probes_too_seldom_are_no_evidence(tmp_path):
    """Without probes (or with probes stretched beyond half of dead_after by the probe cap)
    an idle path goes unreported for longer than dead_after: dead for the estimators."""
    w = Net(tmp_path)
    w.intake.switch_telemetry = {name: TelemetryConfig(probe_interval_s=None)
                                 for name in w.intake.switch_telemetry}
    w.cut = {"den-kc"}
    w.run(4.0)
    assert w.routes.links_failed == frozenset()


def test_a_path_is_evidence_once_installed_and_its_edges_settled(tmp_path):
    """Every installed path is observed after `settle_s`; an edge going down and back takes
    its pairs' paths out until they settled again, the others stay observed."""
    w = Net(tmp_path)
    w.run(3.0)
    every = sum(len(w.routes.installed(u)) for u in w.routes.units())
    assert len(w.watch.observations(w.t)) == every
    sea = next(a for a in w.agents if a.sw.name == "sea")
    sea.status = dataclasses.replace(sea.status, state="down")
    w.tick()
    own = sum(len(w.routes.installed(u)) for u in w.routes.units() if "sea" in (u.ingress,
                                                                                u.egress))
    assert 0 < own < every and len(w.watch.observations(w.t)) == every - own
    sea.status = dataclasses.replace(sea.status, state="ready")
    w.tick()  # ready again: settling (dead_after_s, 1 s here)
    assert len(w.watch.observations(w.t)) == every - own
    w.run(2.0)
    assert len(w.watch.observations(w.t)) == every
