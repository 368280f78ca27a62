"""What the scheduler and the views read of the telemetry intake (telemetry/intake.py): the
path states of a unit (src/mpsched/controller/fabric/routes.py: a switch's traffic, or a
fabric pair's) as seen for its direction, what changed since its last step, and the paths'
current estimates and histories.

A fabric pair's path ids that it does not have now (re-routed away) are out of service
there, and its paths' capacity is what the other pairs leave of their links
(telemetry/sharing.py).
"""

from __future__ import annotations

import math
from typing import Any

from mpsched.controller.fabric.routes import Unit
from mpsched.controller.model.paths import PathCounters, PathState
from mpsched.controller.model.switch import SwitchView
from mpsched.controller.telemetry.intake_base import IntakeBase
from mpsched.controller.telemetry.sharing import path_available_mbps

MIN_RTO_MS = 200.0  # Linux's lower bound of the retransmission timeout


class IntakeViews(IntakeBase):
    """The path states, unit views and histories of the intake's estimators."""

    def path_state(
        self, path_id: int, where: str, now: float, rate: float | None = None,
        bottleneck: float | None = None,
    ) -> PathState:
        """One path as its estimator of direction `where` sees it (`rate`: its capacity, else
        the description's rate for the path id; `bottleneck`: a fabric path's configured
        rate, when `rate` is what other pairs leave of it)."""
        est = self.estimators.get((path_id, where))
        rate = rate if rate is not None else self.rates.get(path_id)
        if est is None:
            return PathState(path_id, alive=True, capacity_mbps=rate, bottleneck_mbps=bottleneck)
        rtt_min, rtt_max = est.rtt_min_max_ms()
        # srtt, rttvar and in-flight age towards a neutral prior on a path without RTT
        # reports (estimators.py): an idle path is not judged by its last busy moment
        srtt, rttvar = est.srtt_aged_ms(now), est.rttvar_aged_ms(now)
        rto = None
        if srtt is not None and rttvar is not None:
            rto = max(MIN_RTO_MS, srtt + 4 * rttvar)
        counters = est.counters()
        return PathState(
            path_id,
            alive=est.alive(now) is not False,
            srtt_ms=srtt,
            rttvar_ms=rttvar,
            rtt_min_ms=rtt_min,
            rtt_max_ms=rtt_max,
            loss_rate=est.loss_rate(),
            goodput_mbps=est.goodput_mbps(),
            capacity_mbps=rate if rate else est.capacity_mbps(),
            inflight_bytes=est.inflight_aged(now),
            owd_ms=est.owd_ms(),
            owd_series_ms=est.owd_series_ms(64),
            retrans=est.retrans(),
            reordered=est.reordered(),
            rto_ms=rto,
            owd_raw_ms=est.owd_raw_ms(),
            counters=None if counters is None else PathCounters(*counters),
            bottleneck_mbps=bottleneck,
        )

    def path_states(self, switch: str, now: float) -> list[PathState]:
        """The paths as seen for `switch`'s outgoing traffic (its direction's estimators)."""
        where = self.outgoing(switch)
        return [self.path_state(pid, where, now) for pid in self.path_ids]

    def unit_view(self, unit: Unit, now: float) -> SwitchView:
        """What the scheduler's step for `unit` reads: its path states, and the flow
        reordering measured by the far edge (the egress of its traffic). A fabric pair's
        path ids it does not have now are dead there (out of service)."""
        where = unit.direction
        ooo = {pid: est.flow_ooo_total() for pid, est in self.by_direction.get(where, {}).items()}
        if not self.routes.is_fabric:
            return SwitchView(unit.key, self.path_states(unit.ingress, now), ooo)
        rates = self.routes.rates(unit)
        shares = self.shares.get(now)
        paths = self.routes.pair_paths(unit)
        states = []
        for pid in self.path_ids:
            if pid not in rates:
                states.append(PathState(pid, alive=False))
                continue
            available = path_available_mbps(shares, unit.key, paths[pid])
            rate = available if available is not None else rates[pid]
            states.append(self.path_state(pid, where, now, rate, rates[pid]))
        return SwitchView(unit.key, states, ooo)

    def unit_inputs(self, unit: Unit) -> int:
        """How many reports and RTT samples the unit's direction was handed so far."""
        return self.inputs.get(unit.direction, 0)

    def take_dirty(self) -> set[str]:
        """The directions handed an input since the last call (scheduling/due.py)."""
        dirty, self.dirty = self.dirty, set()
        return dirty

    def take_input_since(self, unit: Unit) -> float | None:
        """When the first input since the last call for the unit's direction came (None:
        none since); the next input starts anew."""
        return self.input_since.pop(unit.direction, None)

    def changes_at(self, unit: Unit, now: float, age_step_s: float) -> float:
        """When `unit_view` changes without another input (`PathEstimator.changes_at` of its
        direction's estimators; math.inf: not before one)."""
        ests = self.by_direction.get(unit.direction, {})
        return min((e.changes_at(now, age_step_s) for e in ests.values()), default=math.inf)

    def switch_view(self, switch: str, now: float) -> SwitchView:
        """The view of a two-edge switch's one unit (`unit_view`)."""
        return self.unit_view(self.routes.units_at(switch)[0], now)

    def snapshots(self, path_id: int, now: float) -> dict[str, dict[str, Any]]:
        """Per direction, the current estimates of one path."""
        return {
            d: est.snapshot(now)
            for (p, d), est in sorted(self.estimators.items())
            if p == path_id
        }

    def histories(self, path_id: int) -> dict[str, list[dict[str, Any]]]:
        """Per direction, the recorded history of one path."""
        return {
            d: list(est.history) for (p, d), est in sorted(self.estimators.items()) if p == path_id
        }

    def history_since(self, since: float, direction: str | None = None
                      ) -> dict[str, dict[str, list[dict[str, Any]]]]:
        """Per path (id as a string) and direction (`direction` only, if given), the history
        entries newer than `since`."""
        out: dict[str, dict[str, list[dict[str, Any]]]] = {}
        for (p, d), est in sorted(self.estimators.items()):
            if direction is not None and d != direction:
                continue
            out.setdefault(str(p), {})[d] = est.history.since(since)
        return out
