"""The REST API's backend (northbound/rest.py `Backend`): the typed views it serves (GET,
northbound/views.py) and the operator's writes (PUT, through intent/operator.py), each
answered with the view of what it changed. `RestBackend` is a part of `Controller`
(core.py), which sets the managers it reads; every view is taken under the controller's lock.
"""

from __future__ import annotations

import time

from mpsched.controller.app.fabric_ops import FabricOps
from mpsched.controller.intent.intent import IntentKeeper
from mpsched.controller.intent.operator import Operator
from mpsched.controller.model.errors import NotFoundError
from mpsched.controller.model.loop import LoopStats
from mpsched.controller.northbound import answers, views
from mpsched.controller.runtime.governor import CpuGovernor
from mpsched.controller.runtime.steplock import StepFirstLock
from mpsched.controller.scheduling.classes import TrafficClass
from mpsched.controller.scheduling.loop import ControlLoop
from mpsched.controller.scheduling.pins import PinManager
from mpsched.controller.scheduling.scheduler import Scheduler
from mpsched.controller.southbound.agent import SwitchAgent
from mpsched.controller.telemetry.intake import TelemetryIntake


class RestBackend:
    """The views and writes of the REST API over the controller's managers (set by
    `Controller.__init__`)."""

    _lock: StepFirstLock
    keeper: IntentKeeper
    intake: TelemetryIntake
    pins: PinManager
    agents: list[SwitchAgent]
    governor: CpuGovernor
    loop: ControlLoop
    operator: Operator
    fabric: FabricOps

    @property
    def scheduler(self) -> Scheduler:
        return self.keeper.scheduler

    # -- views (GET) -----------------------------------------------------------

    def state(self) -> views.StateView:
        return views.StateView(**self.keeper.view())

    def weights(self) -> dict[int, int]:
        """The operator's static path weights (PUT /paths/{id}/weight)."""
        with self._lock:
            return dict(self.keeper.weights)

    def path_ids(self) -> list[int]:
        return sorted(self.keeper.weights)

    def _check_path(self, path_id: int) -> None:
        if path_id not in self.keeper.weights:
            raise NotFoundError(f"no path {path_id}")

    def _class(self, class_id: int) -> TrafficClass:
        c = self.scheduler.classes.get(class_id)
        if c is None:
            raise NotFoundError(f"no class {class_id}")
        return c

    def path(self, path_id: int) -> views.PathView:
        with self._lock:
            self._check_path(path_id)
            return views.path_view(
                path_id,
                self.keeper.weights[path_id],
                path_id not in self.scheduler.admin_down,
                self.intake.rates.get(path_id),
                self.intake.stats[path_id],
                self.intake.snapshots(path_id, time.time()),
            )

    def paths(self) -> list[views.PathView]:
        return [self.path(p) for p in self.path_ids()]

    def telemetry(self, path_id: int) -> views.PathTelemetryView:
        """Current estimates and the short history of one path, per direction."""
        now = time.time()
        with self._lock:
            self._check_path(path_id)
            current = self.intake.snapshots(path_id, now)
            history = self.intake.histories(path_id)
        directions = {
            d: views.DirectionTelemetry(current=snap, history=history[d])
            for d, snap in current.items()
        }
        return views.PathTelemetryView(id=path_id, directions=directions)

    def telemetry_since(self, since: float, direction: str | None = None
                        ) -> views.TelemetrySinceView:
        """History snapshots newer than `since` (seconds since the epoch), for polling; of
        `direction` only if given."""
        with self._lock:
            paths = self.intake.history_since(since, direction)
        return views.TelemetrySinceView(now=round(time.time(), 3), paths=paths)

    def switches(self) -> list[views.SwitchStatusView]:
        return [views.switch_view(a) for a in self.agents]

    def _class_view(self, c: TrafficClass) -> views.ClassView:
        sched = self.scheduler
        return views.class_view(c, {sw: sched.placement_of(sw, c.id) for sw in sched.switches})

    def classes(self) -> list[views.ClassView]:
        with self._lock:
            return [self._class_view(c) for _, c in sorted(self.scheduler.classes.items())]

    def traffic_class(self, class_id: int) -> views.ClassView:
        with self._lock:
            return self._class_view(self._class(class_id))

    def class_policy(self, class_id: int) -> views.PolicyView:
        with self._lock:
            return views.policy_view(self._class(class_id).policy)

    def adaptive(self, class_id: int) -> views.AdaptiveView:
        """GET /classes/{id}/adaptive: per switch the `adaptive` policy's context, current
        arm, dwell, learned table and recent dwells."""
        with self._lock:
            c = self._class(class_id)
            if c.policy.name != "adaptive":
                raise NotFoundError(
                    f"class {class_id} runs {c.policy.name!r}, not the adaptive policy"
                )
            return views.adaptive_view(c, self.scheduler)

    def params(self) -> views.ParamsView:
        with self._lock:
            return views.params_view(self.scheduler.params)

    def control_stats(self) -> LoopStats:
        """The loop's figures, with the step's share now and the process's CPU."""
        used = self.governor.cpu_share
        share = self.governor.share_now(self.scheduler.params.step_budget_pct / 100)
        return self.loop.stats().model_copy(update={
            "step_budget_pct_now": round(share * 100, 2),
            "cpu_pct": None if used is None else round(used * 100, 1),
        })

    def decisions(self, since: float, limit: int, pair: str | None = None) -> views.DecisionsView:
        """The latest `limit` decisions after `since`, of one pair (a unit's key) if given."""
        with self._lock:
            log = [e for e in self.scheduler.log if pair is None or e["switch"] == pair]
            entries = [e for e in log if e["t"] > since][-limit:]
            return views.DecisionsView(
                now=round(time.time(), 3), decisions=entries, loop=self.control_stats()
            )

    def mptcp_connections(self) -> views.ConnectionsView:
        with self._lock:
            steering = self.scheduler.params.mptcp.steering
            return views.connections_view(self.pins.tracker.connections, steering, time.time(),
                                          self.pins.unit_of)

    def mptcp_connection(self, conn_id: int) -> views.ConnectionView:
        with self._lock:
            conn = self.pins.tracker.connections.get(conn_id)
            if conn is None:
                raise NotFoundError(f"no MPTCP connection {conn_id}")
            return views.connection_view(conn, time.time(), self.pins.unit_of)

    # -- the operator's writes (PUT): operator.py --------------------------------

    def set_weight(self, path_id: int, weight: int) -> views.PathView:
        """Set one path's static weight (the default class then runs `wcmp`); returns the
        path once every switch acknowledged."""
        self.operator.set_weight(path_id, weight)
        return self.path(path_id)

    def set_admin(self, path_id: int, up: bool) -> answers.PathChangeView:
        """The path after the change, with a warning per pair it leaves without a path."""
        self.operator.set_admin(path_id, up)
        return answers.PathChangeView(**self.path(path_id).model_dump(),
                                    warnings=self.fabric.cut_off())

    def set_classes(self, classes: list[TrafficClass]) -> list[views.ClassView]:
        self.operator.set_classes(classes)
        return self.classes()

    def set_class_policy(self, class_id: int, changes: dict) -> answers.PolicyChangeView:
        dropped = self.operator.set_class_policy(class_id, changes)
        view = self.class_policy(class_id)
        return answers.PolicyChangeView(**view.model_dump(), dropped_params=dropped)

    def set_params(self, changes: dict) -> views.ParamsView:
        self.operator.set_params(changes)
        return self.params()
