"""The controller application, independent of os-ken and HTTP: one manager per concern
under a thin `Controller` that composes them and holds the one lock they share.

- intent.py (`IntentKeeper`): the operator's intent (the scheduler's classes, policies and
  parameters, admin states, static weights) and its state file;
- operator.py (`Operator`): the operator's writes, each through one helper
  (lock -> mutate -> submit -> await -> persist);
- mastership.py (`Mastership`): primary or backup, and taking over when promoted;
- routes.py (`Routes`): the routing: each switch's forwarding, the scheduler's units (a
  switch of two edges, a pair of a fabric's edges); fabric_ops.py: its links and pairs;
  regime_ops.py (`RegimeKeeper`): the pairs' probe regimes, active or idle;
- telemetry/intake.py (`TelemetryIntake`): reports and counters in, path states out; the
  switches' reports reach it a batch per hold of the lock (telemetry/inbox.py);
- scheduling/pins.py (`PinManager`): MPTCP subflow pins, wanted and sent;
- stepper.py (`Stepper`): a scheduler step per switch and its writes
  (southbound/entries.py, southbound/writes.py);
- loop.py (`ControlLoop`): the control loop's fixed schedule and its statistics;
- backend.py (`RestBackend`): what the REST API serves, the typed views of
  northbound/views.py and the operator's writes.

`Controller` is each agent's `AgentHost` (southbound/agent_model.py) and the loop's `LoopHost`.
Its methods block the calling native thread (a REST worker's, the control loop's).
"""

from __future__ import annotations

import functools
import threading
import time
from concurrent.futures import Future, wait
from dataclasses import dataclass, field, replace

from mpsched.controller.app.backend import RestBackend
from mpsched.controller.app.fabric_ops import FabricOps
from mpsched.controller.fabric.failures import FailureWatch
from mpsched.controller.fabric.routes import Routes
from mpsched.controller.intent.intent import IntentKeeper
from mpsched.controller.intent.mastership import Mastership
from mpsched.controller.intent.operator import Operator
from mpsched.controller.intent.state import Intent, StateError, StateStore
from mpsched.controller.model.errors import NotFoundError, NotPrimaryError, UnavailableError
from mpsched.controller.model.reports import PathReport, RttReport
from mpsched.controller.runtime.gcfreeze import FREEZE_MIN_PATHS, Freezer
from mpsched.controller.runtime.governor import CPU_BUDGET_PCT, CpuGovernor
from mpsched.controller.runtime.steplock import StepFirstLock
from mpsched.controller.scheduling.classes import (
    DEFAULT_CLASS_ID,
    MAX_CLASSES,
    ClassPolicy,
    TrafficClass,
)
from mpsched.controller.scheduling.loop import ControlLoop, every
from mpsched.controller.scheduling.mptcp import MptcpReport
from mpsched.controller.scheduling.pins import PinManager
from mpsched.controller.scheduling.scheduler import STEP_BUDGET, GlobalParams, Scheduler
from mpsched.controller.scheduling.stepper import Stepper
from mpsched.controller.southbound.agent import SwitchAgent
from mpsched.controller.southbound.agent_model import AgentSettings
from mpsched.controller.southbound.counters import COUNTER_BUDGET_CPS
from mpsched.controller.southbound.regime_ops import REGIME_CHECK_S, RegimeKeeper
from mpsched.controller.southbound.writes import await_all
from mpsched.controller.telemetry.estimators import EstimatorSettings, TelemetryConfig
from mpsched.controller.telemetry.inbox import Inbox
from mpsched.controller.telemetry.intake import TelemetryIntake
from mpsched.controller.telemetry.ports import PortRate
from mpsched.controller.telemetry.regimes import ProbeRegimes
from mpsched.controller.telemetry.stats import Sample
from mpsched.netcfg import NetCfg, SwitchCfg
from mpsched.p4rt.client import TableEntry
from mpsched.p4rt.p4info import P4InfoError
from mpsched.p4rt.pipeline import Pipeline

__all__ = [
    "DEFAULT_POLICY",
    "Controller",
    "ControllerSettings",
    "NotFoundError",
    "NotPrimaryError",
    "UnavailableError",
]

DEFAULT_POLICY = "ecmp"


@dataclass(frozen=True)
class ControllerSettings:
    poll_interval: float = 1.0
    # per-path counter cells all the agents read per second at most (southbound/counters.py)
    counter_budget_cps: float | None = COUNTER_BUDGET_CPS
    write_timeout: float = 5.0
    default_weight: int = 1
    telemetry_period: float = 1.0  # how often each path's estimates go into its history
    estimators: EstimatorSettings = field(default_factory=EstimatorSettings)
    telemetry: TelemetryConfig = field(default_factory=TelemetryConfig)
    default_policy: str = DEFAULT_POLICY  # the default class's policy at start
    control_period_ms: float = 100.0
    control: bool = True  # run the control loop (False: placements change on request only)
    # the start value of `params.step_budget_pct` (PUT /params changes it): the share of the
    # control period, in percent, a loop step may spend stepping a fabric's due pairs, most
    # overdue first; the rest wait for the next step (src/mpsched/controller/scheduling/due.py)
    step_budget_pct: float = STEP_BUDGET * 100
    # the start value of `params.cpu_budget_pct`: the process's CPU, % of one core, its
    # control steps keep within (src/mpsched/controller/runtime/governor.py; None: no budget)
    cpu_budget_pct: float | None = CPU_BUDGET_PCT
    election_id: int = 1  # P4Runtime arbitration: the highest id is primary (backup: lower)
    peer: str | None = None  # the other controller's REST URL, named when refusing writes
    # paths with an estimator before the long-lived state is frozen out of the garbage
    # collector's full collections (src/mpsched/controller/runtime/gcfreeze.py; 0: never)
    gc_freeze_min_paths: int = FREEZE_MIN_PATHS


class Controller(RestBackend):
    """The application: the managers, wired to each other under one lock, started and
    stopped together; the REST API's views and writes come from `RestBackend` (backend.py).
    """

    def __init__(
        self,
        net: NetCfg,
        pipeline: Pipeline,
        bmv2_json: str,
        settings: ControllerSettings | None = None,
        store: StateStore | None = None,
    ) -> None:
        """With a `store`, the intent saved there (if any) replaces the settings' start
        values before any switch is programmed, and every acknowledged operator write is
        saved there (StateError: the file cannot be used; it is left as it is). ConfigError
        (naming the field): a network the program cannot hold (edges, paths per pair).
        P4InfoError: a program holding fewer traffic classes per edge than MAX_CLASSES."""
        self.net = net
        self.pipeline = pipeline
        s = settings or ControllerSettings()
        # every switch's telemetry under the report budget of all the edges together
        self.settings = s = replace(s, telemetry=s.telemetry.for_fabric(len(net.edge_switches())))
        net.check_limits(pipeline.max_edges, pipeline.max_paths)
        if pipeline.max_classes < MAX_CLASSES:
            # the traffic classes' models take ids up to MAX_CLASSES - 1 (classes.py); the
            # program must hold as many per edge (p4src/include/defines.p4 MAX_CLASSES)
            raise P4InfoError(
                f"the program holds {pipeline.max_classes} traffic classes per edge, the "
                f"controller's class ids go up to {MAX_CLASSES - 1}: compile it with "
                f"MAX_CLASSES {MAX_CLASSES} (p4src/include/defines.p4)")
        ids = net.path_ids()
        # the pairs' probe regimes (telemetry/regimes.py): on a fabric with an idle interval
        regimes = ProbeRegimes(s.telemetry.regimes(net.topology is not None))
        self.routes = Routes(net, pipeline.max_paths, regimes)
        self._lock = StepFirstLock()
        self._stop = threading.Event()
        self._started = False
        weights = {p: s.default_weight for p in ids}
        self.keeper = IntentKeeper(self._scheduler(), weights, store, self.routes)
        self.intake = TelemetryIntake(net, s.estimators, s.telemetry, self.routes)
        # path and RTT reports, taken in a batch per hold of the lock (after a waiting step)
        self.reports: Inbox[PathReport | RttReport] = Inbox(self._lock.after_step,
                                                             self._take_report)
        self.pins = PinManager(net, pipeline, self.routes)
        agent_cfg = AgentSettings(
            poll_interval=s.poll_interval, counter_budget_cps=s.counter_budget_cps,
            election_id=(0, s.election_id), telemetry=s.telemetry
        )
        self.agents = [
            SwitchAgent(sw, net, pipeline, bmv2_json, self, agent_cfg,
                        functools.partial(self.forwarding, sw))
            for sw in net.switches
        ]
        self.stepper = Stepper(self.agents, pipeline, self.intake, self.pins)
        self.mastership = Mastership(self.agents, self.keeper, self._apply_intent, s.peer)
        self.operator = Operator(
            self._lock, self.mastership, self.keeper, self.stepper, s.write_timeout
        )
        # the fabric's links and pairs (GET /links, /pairs, /pairs/{id}; PUT /links/{id}/admin)
        port_rates = self._port_rates
        self.fabric = FabricOps(self._lock, self.routes, self.keeper, self.intake, self.operator,
                                port_rates)
        self.intake.shares.port_rates = port_rates  # other pairs' load on a link (sharing.py)
        self.links, self.set_link_admin = self.fabric.links, self.fabric.set_link_admin
        self.pairs, self.pair = self.fabric.pairs, self.fabric.pair
        by_name = {a.sw.name: a for a in self.agents}
        self.failures = FailureWatch(self._lock, self.routes, self.intake, self.operator,
                                     lambda sw: by_name[sw].status.state == "ready")
        self.loop = ControlLoop(self, self._stop)
        self.regime_keeper = RegimeKeeper(self._lock, self.routes, self.intake, pipeline,
                                          self.agents, s.write_timeout)
        self._regimes = every(REGIME_CHECK_S, self.update_regimes, self._stop, "regimes")
        # the step's share of the period under the process's CPU budget (governor.py)
        self.governor = CpuGovernor()
        self._freezer = Freezer(s.gc_freeze_min_paths)
        self._recorder = every(s.telemetry_period, self._record, self._stop, "telemetry")
        if store is not None:
            intent = store.load()
            if intent is not None:
                try:
                    self.restore(intent)
                except StateError as error:
                    raise error.in_file(store.path) from None

    def _port_rates(self) -> dict[str, dict[int, PortRate]]:
        """Each switch's ports' latest transmit rates (its agent's PortMeter; replaced whole
        by the agent's thread, read here without its lock)."""
        return {a.sw.name: a.ports.rates for a in self.agents}

    def _scheduler(self) -> Scheduler:
        """The scheduler at start: the default class only, with the settings' policy."""
        default = TrafficClass(
            DEFAULT_CLASS_ID, "default", policy=ClassPolicy(self.settings.default_policy)
        )
        return Scheduler(
            [u.key for u in self.routes.units()],
            self.net.path_ids(),
            [default],
            GlobalParams().updated({"control_period_ms": self.settings.control_period_ms,
                                    "step_budget_pct": self.settings.step_budget_pct,
                                    "cpu_budget_pct": self.settings.cpu_budget_pct}),
            ca_supported=self.pipeline.has_congestion,
        )

    @property
    def store(self) -> StateStore | None:
        return self.keeper.store

    # -- lifecycle -------------------------------------------------------------

    def start(self) -> None:
        self._started = True
        for agent in self.agents:
            agent.start()
        self._recorder.start()
        if self.routes.regimes.enabled:
            self._regimes.start()
        if self.settings.control:
            self.loop.start()

    def wait_ready(self, timeout: float) -> bool:
        return all(agent.wait_ready(timeout) for agent in self.agents)

    def stop(self) -> None:
        self._stop.set()
        for agent in self.agents:
            agent.stop()
        for agent in self.agents:
            agent.join(timeout=5)
        self._freezer.release()

    # -- mastership and intent -------------------------------------------------

    def role(self) -> str:
        return self.mastership.role()

    def require_primary(self) -> None:
        self.mastership.require_primary()

    def intent(self) -> Intent:
        """Everything the operator set (what the state file keeps)."""
        with self._lock:
            return self.keeper.snapshot()

    def restore(self, intent: Intent) -> None:
        """Make `intent` the intended state; before `start`, so that the switches' first
        programming already carries it. StateError names what does not fit this network
        (a path it does not have); nothing changes then."""
        if self._started:
            raise RuntimeError("restore() must come before start()")
        self._apply_intent(intent)

    def _apply_intent(self, intent: Intent) -> None:
        scheduler = self.keeper.build(intent)
        with self._lock:
            self.keeper.install(intent, scheduler)

    # -- AgentHost: what the switches' agents call -----------------------------

    def forwarding(self, sw: SwitchCfg) -> list[TableEntry]:
        """The switch's forwarding entries under the current routing (routes.py)."""
        with self._lock:
            return self.routes.forwarding(self.pipeline, sw, self.settings.telemetry)

    def sched_entries(self, switch: str) -> list[TableEntry]:
        with self._lock:
            return self.stepper.sched_entries(self.scheduler, switch, time.time())

    def on_sample(self, switch: str, samples: dict[int, Sample]) -> None:
        with self._lock:
            self.intake.on_sample(switch, samples)

    def on_report(self, report: PathReport) -> None:
        self.reports.put(report)

    def on_rtt(self, report: RttReport) -> None:
        self.reports.put(report)

    def _take_report(self, report: PathReport | RttReport) -> None:
        """A report into the intake (under the lock: telemetry/inbox.py)."""
        if isinstance(report, RttReport):
            self.intake.ingest_rtt_report(report)
        else:
            self.intake.ingest_report(report)

    def on_mptcp(self, report: MptcpReport) -> None:
        """An MPTCP digest: track it, and pin new subflows at once."""
        with self._lock:
            if self.pins.tracker.ingest(report):
                self.stepper.push_pins(self.scheduler, time.time())

    def on_promoted(self, switch: str) -> None:
        self.mastership.on_promoted(switch)

    def probe_wanted(self, switch: str, dst_edge: int, path_id: int) -> bool:
        return self.intake.probe_wanted(switch, dst_edge, path_id, time.time())

    def probe_tick_s(self, switch: str) -> float:
        return self.intake.probe_tick_s(switch)

    def probe_installed(self, switch: str, dst_edge: int, path_id: int) -> bool:
        return self.intake.probe_installed(switch, dst_edge, path_id)

    # -- LoopHost: what the control loop calls ---------------------------------

    def control_period_ms(self) -> float:
        return self.scheduler.params.control_period_ms

    def step_budget_s(self) -> float:
        """How long this step may spend stepping a fabric's pairs: the current parameter
        `step_budget_pct` (PUT /params) of the current control period, lowered while the
        process is over its CPU budget (`cpu_budget_pct`,
        src/mpsched/controller/runtime/governor.py)."""
        params = self.scheduler.params
        cpu = params.cpu_budget_pct
        share = self.governor.step_share(params.step_budget_pct / 100,
                                         None if cpu is None else cpu / 100)
        return share * params.control_period_ms / 1000

    def step(self) -> dict[str, Future]:
        # not while a re-route is writing its entries (Operator.rerouting)
        start = time.perf_counter()
        with self.operator.rerouting, self._lock.first():
            self.loop.lock_waited(time.perf_counter() - start)
            return self.stepper.submit(self.scheduler, time.time(), only_ready=True,
                                       budget_s=self.step_budget_s())

    def await_step(self, futures: dict[str, Future]) -> None:
        await_all(futures, self.settings.write_timeout)

    def prepare_step(self) -> None:
        """Compute ahead what the next step would (a large fabric's link shares)."""
        with self._lock.first():
            self.intake.shares.refresh(time.time(), self.control_period_ms() / 1000)

    def check_idle(self) -> None:
        """Read the pins' counters; subflows whose count did not move for the idle
        timeout are dropped (their pins go with the next step)."""
        if not self.pipeline.has_mptcp or not self.pins.tracker.connections:
            return
        futures = self.stepper.read_pin_counters()
        done, _ = wait(futures.values(), timeout=self.settings.write_timeout)
        reads = [f.result() for f in done if f.exception() is None]
        with self._lock:
            self.pins.count(reads, time.time(), self.scheduler.params.mptcp.idle_timeout_s)

    def check_failures(self) -> None:
        """Infer failed links and re-route around them (failures.py): primary only."""
        if self.routes.is_fabric and self.role() == "primary":
            self.failures.check(time.time())

    def update_regimes(self) -> None:
        """Update the fabric's probe regimes (regime_ops.py): primary only."""
        if self.role() == "primary":
            self.regime_keeper.update(time.time())

    def save_learned(self) -> None:
        """Save what the policies learned when it changed (primary only: the backup's
        policies see the same paths but the primary's file is the one kept)."""
        if self.store is None or self.role() != "primary":
            return
        with self._lock:
            learned = self.scheduler.learned()
        self.keeper.save_learned(learned, self.intent)

    def _record(self) -> None:
        """This period's snapshots into the paths' histories (`TelemetryIntake.record`), then
        the garbage collector's freeze if the state grew (gcfreeze.py)."""
        self.intake.record(time.time(), self._lock.after_step)
        if not self._stop.is_set():  # stop() unfreezes
            self._freezer.maybe(len(self.intake.estimators))
