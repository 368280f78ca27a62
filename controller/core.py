"""The controller's state and operations, independent of os-ken and HTTP.

`Controller` owns the intended state (traffic classes, their policies and
parameters, the operator's path weights and admin states), one `SwitchAgent`
per switch, the per-path statistics and estimators, and the control loop:
every control period, for each ingress edge switch, telemetry -> estimators ->
policy -> LM3 -> weights/active set -> table writes (controller/scheduling/scheduler.py
decides; this module reads the estimators and writes the switches). Its
methods block the calling native thread; the os-ken application runs them off
the eventlet hub.
"""

from __future__ import annotations

import dataclasses
import functools
import ipaddress
import logging
import threading
import time
from collections import deque
from concurrent.futures import Future, wait
from dataclasses import asdict, dataclass, field

from mpsched.controller.errors import FieldError
from mpsched.controller.policies.base import PathCounters, PathState
from mpsched.controller.policies.ca import ca_fixed_point, live_cost
from mpsched.controller.scheduling.classes import (
    DEFAULT_CLASS_ID,
    ClassPolicy,
    TrafficClass,
    class_to_dict,
    policy_to_dict,
)
from mpsched.controller.scheduling.mptcp import (
    Flow,
    MptcpReport,
    MptcpTracker,
    connection_to_dict,
    flow_of,
    path_order,
    pin_cost,
)
from mpsched.controller.scheduling.scheduler import (
    Change,
    GlobalParams,
    Placement,
    Scheduler,
    SwitchView,
    ca_dict,
)
from mpsched.controller.southbound.agent import SwitchAgent, TelemetryConfig
from mpsched.controller.southbound.reports import RttReport
from mpsched.controller.state import (
    Intent,
    PathIntent,
    StateError,
    StateStore,
    copy_params,
    no_state_view,
)
from mpsched.controller.telemetry.estimators import (
    EstimatorSettings,
    PathEstimator,
    PathReport,
    probe_needed,
)
from mpsched.controller.telemetry.stats import PathStats, Sample
from mpsched.netcfg import NetCfg
from mpsched.p4rt.client import P4RuntimeClient, P4RuntimeError, TableEntry
from mpsched.p4rt.pipeline import TABLE_SUBFLOW_PIN, Pipeline
from mpsched.p4rt.weights import MAX_WEIGHT

log = logging.getLogger(__name__)

DEFAULT_POLICY = "ecmp"
MIN_RTO_MS = 200.0  # Linux's lower bound of the retransmission timeout
LATENCIES_KEPT = 10_000
IDLE_CHECK_S = 1.0  # how often the control loop reads the subflow pins' counters
LEARNED_SAVE_S = 10.0  # how often the loop saves what learning policies learned, if it changed
TCP = 6

PinKey = tuple[str, str, int, int]  # subflow_pin's match: src, dst, sport, dport


class NotFoundError(LookupError):
    pass


class UnavailableError(RuntimeError):
    """A switch did not acknowledge a change."""


class NotPrimaryError(RuntimeError):
    """This controller is a backup: another one is primary on a switch, and writes go there."""


def primary_only(method):
    """An operator write: refused with NotPrimaryError while this controller is a backup."""

    @functools.wraps(method)
    def write(self, *args, **kwargs):
        self.require_primary()
        return method(self, *args, **kwargs)

    return write


@dataclass(frozen=True)
class ControllerSettings:
    poll_interval: float = 1.0
    write_timeout: float = 5.0
    default_weight: int = 1
    telemetry_period: float = 1.0  # how often each path's estimates go into its history
    estimators: EstimatorSettings = field(default_factory=EstimatorSettings)
    telemetry: TelemetryConfig = field(default_factory=TelemetryConfig)
    default_policy: str = DEFAULT_POLICY  # the default class's policy at start
    control_period_ms: float = 100.0
    control: bool = True  # run the control loop (False: placements change on request only)
    election_id: int = 1  # P4Runtime arbitration: the highest id is primary (backup: lower)
    peer: str | None = None  # the other controller's REST URL, named when refusing writes


def upsert_all(client: P4RuntimeClient, entries: list[TableEntry]) -> None:
    """MODIFY every entry in one P4Runtime Write (one round trip); entries the switch
    does not have yet are inserted one by one."""
    if not entries:
        return
    try:
        client.modify(*entries)
    except P4RuntimeError as error:
        if not error.not_found:
            raise
        for entry in entries:
            upsert(client, entry)


def insert_all(client: P4RuntimeClient, entries: list[TableEntry]) -> None:
    """INSERT every entry in one Write; if some already exist (a switch reprogrammed
    meanwhile), upsert them one by one."""
    if not entries:
        return
    try:
        client.insert(*entries)
    except P4RuntimeError:
        for entry in entries:
            upsert(client, entry)


def delete_all(client: P4RuntimeClient, entries: list[TableEntry]) -> None:
    """DELETE every entry in one Write; entries already gone are skipped."""
    if not entries:
        return
    try:
        client.delete(*entries)
    except P4RuntimeError as error:
        if not error.not_found:
            raise
        for entry in entries:
            try:
                client.delete(entry)
            except P4RuntimeError as one:
                if not one.not_found:
                    raise


def write_pins(
    client: P4RuntimeClient,
    new: list[TableEntry],
    changed: list[TableEntry],
    gone: list[TableEntry],
) -> None:
    """Apply a switch's subflow pin changes (Controller._pin_changes)."""
    upsert_all(client, changed)
    insert_all(client, new)
    delete_all(client, gone)


def upsert(client: P4RuntimeClient, entry: TableEntry) -> None:
    """MODIFY the entry, or INSERT it if the switch does not have it yet."""
    try:
        client.modify(entry)
    except P4RuntimeError as error:
        if not error.not_found:
            raise
        client.insert(entry)


class Controller:
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
        saved there (StateError: the file cannot be used; it is left as it is)."""
        self.net = net
        self.pipeline = pipeline
        self.settings = settings or ControllerSettings()
        ids = net.path_ids()
        too_high = [p for p in ids if p > pipeline.max_paths]
        if too_high:
            raise ValueError(f"path ids {too_high} exceed the program's {pipeline.max_paths} paths")
        self._lock = threading.Lock()
        self._weights = {p: self.settings.default_weight for p in ids}
        self._rates = {p.id: p.rate_mbps for sw in net.switches for p in sw.paths}
        self._stats = {p: PathStats(p) for p in ids}
        self._telemetry: dict[tuple[int, str], PathEstimator] = {}
        self._stop = threading.Event()
        self._recorder = threading.Thread(target=self._record_loop, name="telemetry", daemon=True)
        self._control = threading.Thread(target=self._control_loop, name="control", daemon=True)
        self.latencies_ms: deque[float] = deque(maxlen=LATENCIES_KEPT)
        self.iterations = 0
        self.writes = 0
        self.scheduler = Scheduler(
            [sw.name for sw in net.switches],
            ids,
            [
                TrafficClass(
                    DEFAULT_CLASS_ID, "default", policy=ClassPolicy(self.settings.default_policy)
                )
            ],
            GlobalParams().updated({"control_period_ms": self.settings.control_period_ms}),
            ca_supported=pipeline.has_congestion,
        )
        self._installed_classes: dict[str, list[TableEntry]] = {}
        # MPTCP-aware mode: connections, and the pins each switch was sent
        self.mptcp = MptcpTracker()
        self._pins: dict[str, dict[PinKey, int]] = {sw.name: {} for sw in net.switches}
        self._next_idle_check = 0.0
        self._next_learned_save = time.monotonic() + LEARNED_SAVE_S
        self._learned_saved: dict | None = None
        self.agents = [
            SwitchAgent(
                sw,
                net,
                pipeline,
                bmv2_json,
                self.sched_entries,
                self._on_sample,
                on_report=self.ingest_report,
                on_rtt=self.ingest_rtt_report,
                on_mptcp=self.ingest_mptcp,
                on_promoted=self._on_promoted,
                probe_wanted=self.probe_wanted,
                poll_interval=self.settings.poll_interval,
                election_id=(0, self.settings.election_id),
                telemetry=self.settings.telemetry,
            )
            for sw in net.switches
        ]
        # the operator's intent on disk (controller/state.py)
        self.store = store
        self._save_lock = threading.Lock()
        self._started = False
        if store is not None:
            intent = store.load()
            if intent is not None:
                try:
                    self.restore(intent)
                except StateError as error:
                    raise error.in_file(store.path) from None

    # -- mastership --------------------------------------------------------

    def role(self) -> str:
        """"backup" while another controller is primary on any switch, else "primary"."""
        return "backup" if any(a.status.state == "backup" for a in self.agents) else "primary"

    def require_primary(self) -> None:
        backups = [a for a in self.agents if a.status.state == "backup"]
        if backups:
            where = "; ".join(f"{a.sw.name}: {a.status.error}" for a in backups)
            peer = f" at {self.settings.peer}" if self.settings.peer else ""
            raise NotPrimaryError(
                f"this controller is a backup ({where}): send writes to the primary{peer}"
            )

    def _on_promoted(self, switch: str) -> None:
        """The agent of `switch` just became primary (the other controller is gone). The
        operator's intent is taken over from the shared state file, which the old primary
        kept up to date; the agent's next programming reads the switch back and writes the
        difference. Called in the agent's thread, before it programs the switch."""
        log.warning("%s: taking over as primary", switch)
        if self.store is None:
            return
        try:
            intent = self.store.load()
            if intent is not None:
                self._apply_intent(intent)
        except StateError as error:
            log.error(
                "%s: the intent in %s cannot be taken over (%s); this controller's is kept",
                switch,
                self.store.path,
                error,
            )

    # -- lifecycle -------------------------------------------------------

    def start(self) -> None:
        self._started = True
        for agent in self.agents:
            agent.start()
        self._recorder.start()
        if self.settings.control:
            self._control.start()

    def wait_ready(self, timeout: float) -> bool:
        return all(agent.wait_ready(timeout) for agent in self.agents)

    def stop(self) -> None:
        self._stop.set()
        for agent in self.agents:
            agent.stop()
        for agent in self.agents:
            agent.join(timeout=5)

    # -- intent (persisted by the store) --------------------------------

    def intent(self) -> Intent:
        """Everything the operator set: classes and policies, parameters, per path the
        static weight and the admin state."""
        with self._lock:
            return Intent(
                tuple(c for _, c in sorted(self.scheduler.classes.items())),
                copy_params(self.scheduler.params),
                {
                    p: PathIntent(w, p not in self.scheduler.admin_down)
                    for p, w in sorted(self._weights.items())
                },
                learned=self.scheduler.learned(),
            )

    def restore(self, intent: Intent) -> None:
        """Make `intent` the intended state; before `start`, so that the switches' first
        programming already carries it. StateError names what does not fit this network
        (a path it does not have); nothing changes then."""
        if self._started:
            raise RuntimeError("restore() must come before start()")
        self._apply_intent(intent)

    def _apply_intent(self, intent: Intent) -> None:
        """Replace the intended state (and the scheduler's state with it) by `intent`."""
        unknown = sorted(set(intent.paths) - set(self._weights))
        if unknown:
            raise StateError(
                f"no path {unknown[0]} in the network description (paths {self.path_ids()})",
                f"paths.{unknown[0]}",
            )
        try:
            scheduler = Scheduler(
                self.scheduler.switches,
                self.scheduler.path_ids,
                list(intent.classes),
                copy_params(intent.params),
                ca_supported=self.pipeline.has_congestion,
            )
            scheduler.restore_learned(intent.learned)
        except FieldError as error:
            raise StateError(error.message, error.field) from None
        scheduler.admin_down = {p for p, pi in intent.paths.items() if not pi.up}
        with self._lock:
            self.scheduler = scheduler
            for p, pi in intent.paths.items():
                self._weights[p] = pi.weight
        period = scheduler.params.control_period_ms
        policy = scheduler.classes[DEFAULT_CLASS_ID].policy.name
        if policy != self.settings.default_policy or period != self.settings.control_period_ms:
            log.warning(
                "restored intent replaces the start values: default class policy %s, "
                "control period %g ms",
                policy,
                period,
            )
        log.info(
            "intent restored: classes %s, admin down %s, weights %s",
            sorted(scheduler.classes),
            sorted(scheduler.admin_down),
            dict(sorted(self._weights.items())),
        )

    def state(self) -> dict:
        """What is persisted (GET /state): the file, the intent as saved, when, the last
        error."""
        return no_state_view() if self.store is None else self.store.view()

    def _persist(self) -> None:
        """After an operator write every switch acknowledged: save the whole intent. The
        snapshot is taken under the save lock, so the last save is the newest intent."""
        if self.store is None:
            return
        with self._save_lock:
            self.store.save(self.intent())

    # -- state -----------------------------------------------------------

    def weights(self) -> dict[int, int]:
        """The operator's static path weights (PUT /paths/{id}/weight)."""
        with self._lock:
            return dict(self._weights)

    def _on_sample(self, switch: str, samples: dict[int, Sample]) -> None:
        with self._lock:
            for path_id, sample in samples.items():
                self._stats[path_id].update(switch, sample)

    # -- telemetry -------------------------------------------------------

    def direction(self, ingress: str, egress: str) -> str:
        return f"{ingress}->{egress}"

    def _other(self, switch: str) -> str:
        others = [sw.name for sw in self.net.switches if sw.name != switch]
        return others[0] if len(others) == 1 else "?"

    def _estimator(self, path_id: int, direction: str) -> PathEstimator:
        key = (path_id, direction)
        if key not in self._telemetry:
            settings = dataclasses.replace(
                self.settings.estimators,
                probe_interval_s=self.settings.telemetry.probe_interval_s,
            )
            self._telemetry[key] = PathEstimator(path_id, settings)
        return self._telemetry[key]

    def probe_wanted(self, switch: str, path_id: int) -> bool:
        """Should `switch` probe `path_id` now (its Prober asks every probe interval)? Not
        while its own traffic on the path keeps the far edge measured (`probe_needed`).
        Called from the probers' threads: reads without the lock (a race only costs a
        probe)."""
        est = self._telemetry.get((path_id, self.direction(switch, self._other(switch))))
        if est is None:
            return True
        try:
            rtt_min = est.rtt_min_ms()
        except IndexError:  # the window emptied under us
            return True
        return probe_needed(time.time(), est.busy_at, rtt_min, self.settings.telemetry)

    def ingest_report(self, report: PathReport) -> None:
        """A path report of the egress edge `report.switch` (traffic from the other edge)."""
        with self._lock:
            if report.path_id not in self._weights:
                log.debug("report for unknown path %d ignored", report.path_id)
                return
            direction = self.direction(self._other(report.switch), report.switch)
            self._estimator(report.path_id, direction).add_report(report)

    def ingest_rtt(self, switch: str, path_id: int, rtt_ms: float, at: float) -> None:
        """An RTT sample measured by the ingress edge `switch` for its traffic on a path."""
        with self._lock:
            if path_id in self._weights:
                direction = self.direction(switch, self._other(switch))
                self._estimator(path_id, direction).add_rtt(rtt_ms, at)

    def ingest_rtt_report(self, report: RttReport) -> None:
        """An RTT report of the ingress edge `report.switch` (its traffic on a path): the
        RTT sample, the path's retransmission count and bytes in flight."""
        at = report.received_at
        self.ingest_rtt(report.switch, report.path_id, report.rtt_us / 1000, at)
        with self._lock:
            if report.path_id in self._weights:
                direction = self.direction(report.switch, self._other(report.switch))
                self._estimator(report.path_id, direction).add_rtt_report(
                    report.retrans, report.inflight_bytes, at
                )

    def _record_loop(self) -> None:
        while not self._stop.wait(self.settings.telemetry_period):
            now = time.time()
            with self._lock:
                for est in self._telemetry.values():
                    est.record(now)

    def telemetry(self, path_id: int) -> dict:
        """Current estimates and the short history of one path, per direction."""
        now = time.time()
        with self._lock:
            if path_id not in self._weights:
                raise NotFoundError(f"no path {path_id}")
            return {
                "id": path_id,
                "directions": {
                    d: {"current": est.snapshot(now), "history": list(est.history)}
                    for (p, d), est in sorted(self._telemetry.items())
                    if p == path_id
                },
            }

    def telemetry_since(self, since: float) -> dict:
        """History snapshots newer than `since` (seconds since the epoch), for polling."""
        with self._lock:
            out: dict[str, dict[str, list[dict]]] = {}
            for (p, d), est in sorted(self._telemetry.items()):
                out.setdefault(str(p), {})[d] = [s for s in est.history if s["t"] > since]
            return {"now": round(time.time(), 3), "paths": out}

    def path_ids(self) -> list[int]:
        return sorted(self._weights)

    def path(self, path_id: int) -> dict:
        with self._lock:
            if path_id not in self._weights:
                raise NotFoundError(f"no path {path_id}")
            stats = self._stats[path_id]
            view = {
                "id": path_id,
                "weight": self._weights[path_id],
                "admin": "down" if path_id in self.scheduler.admin_down else "up",
                "configured_rate_mbps": self._rates.get(path_id),
            }
            view.update(stats.totals())
            view["by_switch"] = {name: s.to_dict() for name, s in sorted(stats.by_switch.items())}
            now = time.time()
            view["telemetry"] = {
                d: est.snapshot(now)
                for (p, d), est in sorted(self._telemetry.items())
                if p == path_id
            }
            return view

    def paths(self) -> list[dict]:
        return [self.path(p) for p in self.path_ids()]

    def switches(self) -> list[dict]:
        return [
            {
                "name": a.sw.name,
                "device_id": a.sw.device_id,
                "grpc_address": a.sw.grpc_address,
                "state": a.status.state,
                "error": a.status.error,
                "since": a.status.since,
                "election_id": a.election_id[1],
                "programmed": None if a.programmed is None else asdict(a.programmed),
                "drops": dict(a.drops),
                "probes": a.probe_counts(),
            }
            for a in self.agents
        ]

    # -- scheduling -------------------------------------------------------

    def _path_states(self, switch: str, now: float) -> list[PathState]:
        """The paths as seen for `switch`'s outgoing traffic (its direction's estimators)."""
        direction = self.direction(switch, self._other(switch))
        states = []
        for pid in sorted(self._weights):
            est = self._telemetry.get((pid, direction))
            rate = self._rates.get(pid)
            if est is None:
                states.append(PathState(pid, alive=True, capacity_mbps=rate))
                continue
            rtt_min, rtt_max = est.rtt_min_max_ms()
            wall = time.time()
            alive = est.alive(wall)
            # srtt, rttvar and in-flight age towards a neutral prior on a path without RTT
            # reports (estimators.py): an idle path is not judged by its last busy moment
            srtt, rttvar = est.srtt_aged_ms(wall), est.rttvar_aged_ms(wall)
            rto = None
            if srtt is not None and rttvar is not None:
                rto = max(MIN_RTO_MS, srtt + 4 * rttvar)
            states.append(
                PathState(
                    pid,
                    alive=alive is not False,
                    srtt_ms=srtt,
                    rttvar_ms=rttvar,
                    rtt_min_ms=rtt_min,
                    rtt_max_ms=rtt_max,
                    loss_rate=est.loss_rate(),
                    goodput_mbps=est.goodput_mbps(),
                    capacity_mbps=rate if rate else est.capacity_mbps(),
                    inflight_bytes=est.inflight_aged(wall),
                    owd_ms=est.owd_ms(),
                    owd_series_ms=est.owd_series_ms(64),
                    retrans=est.retrans(),
                    reordered=est.reordered(),
                    rto_ms=rto,
                    owd_raw_ms=est.owd_raw_ms(),
                    counters=_counters(est.counters()),
                )
            )
        return states

    def _view(self, switch: str, now: float) -> SwitchView:
        # flow order is measured by the far edge (the egress of this switch's traffic)
        direction = self.direction(switch, self._other(switch))
        ooo = {
            pid: est.flow_ooo_total() for (pid, d), est in self._telemetry.items() if d == direction
        }
        return SwitchView(switch, self._path_states(switch, now), ooo)

    def _entries(self, change: Change) -> list[TableEntry]:
        """The entries of a change; only the parts that differ from `previous`."""
        pl, old = change.placement, change.previous
        entries = []
        if pl.vq and (old is None or old.vq != pl.vq):
            entries.append(self.pipeline.mvqs_params(change.class_id, pl.vq_map()))
        if pl.ca is not None and (old is None or old.ca != pl.ca):
            fixed = ca_fixed_point(pl.ca, self.pipeline.max_paths, self.pipeline.ca_units)
            entries.append(self.pipeline.ca_params(change.class_id, fixed))
        if old is None or (old.weights, old.mode, old.flowlet_gap_us) != (
            pl.weights,
            pl.mode,
            pl.flowlet_gap_us,
        ):
            entries.append(
                self.pipeline.weights(change.class_id, pl.weight_map(), pl.mode, pl.flowlet_gap_us)
            )
        return entries

    def _classifier(self) -> list[TableEntry]:
        out = []
        for c in self.scheduler.classes.values():
            if c.id == DEFAULT_CLASS_ID:
                continue
            m = c.match
            out.append(
                self.pipeline.traffic_class(
                    c.id, c.priority, m.dscp, m.src, m.dst, m.proto, m.src_port, m.dst_port
                )
            )
        return out

    def sched_entries(self, switch: str) -> list[TableEntry]:
        """Everything the scheduler keeps on a (re)programmed switch: every class's
        placement (and MVQS parameters), then the classifier."""
        with self._lock:
            now = time.time()
            self.scheduler.step(self._view(switch, now), now)
            entries: list[TableEntry] = []
            for cid in sorted(self.scheduler.classes):
                pl = self.scheduler.placement_of(switch, cid)
                if pl is not None:
                    entries += self._entries(Change(switch, cid, pl))
            classifier = self._classifier()
            self._installed_classes[switch] = classifier
            pins = self._desired_pins()[switch]
            self._pins[switch] = dict(pins)
            return entries + classifier + self._pin_entries(pins)

    def _submit_step(
        self, extra: dict[str, tuple] | None = None, only_ready: bool = False
    ) -> dict[str, Future]:
        """Under the lock: one step per switch; submit its changes (plus `extra` jobs).
        Jobs reach each switch in the order of the decisions. Operator requests go to
        every switch (one that is down fails them: 503); the control loop skips those
        not ready (they get everything when they are reprogrammed)."""
        now = time.time()
        futures = {}
        steps = {}
        for agent in self.agents:
            if only_ready and agent.status.state != "ready":
                continue
            changes = self.scheduler.step(self._view(agent.sw.name, now), now)
            steps[agent] = [e for ch in changes for e in self._entries(ch)]
        # subflow pins follow the new placements (re-pinning off paths that left them)
        pins = self._desired_pins()
        for agent, entries in steps.items():
            new, changed, gone = self._pin_changes(agent.sw.name, pins[agent.sw.name])
            pre, post = (extra or {}).get(agent.sw.name, ([], []))
            if not entries and not pre and not post and not (new or changed or gone):
                continue

            def job(
                client: P4RuntimeClient,
                entries=entries,
                pins=(new, changed, gone),
                pre=pre,
                post=post,
            ) -> None:
                for fn in pre:
                    fn(client)
                upsert_all(client, entries)
                write_pins(client, *pins)
                for fn in post:
                    fn(client)

            futures[agent.sw.name] = agent.submit(job)
        return futures

    # -- MPTCP-aware mode --------------------------------------------------

    def _host_switch(self, ip: str) -> str:
        """The edge switch whose subnets hold `ip` (the first switch if none does)."""
        addr = ipaddress.IPv4Address(ip)
        for sw in self.net.switches:
            if any(addr in ipaddress.IPv4Network(net) for net in sw.subnets):
                return sw.name
        return self.net.switches[0].name

    def _class_of(self, flow: Flow) -> int:
        """The class a TCP flow's packets fall into (without DSCP: class 0 then)."""
        best = None
        for c in self.scheduler.classes.values():
            if c.id == DEFAULT_CLASS_ID:
                continue
            if c.match.covers_flow(flow.src, flow.dst, TCP, flow.sport, flow.dport) and (
                best is None or c.priority > best.priority
            ):
                best = c
        return DEFAULT_CLASS_ID if best is None else best.id

    def _costs_for(self, flow: Flow) -> dict[int, float]:
        """The usable paths for a subflow and their live costs (`live_cost` under the
        class's CaCost, `pin_cost`): its class's current placement at the initiator's edge,
        alive, admin-up and weighted paths only, in the order that breaks cost ties
        (highest weight first, then path id)."""
        switch = self._host_switch(flow.src)
        pl = self.scheduler.placement_of(switch, self._class_of(flow))
        weights = pl.weight_map() if pl is not None else {}
        cost = pin_cost(pl.ca if pl is not None else None)
        usable = {
            s.path_id: s
            for s in self._path_states(switch, time.time())
            if s.alive and s.path_id not in self.scheduler.admin_down
        }
        return {p: live_cost(usable[p], cost) for p in path_order(weights, usable)}

    def _desired_pins(self) -> dict[str, dict[PinKey, int]]:
        """Per switch, the pin of each subflow in both directions (none without steering)."""
        out: dict[str, dict[PinKey, int]] = {sw.name: {} for sw in self.net.switches}
        if not self.scheduler.params.mptcp.steering or not self.pipeline.has_mptcp:
            return out
        plan = self.mptcp.plan(self._costs_for, time.time(), self.scheduler.params.mptcp)
        for flow, old, new in self.mptcp.moves:
            log.info("mptcp: subflow %s pinned to path %s (was %s)", flow, new, old)
        for sw in self.net.switches:
            ids = {p.id for p in sw.paths}
            pins = out[sw.name]
            for flow, path_id in sorted(plan.items()):
                if path_id not in ids:
                    continue
                for f in (flow, flow.reversed()):
                    if len(pins) >= self.pipeline.max_pins:
                        log.warning("%s: subflow_pin is full; %s not pinned", sw.name, f)
                        break
                    pins[(f.src, f.dst, f.sport, f.dport)] = path_id
        return out

    def _pin_entries(self, pins: dict[PinKey, int]) -> list[TableEntry]:
        return [self.pipeline.subflow_pin(*key, path_id) for key, path_id in pins.items()]

    def _pin_changes(
        self, switch: str, desired: dict[PinKey, int]
    ) -> tuple[list[TableEntry], list[TableEntry], list[TableEntry]]:
        """(new, changed, removed) pin entries of a switch; records `desired` as sent."""
        sent = self._pins[switch]
        new = {k: p for k, p in desired.items() if k not in sent}
        changed = {k: p for k, p in desired.items() if k in sent and sent[k] != p}
        gone = {k: p for k, p in sent.items() if k not in desired}
        self._pins[switch] = dict(desired)
        return self._pin_entries(new), self._pin_entries(changed), self._pin_entries(gone)

    def ingest_mptcp(self, report: MptcpReport) -> None:
        """An MPTCP digest (from an agent's thread): track it, and pin new subflows at
        once (fire and forget: the agent must not wait for its own queue)."""
        with self._lock:
            if not self.mptcp.ingest(report):
                return
            log.info("mptcp: %s %s from %s", report.kind, report.flow, report.switch)
            pins = self._desired_pins()
            for agent in self.agents:
                if agent.status.state != "ready":
                    continue
                new, changed, gone = self._pin_changes(agent.sw.name, pins[agent.sw.name])
                if not (new or changed or gone):
                    continue

                def job(client: P4RuntimeClient, pins=(new, changed, gone)) -> None:
                    write_pins(client, *pins)

                agent.submit(job).add_done_callback(_log_failure)

    def _check_idle(self) -> None:
        """Read the pins' counters; subflows whose count did not move for the idle
        timeout are dropped (their pins go with the next step)."""
        if not self.pipeline.has_mptcp:  # a program built without MPTCP: no pins
            return
        futures = {
            a.sw.name: a.submit(lambda c: c.read_direct_counters(TABLE_SUBFLOW_PIN))
            for a in self.agents
            if a.status.state == "ready"
        }
        done, _ = wait(futures.values(), timeout=self.settings.write_timeout)
        now = time.time()
        with self._lock:
            totals: dict[Flow, int] = {}
            for f in done:
                if f.exception() is not None:
                    continue
                for match, value in f.result():
                    found = self.mptcp.find(flow_of(match))
                    if found is not None:
                        key = found[1].flow
                        totals[key] = totals.get(key, 0) + value.packets
            self.mptcp.touch(totals, now)
            for flow in self.mptcp.expire(now, self.scheduler.params.mptcp.idle_timeout_s):
                log.info("mptcp: %s idle, unpinned", flow)

    def mptcp_connections(self) -> dict:
        with self._lock:
            now = time.time()
            return {
                "steering": self.scheduler.params.mptcp.steering,
                "connections": [
                    connection_to_dict(c, now) for _, c in sorted(self.mptcp.connections.items())
                ],
            }

    def mptcp_connection(self, conn_id: int) -> dict:
        with self._lock:
            conn = self.mptcp.connections.get(conn_id)
            if conn is None:
                raise NotFoundError(f"no MPTCP connection {conn_id}")
            return connection_to_dict(conn, time.time())

    def _await(self, futures: dict[str, Future]) -> None:
        done, pending = wait(futures.values(), timeout=self.settings.write_timeout)
        failed = [f"{name}: timed out" for name, f in futures.items() if f in pending]
        failed += [
            f"{name}: {f.exception()}"
            for name, f in futures.items()
            if f in done and f.exception() is not None
        ]
        if failed:
            # The intended state stays; a switch that comes back is reprogrammed with it.
            raise UnavailableError("; ".join(failed))

    def _control_loop(self) -> None:
        next_at = time.monotonic()
        while True:
            # a fixed schedule: the period does not stretch by the step's own time
            next_at += self.scheduler.params.control_period_ms / 1000
            if self._stop.wait(max(0.0, next_at - time.monotonic())):
                return
            next_at = max(next_at, time.monotonic() - 1.0)
            t0 = time.perf_counter()
            try:
                if time.monotonic() >= self._next_idle_check:
                    self._next_idle_check = time.monotonic() + IDLE_CHECK_S
                    if self.mptcp.connections:
                        self._check_idle()
                with self._lock:
                    futures = self._submit_step(only_ready=True)
                if futures:
                    self._await(futures)
                    self.latencies_ms.append((time.perf_counter() - t0) * 1000)
                    self.writes += 1
                self.iterations += 1
                if time.monotonic() >= self._next_learned_save:
                    self._next_learned_save = time.monotonic() + LEARNED_SAVE_S
                    self._save_learned()
            except UnavailableError as error:
                log.warning("control loop: %s", error)
            except Exception:
                log.exception("control loop step failed")

    def _save_learned(self) -> None:
        """Save the state file when what the policies learned changed (primary only: the
        backup's policies see the same paths but the primary's file is the one kept)."""
        if self.store is None or self.role() != "primary":
            return
        with self._lock:
            learned = self.scheduler.learned()
        if learned and learned != self._learned_saved:
            self._persist()
            self._learned_saved = learned

    def adaptive(self, class_id: int) -> dict:
        """GET /classes/{id}/adaptive: per switch the `adaptive` policy's context, current
        arm, dwell, learned table and recent dwells."""
        with self._lock:
            c = self._class(class_id)
            if c.policy.name != "adaptive":
                raise NotFoundError(
                    f"class {class_id} runs {c.policy.name!r}, not the adaptive policy"
                )
            views = {}
            for sw in self.scheduler.switches:
                policy = self.scheduler.policy_of(sw, class_id)
                views[sw] = policy.view() if hasattr(policy, "view") else None
            return {"class_id": class_id, "policy": policy_to_dict(c.policy), "switches": views}

    def control_stats(self) -> dict:
        lat = sorted(self.latencies_ms)

        def pct(q: float) -> float | None:
            return round(lat[min(len(lat) - 1, int(q * len(lat)))], 3) if lat else None

        return {
            "iterations": self.iterations,
            "writes": self.writes,
            "latency_ms_p50": pct(0.5),
            "latency_ms_p99": pct(0.99),
            "control_period_ms": self.scheduler.params.control_period_ms,
        }

    def _class(self, class_id: int) -> TrafficClass:
        c = self.scheduler.classes.get(class_id)
        if c is None:
            raise NotFoundError(f"no class {class_id}")
        return c

    def _class_view(self, c: TrafficClass) -> dict:
        view = class_to_dict(c)
        view["placement"] = {
            sw: _placement_dict(self.scheduler.placement_of(sw, c.id))
            for sw in self.scheduler.switches
        }
        return view

    def classes(self) -> list[dict]:
        with self._lock:
            return [self._class_view(c) for _, c in sorted(self.scheduler.classes.items())]

    def traffic_class(self, class_id: int) -> dict:
        with self._lock:
            return self._class_view(self._class(class_id))

    def class_policy(self, class_id: int) -> dict:
        with self._lock:
            return policy_to_dict(self._class(class_id).policy)

    @primary_only
    def set_classes(self, classes: list[TrafficClass]) -> list[dict]:
        """Replace the traffic classes on every switch without a gap: new placements
        first, then the classifier, then the removed classes' placements."""
        with self._lock:
            before = set(self.scheduler.classes)
            self.scheduler.set_classes(classes)
            removed = sorted(before - set(self.scheduler.classes))
            classifier = self._classifier()
            extra = {}
            for agent in self.agents:
                old = self._installed_classes.get(agent.sw.name, [])
                self._installed_classes[agent.sw.name] = classifier

                def swap(client: P4RuntimeClient, old=old) -> None:
                    # one Write: the switch applies the deletions and insertions in order
                    client.replace_entries(old, classifier)

                def drop_removed(client: P4RuntimeClient) -> None:
                    delete_all(
                        client,
                        [
                            e
                            for cid in removed
                            for e in (
                                self.pipeline.weights(cid, {}),
                                self.pipeline.mvqs_params(cid, {}),
                                *(
                                    [self.pipeline.ca_params(cid, {})]
                                    if self.pipeline.has_congestion
                                    else []
                                ),
                            )
                        ],
                    )

                extra[agent.sw.name] = ([], [swap, drop_removed])
            futures = self._submit_step(extra)
        self._await(futures)
        self._persist()
        log.info("classes -> %s", sorted(c.id for c in classes))
        return self.classes()

    @primary_only
    def set_class_policy(self, class_id: int, changes: dict) -> dict:
        with self._lock:
            self._class(class_id)
            self.scheduler.set_class_policy(class_id, changes)
            futures = self._submit_step()
        self._await(futures)
        self._persist()
        log.info("class %d policy -> %s", class_id, changes)
        return self.class_policy(class_id)

    def params(self) -> dict:
        with self._lock:
            out = self.scheduler.params.to_dict()
            out["schema"] = self.scheduler.params.schema()
            return out

    @primary_only
    def set_params(self, changes: dict) -> dict:
        with self._lock:
            self.scheduler.set_params(changes)
            futures = self._submit_step()
        self._await(futures)
        self._persist()
        return self.params()

    @primary_only
    def set_admin(self, path_id: int, up: bool) -> dict:
        with self._lock:
            if path_id not in self._weights:
                raise NotFoundError(f"no path {path_id}")
            if up:
                self.scheduler.admin_down.discard(path_id)
            else:
                self.scheduler.admin_down.add(path_id)
            futures = self._submit_step()
        self._await(futures)
        self._persist()
        log.info("path %d admin -> %s", path_id, "up" if up else "down")
        return self.path(path_id)

    def decisions(self, since: float, limit: int) -> dict:
        with self._lock:
            entries = [e for e in self.scheduler.log if e["t"] > since][-limit:]
            return {
                "now": round(time.time(), 3),
                "decisions": entries,
                "loop": self.control_stats(),
            }

    # -- operations ------------------------------------------------------

    @primary_only
    def set_weight(self, path_id: int, weight: int) -> dict:
        """Set one path's static weight: the default class then runs the static `wcmp`
        policy with the operator's weights; returns the path once every switch acknowledged."""
        if not 0 <= weight <= MAX_WEIGHT:
            raise ValueError(f"weight must be 0..{MAX_WEIGHT}")
        with self._lock:
            if path_id not in self._weights:
                raise NotFoundError(f"no path {path_id}")
            self._weights[path_id] = weight
            spec = ",".join(f"{p}:{w}" for p, w in sorted(self._weights.items()))
            self.scheduler.set_class_policy(
                DEFAULT_CLASS_ID, {"name": "wcmp", "params": {"weights": spec}, "lm3": False}
            )
            futures = self._submit_step()
        self._await(futures)
        self._persist()
        log.info("path %d weight -> %d", path_id, weight)
        return self.path(path_id)


def _counters(raw: tuple[float, int, int, int, int] | None) -> PathCounters | None:
    return None if raw is None else PathCounters(*raw)


def _log_failure(future: Future) -> None:
    if future.exception() is not None:
        log.warning("mptcp pin write failed: %s", future.exception())


def _placement_dict(pl: Placement | None) -> dict | None:
    if pl is None:
        return None
    return {
        "weights": {str(p): w for p, w in pl.weights},
        "mode": pl.mode,
        "flowlet_gap_us": pl.flowlet_gap_us,
        **({"ca": ca_dict(pl.ca)} if pl.ca is not None else {}),
    }
