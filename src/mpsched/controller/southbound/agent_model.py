"""What a switch agent (southbound/agent.py) needs of the controller (`AgentHost`), its
settings, and what it tells of itself: its status, how it last programmed its switch, its
jobs' times."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple, Protocol

from mpsched.controller.southbound.counters import COUNTER_BUDGET_CPS
from mpsched.controller.southbound.digests import ReportHost
from mpsched.controller.telemetry.estimators import TelemetryConfig
from mpsched.controller.telemetry.stats import Sample
from mpsched.p4rt.client import TableEntry


class AgentHost(ReportHost, Protocol):
    """What an agent needs of the controller besides taking its reports (digests.py). Every
    call comes from the agent's own thread (probe_wanted from its prober's)."""

    def sched_entries(self, switch: str) -> list[TableEntry]:
        """Every class's placement, the classifier and the subflow pins of a (re)programmed
        switch."""
        ...

    def on_sample(self, switch: str, samples: dict[int, Sample]) -> None:
        """The per-path counters read by a poll."""
        ...

    def on_promoted(self, switch: str) -> None:
        """This controller just became primary on `switch`, before programming it."""
        ...

    def probe_wanted(self, switch: str, dst_edge: int, path_id: int) -> bool:
        """Should `switch` probe its path `path_id` towards edge `dst_edge` now (asked only
        with `probe_idle_only` or a fabric's probe regimes)?"""
        ...

    def probe_tick_s(self, switch: str) -> float:
        """How long `switch`'s prober waits between two rounds now (asked only with a
        fabric's probe regimes)."""
        ...

    def probe_installed(self, switch: str, dst_edge: int, path_id: int) -> bool:
        """Has `switch` its path `path_id` towards edge `dst_edge` installed now (a fabric's
        current or watched path, src/mpsched/controller/fabric/routes.py)?"""
        ...


@dataclass(frozen=True)
class AgentSettings:
    poll_interval: float = 1.0  # seconds between counter reads
    # cells of the per-path counters all the agents read per second at most (None: no budget)
    counter_budget_cps: float | None = COUNTER_BUDGET_CPS
    retry_interval: float = 1.0  # seconds between connection attempts to a down switch
    election_id: tuple[int, int] = (0, 1)  # P4Runtime arbitration (high, low)
    telemetry: TelemetryConfig = field(default_factory=TelemetryConfig)  # no probes: None


@dataclass(frozen=True)
class Programming:
    """How the agent last brought its switch to the controller's state."""

    how: str  # "pushed": the program and every entry | "reconciled": only the difference
    detail: str  # what was written
    at: float  # UNIX time

    def as_tuple(self) -> tuple[str, str]:
        return self.how, self.detail


@dataclass
class AgentStatus:
    state: str = "connecting"  # connecting | ready | backup | down
    error: str | None = None  # down: why; backup: which election id is primary
    since: float = 0.0


class JobTime(NamedTuple):
    """One job's time in the agent: waiting in its queue (behind other jobs, the stream's
    reports and the counters' reads), then running (its P4Runtime calls)."""

    waited_s: float
    ran_s: float
