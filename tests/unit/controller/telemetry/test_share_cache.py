"""telemetry/share_cache.py: a fabric's link shares kept between control steps, recomputed
for a new routing, and computed ahead of the step that would otherwise compute them."""

from __future__ import annotations

import pytest

from mpsched.controller.fabric.routes import Routes
from mpsched.controller.telemetry import share_cache
from mpsched.controller.telemetry.ports import PortRate
from mpsched.controller.telemetry.share_cache import LinkShareCache
from mpsched.controller.telemetry.sharing import link_shares
from tests.unit.controller.fakes import two_edges
from tests.unit.controller.telemetry.helpers import capacities, fabric_intake, feed

NOW = 1_000.0
A = "leaf1->leaf3"


def counting(monkeypatch) -> list[int]:
    """Count the computations (share_cache's calls of sharing.link_shares)."""
    computed: list[int] = []

    def counted(*args, **kwargs):
        computed.append(1)
        return link_shares(*args, **kwargs)

    monkeypatch.setattr(share_cache, "link_shares", counted)
    return computed


class SteadyClock:
    """share_cache's `time`, whose perf_counter advances `step` s per call: a computation of
    the shares costs exactly `step`, however busy the machine running the test is."""

    def __init__(self, step: float) -> None:
        self.step = step
        self.t = 0.0

    def perf_counter(self) -> float:
        self.t += self.step
        return self.t


@pytest.fixture(autouse=True)
def steady_cost(monkeypatch):
    """Every computation costs 1 us: the cache's reuse window (SHARES_COST_FACTOR times the
    cost) is 20 us, not whatever the machine took."""
    monkeypatch.setattr(share_cache, "time", SteadyClock(1e-6))


def test_two_edges_have_no_shares_and_nothing_to_refresh():
    cache = LinkShareCache(Routes(two_edges()), {})
    assert cache.get(NOW) == {}
    assert cache.refresh(NOW, 0.1) is False


def test_a_step_computes_once_and_a_new_routing_computes_again(monkeypatch):
    intake = fabric_intake()
    feed(intake, 2, 1, 3.0, NOW)
    computed = counting(monkeypatch)
    first = intake.shares.get(NOW)
    assert intake.shares.get(NOW) is first and len(computed) == 1  # the same step
    intake.routes.set_links_down({"leaf2-spine1"})
    assert intake.shares.get(NOW) is not first and len(computed) == 2


def test_the_port_counters_bound_the_load_once_they_are_given():
    intake = fabric_intake()
    feed(intake, 2, 1, 3.0, NOW)  # leaf2 -> leaf3 on spine1
    assert capacities(intake, A, NOW)[1][0] == pytest.approx(7.0)
    spine1 = intake.routes.ports["spine1"].neighbours["leaf3"]
    intake.shares.port_rates = lambda: {"spine1": {spine1: PortRate(mbps=0.5, pps=50)}}
    assert capacities(intake, A, NOW + 0.1)[1][0] == pytest.approx(9.5)


def test_shares_that_outlive_a_period_are_computed_ahead_and_read_by_the_next_step(
        monkeypatch):
    """`refresh` (called by the loop after a step's writes) computes the shares a step
    `ahead_s` later would compute, so that step only reads them; shares cheaper than a
    period's worth (each step's own) are left alone."""
    intake = fabric_intake()
    feed(intake, 2, 1, 3.0, NOW)
    capacities(intake, A, NOW)  # a step computes them: cheap, not worth computing ahead
    assert intake.shares.refresh(NOW + 0.01, 0.1) is False
    # costly enough to outlive the period (any cost times a huge factor)
    monkeypatch.setattr(share_cache, "SHARES_COST_FACTOR", 1e9)
    routing_before = intake.routes.routing
    intake.routes.set_links_down({"leaf2-spine1"})  # a new routing: the cached ones are stale
    assert intake.routes.routing is not routing_before
    computed = counting(monkeypatch)
    assert intake.shares.refresh(NOW + 0.02, 0.1) is True and len(computed) == 1
    capacities(intake, A, NOW + 0.1)  # the next step reads them
    assert len(computed) == 1
    assert intake.shares.refresh(NOW + 0.12, 0.1) is False  # still fresh next time
    assert len(computed) == 1
