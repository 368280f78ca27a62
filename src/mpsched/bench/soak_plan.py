"""The fabric soak's pure parts (src/mpsched/bench/soak_fabric.py): what happens when, and which
samples belong to which process.

**Events** (`plan_events`): the default class's policy changes every `change_s` from the
start; every `flap_every_s` one link fails for `flap_down_s` and returns, the links taken in
turn (sorted by name) and the way alternating: odd flaps are real failures (both directions
of the link's linkem set down: frames are lost, the data plane's liveness has to notice),
even ones administrative (`PUT /links/{name}/admin`: the controller re-routes around it); and
at `restart_at_s` one switch (a spine) is killed and started again. No flap overlaps the
restart or the `RESTART_QUIET_S` after it, so that a leaf never loses both spines at once and
the restart's figure is the restart's alone.

**Lives** (`Lives`): a process is sampled by name (controller, a switch, a link), but a
restarted switch is a new process with a new PID; its samples form a series of their own
(`spine1#2`), born at the restart, with its own warm-up and its own slope window. The step
from the killed process's last sample to the new one's first is in neither series, so it
counts as no growth, and neither does the new process's start-up.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

from mpsched.bench.soak_series import Series

GAPS_US = (0, 500, 2000)  # the flowlet gaps the policy changes cycle through
RESTART_QUIET_S = 30.0  # no flap in the half minute after a restart
KINDS = ("policy", "linkem_down", "linkem_up", "admin_down", "admin_up", "restart")


@dataclass(frozen=True, order=True)
class Event:
    """At `at_s` seconds into the run: `kind` (one of KINDS) on `target` (a link, a switch;
    empty for a policy change)."""

    at_s: float
    kind: str
    target: str = ""


def plan_events(duration_s: float, change_s: float, flap_every_s: float, flap_down_s: float,
                links: Sequence[str], restart_at_s: float | None, restart: str
                ) -> list[Event]:
    """Every event of a run of `duration_s`, by time (module docstring). A flap whose down
    time would reach the end of the run, or overlap [restart_at_s - flap_down_s,
    restart_at_s + RESTART_QUIET_S], is left out; so is a restart at or after the end."""
    events = [Event(i * change_s, "policy") for i in range(int(duration_s / change_s) + 1)
              if i * change_s < duration_s]
    restarting = restart_at_s is not None and 0 <= restart_at_s < duration_s
    if restarting:
        events.append(Event(float(restart_at_s), "restart", restart))  # type: ignore[arg-type]
    names = sorted(links)
    k = 1
    while names and (t := k * flap_every_s) + flap_down_s < duration_s:
        clear = not restarting or not (
            restart_at_s - flap_down_s <= t <= restart_at_s + RESTART_QUIET_S  # type: ignore[operator]
        )
        if clear:
            way = "linkem" if k % 2 else "admin"
            link = names[(k - 1) % len(names)]
            events += [Event(t, f"{way}_down", link), Event(t + flap_down_s, f"{way}_up", link)]
        k += 1
    return sorted(events)


class Lives:
    """The series of every process life by name (module docstring): `series(name, pid, t)`
    gives the current life's series, a new one when the PID changed (born at the restart
    noted with `restarted`, else at `t`)."""

    def __init__(self) -> None:
        self.current: dict[str, Series] = {}
        self.all: list[Series] = []
        self._born: dict[str, float] = {}
        self._count: dict[str, int] = {}

    def restarted(self, name: str, at_s: float) -> None:
        """`name` was started again at `at_s`: its next PID's life is born then."""
        self._born[name] = at_s

    def series(self, name: str, pid: int, t: float) -> Series:
        s = self.current.get(name)
        if s is not None and s.pid == pid:
            return s
        n = self._count.get(name, 0) + 1
        self._count[name] = n
        born = 0.0 if n == 1 else self._born.pop(name, t)
        s = Series(name if n == 1 else f"{name}#{n}", pid, [], born_s=born)
        self.current[name] = s
        self.all.append(s)
        return s

    def sampled(self) -> list[Series]:
        """Every life that has samples, in the order they were born."""
        return [s for s in self.all if s.samples]


def policy_changes() -> itertools.cycle:
    """(name, lm3, flowlet gap) cycling through every registered policy, with LM3 on the
    papers' policies (as the lab compares them), and gaps."""
    from mpsched.controller.policies import policy_names
    from mpsched.lab.scenario import PAPERS

    combos = [
        {"name": name, "lm3": lm3, "flowlet_gap_us": gap}
        for name in policy_names()
        for lm3 in ((False, True) if name in PAPERS else (False,))
        for gap in GAPS_US
    ]
    return itertools.cycle(combos)
