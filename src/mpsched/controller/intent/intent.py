"""The operator's intent: the scheduler (traffic classes, their policies, the global
parameters, admin states, what learning policies learned), the static path weights and a
fabric's links taken down (src/mpsched/controller/fabric/routes.py), and their persistence in the
state file
(src/mpsched/controller/intent/state.py).

`IntentKeeper` holds them; `snapshot` reads them as an `Intent`, `apply` replaces them by
one (at start from the state file, or when taking over as primary), `persist` saves them
after an operator write every switch acknowledged. Not thread-safe except `persist` and
`take_over`: the controller calls the rest under its lock.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

from mpsched.controller.fabric.routes import Routes
from mpsched.controller.intent.state import (
    Intent,
    PathIntent,
    StateError,
    StateStore,
    copy_params,
    no_state_view,
)
from mpsched.controller.model.errors import FieldError
from mpsched.controller.scheduling.classes import DEFAULT_CLASS_ID
from mpsched.controller.scheduling.scheduler import Scheduler

log = logging.getLogger(__name__)


class IntentKeeper:
    def __init__(
        self,
        scheduler: Scheduler,
        weights: dict[int, int],
        store: StateStore | None = None,
        routes: Routes | None = None,
    ) -> None:
        self.scheduler = scheduler
        self.weights = weights
        self.store = store
        self.routes = routes  # the links' admin states (None: no fabric, no links)
        self.defaults = self._start_values()
        self._save_lock = threading.Lock()
        self._learned_saved: dict[str, Any] | None = None

    def default_policy(self) -> str:
        return self.scheduler.classes[DEFAULT_CLASS_ID].policy.name

    def _start_values(self) -> tuple[str, float, float, float | None]:
        """What the command line sets and a restored intent replaces: the default class's
        policy, the control period, the step budget and the CPU budget."""
        params = self.scheduler.params
        return (self.default_policy(), params.control_period_ms, params.step_budget_pct,
                params.cpu_budget_pct)

    def snapshot(self) -> Intent:
        """Everything the operator set: classes and policies, parameters, per path the
        static weight and the admin state, and what the policies learned."""
        scheduler = self.scheduler
        return Intent(
            tuple(c for _, c in sorted(scheduler.classes.items())),
            copy_params(scheduler.params),
            {
                p: PathIntent(w, p not in scheduler.admin_down)
                for p, w in sorted(self.weights.items())
            },
            learned=scheduler.learned(),
            links_down=frozenset(self.routes.links_down if self.routes else ()),
        )

    def build(self, intent: Intent) -> Scheduler:
        """A scheduler holding `intent`; StateError names what does not fit this network
        (a path it does not have, a class its program cannot run)."""
        unknown = sorted(set(intent.paths) - set(self.weights))
        if unknown:
            raise StateError(
                f"no path {unknown[0]} in the network description (paths {sorted(self.weights)})",
                f"paths.{unknown[0]}",
            )
        fabric = self.routes.fabric if self.routes else None
        for name in sorted(intent.links_down - set(fabric.link_by_name if fabric else ())):
            raise StateError(f"no link {name} in the fabric", f"links.{name}")
        old = self.scheduler
        try:
            scheduler = Scheduler(
                old.switches,
                old.path_ids,
                list(intent.classes),
                copy_params(intent.params),
                ca_supported=old.ca_supported,
            )
            scheduler.restore_learned(intent.learned)
        except FieldError as error:
            raise StateError(error.message, error.field) from None
        scheduler.admin_down = {p for p, pi in intent.paths.items() if not pi.up}
        return scheduler

    def install(self, intent: Intent, scheduler: Scheduler) -> None:
        """Make `scheduler` (built from `intent` by `build`) and the intent's weights the
        intended state."""
        self.scheduler = scheduler
        for p, pi in intent.paths.items():
            self.weights[p] = pi.weight
        if self.routes is not None:
            self.routes.set_links_down(intent.links_down)
        policy, period, step_pct, cpu_pct = now = self._start_values()
        if now != self.defaults:
            log.warning(
                "restored intent replaces the start values: default class policy %s, "
                "control period %g ms, step budget %g %%, CPU budget %s",
                policy, period, step_pct, _pct(cpu_pct),
            )
        log.info(
            "intent restored: classes %s, admin down %s, weights %s, links down %s",
            sorted(scheduler.classes),
            sorted(scheduler.admin_down),
            dict(sorted(self.weights.items())),
            sorted(intent.links_down),
        )

    def load(self) -> Intent | None:
        """The intent saved in the state file, if any (StateError: unusable file)."""
        return None if self.store is None else self.store.load()

    def persist(self, take: Callable[[], Intent]) -> None:
        """After an operator write every switch acknowledged: save the whole intent. The
        snapshot (`take`, under the controller's lock) is taken under the save lock, so the
        last save is the newest intent."""
        if self.store is None:
            return
        with self._save_lock:
            self.store.save(take())

    def save_learned(self, learned: dict[str, Any], take: Callable[[], Intent]) -> None:
        """Save the state file when what the policies learned changed since the last save."""
        if self.store is None or not learned or learned == self._learned_saved:
            return
        self.persist(take)
        self._learned_saved = learned

    def view(self) -> dict[str, Any]:
        """What is persisted (GET /state): the file, the intent as saved, when, the last
        error."""
        return no_state_view() if self.store is None else self.store.view()


def _pct(value: float | None) -> str:
    """A budget in % for the log ("none" without one)."""
    return "none" if value is None else f"{value:g} %"
