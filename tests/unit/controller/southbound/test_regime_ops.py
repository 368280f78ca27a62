"""regime_ops.py: a fabric's probe regimes change with the traffic, and each change's
liveness entries go to both edges of the pair, one write per switch (the report intervals
that follow the regimes: test_report_ops.py)."""

from __future__ import annotations

import threading
from concurrent.futures import Future
from types import SimpleNamespace

from mpsched.controller.fabric.routes import Routes
from mpsched.controller.southbound.regime_ops import RegimeKeeper
from mpsched.controller.telemetry.estimators import EstimatorSettings, TelemetryConfig
from mpsched.controller.telemetry.intake import TelemetryIntake
from mpsched.controller.telemetry.regimes import ProbeRegimes
from mpsched.p4rt.client import TableEntry
from tests.unit.controller.fakes import fabric
from tests.unit.controller.helpers import pipeline

NOW = 1_000.0


class Agent:
    """A switch's agent that runs each job on a client recording its MODIFYs (or fails)."""

    def __init__(self, sw, state: str = "ready") -> None:
        self.sw = sw
        self.status = SimpleNamespace(state=state)
        self.writes: list[list[TableEntry]] = []
        self.fail = False
        self.pokes = 0

    def poke_prober(self) -> None:
        self.pokes += 1

    def modify(self, *entries: TableEntry) -> None:
        self.writes.append(list(entries))

    def submit(self, job) -> Future:
        f: Future = Future()
        if self.fail:
            f.set_exception(RuntimeError(f"{self.sw.name} is down"))
        else:
            f.set_result(job(self))
        return f


def keeper(enabled: bool = True) -> tuple[RegimeKeeper, dict[str, Agent]]:
    net, pl = fabric(), pipeline()
    routes = Routes(net, regimes=ProbeRegimes(enabled))
    intake = TelemetryIntake(net, EstimatorSettings(), TelemetryConfig(), routes)
    agents = {sw.name: Agent(sw) for sw in net.switches}
    return RegimeKeeper(threading.Lock(), routes, intake, pl, list(agents.values()), 1.0), agents


def liveness(writes: list[list[TableEntry]]) -> list[list[TableEntry]]:
    """The writes of liveness entries (the report intervals' are written apart)."""
    return [batch for batch in writes if any("dead_after_us" in e.params for e in batch)]


def dead_after(writes: list[list[TableEntry]]) -> dict[tuple[int, int], int]:
    return {(e.match["peer_edge"], e.match["path_id"]): e.params["dead_after_us"]
            for batch in liveness(writes) for e in batch}


def test_a_pair_goes_active_with_traffic_and_idle_without():
    k, agents = keeper()
    regimes, intake = k.regimes, k.intake
    assert not k.update(NOW)  # at start every pair idle: nothing to do
    intake.busy_at[(3, 1)] = NOW  # leaf3 -> leaf1 carried traffic
    change = k.update(NOW + 0.1)
    assert change.probe_fast == {(1, 3)} and not change.writes
    assert regimes.regime(1, 3) == "active" and regimes.regime(1, 2) == "idle"
    # both edges' probers, ticking at the idle interval, probe fast at once
    assert {n: a.pokes for n, a in agents.items() if a.pokes} == {"leaf1": 1, "leaf3": 1}
    assert all(liveness(a.writes) == [] for a in agents.values())  # the fast dead_after waits
    change = k.update(NOW + 0.2)  # the fast probes ran for the fast dead_after (50 ms)
    assert change.live_fast == {(1, 3)}
    assert [dead_after(agents[n].writes) for n in ("leaf1", "leaf3")] == [
        {(3, 1): 50_000, (3, 2): 50_000}, {(1, 1): 50_000, (1, 2): 50_000}]
    assert len(liveness(agents["leaf1"].writes)) == 1 and agents["leaf2"].writes == []
    assert regimes.idle_peers(1, [2, 3]) == {2}
    # 2 s without traffic: the slow dead_after first, the slow probes at the next update
    change = k.update(NOW + 2.2)
    assert change.live_slow == {(1, 3)} and regimes.regime(1, 3) == "active"
    assert dead_after(liveness(agents["leaf3"].writes)[1:]) == {(1, 1): 1_000_000,
                                                               (1, 2): 1_000_000}
    change = k.update(NOW + 2.3)
    assert change.probe_slow == {(1, 3)} and regimes.regime(1, 3) == "idle"
    assert not k.update(NOW + 2.4)


def test_a_switch_that_does_not_acknowledge_keeps_its_pairs_regime_until_it_does():
    k, agents = keeper()
    k.intake.busy_at[(1, 2)] = NOW
    k.update(NOW)
    agents["leaf2"].fail = True
    assert k.update(NOW + 0.1).live_fast == {(1, 2)}
    assert k.regimes.idle_peers(1, [2, 3]) == {2, 3}  # not written on leaf2: still idle
    agents["leaf2"].fail = False
    assert k.update(NOW + 0.2).live_fast == {(1, 2)}
    assert k.regimes.idle_peers(1, [2, 3]) == {3}


def test_only_ready_edges_are_written():
    k, agents = keeper()
    agents["leaf2"].status.state = "down"
    k.intake.busy_at[(1, 2)] = NOW
    k.update(NOW)
    assert k.update(NOW + 0.1).live_fast == frozenset()  # leaf2 not ready: later
    assert all(a.writes == [] for a in agents.values())  # nor its report intervals


def test_without_regimes_nothing_changes():
    k, agents = keeper(enabled=False)
    k.intake.busy_at[(1, 2)] = NOW
    assert not k.update(NOW) and k.regimes.regime(1, 3) == "active"
