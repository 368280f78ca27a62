"""One native thread per switch owns its P4Runtime session.

The thread connects, becomes primary and brings the switch to the controller's state: the
forwarding state derived from the network description and the scheduler's placements and
classifier (`AgentHost.sched_entries`). A switch that already runs this program (same pipeline
cookie, e.g. after a controller restart) keeps it, with its registers (flowlets, sequence
numbers, liveness): its tables are read back and only the difference is written. A switch
without it (new, restarted, or running another program) gets the program pushed and every
entry. Then the thread sleeps on its job queue: other threads hand it work through `submit()`,
which returns a `concurrent.futures.Future`, and the stream's reader wakes it for each report;
every poll interval it reads the drop and port counters, and an edge its per-path counters
(less often on a large fabric: southbound/counters.py). If the session breaks (e.g. the switch
restarts) the thread reconnects and does the same again, so the switch always converges to the
controller's state.

Once programmed, a second thread per agent (`Prober`, southbound/prober.py) probes every path
of the switch towards every peer edge (a fabric's transit switch has none: no prober, no path
counters, no reports). The agent's host (`AgentHost`, the controller) gives it the scheduler's
entries and takes what the switch reports: counter samples, path, RTT and MPTCP reports, and
the news that this controller became primary.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import NamedTuple, Protocol

from mpsched.controller.southbound.counters import (
    COUNTER_BUDGET_CPS,
    PATH_COUNTERS,
    path_poll_interval,
    path_samples,
)
from mpsched.controller.southbound.digests import ReportHost, drain_reports
from mpsched.controller.southbound.forwarding import (
    copy_sessions,
    forwarding_entries,
    peers_and_paths,
)
from mpsched.controller.southbound.prober import Prober
from mpsched.controller.southbound.reports import check_members, check_rtt_members
from mpsched.controller.southbound.writes import insert_sessions
from mpsched.controller.telemetry.estimators import REPORT_BATCH_MAX, TelemetryConfig
from mpsched.controller.telemetry.ports import PortMeter, read_at
from mpsched.controller.telemetry.stats import Sample
from mpsched.netcfg import NetCfg, SwitchCfg
from mpsched.p4rt.client import P4RuntimeClient, P4RuntimeError, TableEntry
from mpsched.p4rt.pipeline import (
    COUNTER_DROP_REASON,
    COUNTER_PORT_TX,
    COUNTER_PROBE_SKIPPED,
    COUNTER_RX,
    COUNTER_TX,
    DIGEST_PATH_REPORT,
    DIGEST_RTT_REPORT,
    Pipeline,
)

log = logging.getLogger(__name__)

Job = Callable[[P4RuntimeClient], object]

JOB_TIMES_KEPT = 200  # each agent's latest jobs' times (`SwitchAgent.job_times`)
BACKUP_WAIT_S = 0.2  # a backup checks for writes to refuse and for counters to read this often


class _Wake:
    """A job-queue item that only wakes the agent."""


_WAKE = _Wake()


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


class DemotedError(P4RuntimeError):
    """Another client with a higher election id became the switch's primary."""


class SwitchAgent(threading.Thread):
    def __init__(
        self,
        sw: SwitchCfg,
        net: NetCfg,
        pipeline: Pipeline,
        bmv2_json: str,
        host: AgentHost,
        settings: AgentSettings | None = None,
        forwarding: Callable[[], list[TableEntry]] | None = None,
    ) -> None:
        """`forwarding`: the switch's forwarding entries at each (re)programming (routes.py;
        None: a two-edge network's)."""
        super().__init__(name=f"agent-{sw.name}", daemon=True)
        self.sw = sw
        self.net = net
        self.forwarding = forwarding
        self.pipeline = pipeline
        self.bmv2_json = bmv2_json
        self.host = host
        settings = settings or AgentSettings()
        self.poll_interval = settings.poll_interval
        self.retry_interval = settings.retry_interval
        self.election_id = settings.election_id
        self.peers, self.path_ids = peers_and_paths(net, sw)
        # the per-path counters: only an edge has them in use (a transit switch reads none)
        self.path_poll_interval = path_poll_interval(
            self.poll_interval, len(net.edge_switches()),
            sum(pipeline.p4info.counter_size(c) for c in PATH_COUNTERS),
            settings.counter_budget_cps)
        self._next_path_poll = 0.0  # time.monotonic() of the next read of them
        self._wake_pending = False  # a _WAKE is on the job queue
        # this switch's own settings: probe interval and liveness under the probe cap
        self.telemetry = settings.telemetry.for_targets(len(net.probe_targets(sw)))
        self.probe_interval = self.telemetry.probe_interval_s  # None: no probes
        # PacketOuts (probes) that may wait for the stream: a second of them, and a round's burst
        self.packet_out_backlog = settings.telemetry.packet_out_backlog(
            len(net.probe_targets(sw)))
        self.prober: Prober | None = None
        self.status = AgentStatus(since=time.time())
        self.programmed: Programming | None = None
        # packets the switch dropped, by reason (the drop_reason counter, read with the others)
        self.drops: dict[str, int] = {}
        self.probes_gated = 0  # probes the switch's probe gate dropped (probe_gate.p4)
        # each port's transmit rate between the latest two polls (port_counters.p4, GET /links)
        self.ports = PortMeter()
        self._jobs: queue.Queue[tuple[Job, Future, float] | _Wake | None] = queue.Queue()
        self.job_times: deque[JobTime] = deque(maxlen=JOB_TIMES_KEPT)
        self._stopping = threading.Event()
        self._ready = threading.Event()

    def submit(self, job: Job) -> Future:
        future: Future = Future()
        if self._stopping.is_set():
            future.set_exception(P4RuntimeError(f"{self.sw.name}: controller is stopping"))
        else:
            self._jobs.put((job, future, time.perf_counter()))
        return future

    def wait_ready(self, timeout: float) -> bool:
        return self._ready.wait(timeout)

    def stop(self) -> None:
        self._stopping.set()
        self._jobs.put(None)

    def _wake(self) -> None:
        """Something came on the stream (called by its reader thread): wake the agent, once
        until it looked."""
        if not self._wake_pending:
            self._wake_pending = True
            self._jobs.put(_WAKE)

    def _set_status(self, state: str, error: str | None = None) -> None:
        self.status = AgentStatus(state, error, time.time())

    def probe_counts(self) -> dict | None:
        """How this session's prober sends (its probe port or PacketOuts), the probes it sent
        and those it skipped (busy paths, an idle pair's between its slow probes), and of
        those sent, the ones the switch's probe gate dropped (as of the last poll); None
        while there is no prober."""
        prober = self.prober
        if prober is None:
            return None
        return {"via": prober.via, "sent": prober.sent, "skipped": prober.skipped,
                "gated": self.probes_gated}

    def _probe_wanted(self) -> Callable[[int, int], bool] | None:
        """Asks the host which probes go: busy paths' pause (probe_idle_only), an idle
        pair's slow probes (a fabric's regimes, src/mpsched/controller/telemetry/regimes.py); None:
        every probe goes."""
        regimes = self.telemetry.regimes(self.net.topology is not None)
        if not self.telemetry.probe_idle_only and not regimes:
            return None
        wanted, name = self.host.probe_wanted, self.sw.name
        return lambda dst_edge, path_id: wanted(name, dst_edge, path_id)

    def _probe_tick(self) -> Callable[[], float] | None:
        """Asks the host how long the prober waits between rounds: a fabric's switch whose
        pairs are all idle ticks at their idle interval (None: the probe interval always)."""
        if not self.telemetry.regimes(self.net.topology is not None):
            return None
        tick, name = self.host.probe_tick_s, self.sw.name
        return lambda: tick(name)

    def poke_prober(self) -> None:
        """A round of probes now (a pair of this switch became active), if probing."""
        prober = self.prober
        if prober is not None:
            prober.poke()

    def _probe_installed(self) -> Callable[[int, int], bool] | None:
        if self.net.topology is None:
            return None
        installed, name = self.host.probe_installed, self.sw.name
        return lambda dst_edge, path_id: installed(name, dst_edge, path_id)

    def probe_targets(self) -> list[tuple[int, int]]:
        """Every (destination edge, path id) this switch may probe: a fabric's edge every id
        the program has (`probe_installed` tells which are installed now: a watched path may
        take an id above the pair's, src/mpsched/controller/fabric/routes.py)."""
        if self.net.topology is not None and self.peers:
            return [(e, p) for e in self.peers for p in range(1, self.pipeline.max_paths + 1)]
        return [(e, p) for e in self.peers for p in self.path_ids]

    def forwarding_entries(self) -> list[TableEntry]:
        if self.forwarding is not None:
            return self.forwarding()
        return forwarding_entries(self.pipeline, self.net, self.sw, self.telemetry)

    def _program(self, client: P4RuntimeClient) -> None:
        """Bring the switch to the controller's state. A switch that already runs this
        program (its pipeline cookie) keeps it, and its registers: the tables are read back
        and only the difference is written. Any other switch gets the program pushed (which
        wipes it) and every entry."""
        desired = self.forwarding_entries()
        # every class's placement, the classifier and the pins (AgentHost.sched_entries)
        desired += self.host.sched_entries(self.sw.name)
        cookie = client.program_cookie(self.bmv2_json)
        if client.pipeline_cookie() == cookie:
            difference = client.reconcile(self.pipeline.tables, desired)
            self.programmed = Programming("reconciled", difference.summary(), time.time())
        else:
            client.set_pipeline(self.bmv2_json, cookie)
            client.insert(*desired)
            self.programmed = Programming("pushed", f"{len(desired)} entries", time.time())
        # where a SYN's copy leaves (forwarding.copy_sessions); written again on a reconcile,
        # as the replication engine's sessions are not read back
        insert_sessions(client, copy_sessions(self.pipeline, desired))
        log.info("%s: pipeline %s (%s)", self.sw.name, *self.programmed.as_tuple())
        _, members = self.pipeline.path_report_digest()
        check_members(members)
        # report_config / rtt_config bound the rate per path; the switch batches the reports
        # of report_batch_us into one DigestList (one stream message and one ack)
        batch = self.telemetry.report_batch_us
        lists = {
            "max_timeout_ns": batch * 1000,
            "max_list_size": REPORT_BATCH_MAX if batch else 1,
        }
        client.insert_digest(DIGEST_PATH_REPORT, **lists)
        if self.pipeline.has_rtt_monitor:  # a compile-time profile may leave the stage out
            _, members = self.pipeline.rtt_report_digest()
            check_rtt_members(members)
            client.insert_digest(DIGEST_RTT_REPORT, **lists)
        # MPTCP handshakes and closes of pinned subflows (none without MPTCP parsing)
        for name, _ in self.pipeline.mptcp_digests.values():
            client.insert_digest(name, max_timeout_ns=0, max_list_size=1)

    def _poll(self, client: P4RuntimeClient) -> None:
        """The drops and port counters; an edge's per-path counters when they are due. One
        Read for all of them: a Read's own cost, paid per counter, made the polls two thirds
        of the agents' CPU at 64 leaves (docs/results/scale.md)."""
        names = [COUNTER_DROP_REASON, COUNTER_PORT_TX]
        paths_due = bool(self.peers) and time.monotonic() >= self._next_path_poll
        if paths_due:
            names += PATH_COUNTERS
            self._next_path_poll = time.monotonic() + self.path_poll_interval
        now, values = read_at(lambda: client.read_counters(names), time.time)
        drops = self.pipeline.drop_counts(values[COUNTER_DROP_REASON])
        self.drops = {reason: value.packets for reason, value in drops.items()}
        self.ports.update(now, values[COUNTER_PORT_TX])
        if not paths_due:
            return
        gated = values[COUNTER_PROBE_SKIPPED]
        self.probes_gated = sum(value.packets for value in gated.values())
        samples = path_samples(self.pipeline, self.peers, self.path_ids, values[COUNTER_TX],
                               values[COUNTER_RX], now)
        if samples:
            self.host.on_sample(self.sw.name, samples)

    def _fail_pending(self, error: Exception) -> None:
        while True:
            try:
                item = self._jobs.get_nowait()
            except queue.Empty:
                return
            if item is not None and not isinstance(item, _Wake):
                item[1].set_exception(error)

    def run(self) -> None:
        while not self._stopping.is_set():
            client = P4RuntimeClient(
                self.sw.grpc_address,
                self.sw.device_id,
                self.pipeline.p4info,
                election_id=self.election_id,
                tls=self.net.tls_for(self.sw),
                packet_out_backlog=self.packet_out_backlog,
            )
            prober = None
            try:
                client.connect(allow_backup=True)
                if not client.is_primary and not self._hold_as_backup(client):
                    continue  # stopping
                self._program(client)
                if self.probe_interval is not None and self.probe_targets():
                    prober = Prober(
                        client,
                        self.pipeline,
                        self.probe_targets(),
                        self.probe_interval,
                        iface=self.sw.probe_iface,
                        wanted=self._probe_wanted(),
                        installed=self._probe_installed(),
                        tick=self._probe_tick(),
                    )
                    prober.start()
                    self.prober = prober
                self._set_status("ready")
                self._ready.set()
                self._serve(client)
            except P4RuntimeError as error:
                self._ready.clear()
                self._set_status("down", str(error))
                self._fail_pending(P4RuntimeError(f"{self.sw.name} is down: {error}"))
                if isinstance(error, DemotedError):
                    log.warning("%s: %s", self.sw.name, error)
                    continue  # reconnect at once, as a backup
                log.warning("%s: %s; retrying in %.1fs", self.sw.name, error, self.retry_interval)
                self._stopping.wait(self.retry_interval)
            finally:
                if prober is not None:
                    prober.stop()
                    log.info("%s: probes via %s: %d sent, %d skipped (busy paths, idle pairs)",
                             self.sw.name, prober.via, prober.sent, prober.skipped)
                client.close()
        self._fail_pending(P4RuntimeError(f"{self.sw.name}: controller stopped"))

    def _hold_as_backup(self, client: P4RuntimeClient) -> bool:
        """Another controller is primary: hold the stream as a backup and keep reading the
        counters; writes fail meanwhile. When arbitration makes this client primary (the
        primary's stream ended), take an election id above every one seen, so that the old
        primary comes back as a backup. True once primary; False when stopping."""
        self._set_status("backup", f"the primary holds election id {client.highest_election_id}")
        log.info("%s: backup (primary: election id %s)", self.sw.name, client.highest_election_id)
        next_poll = time.monotonic()
        while not self._stopping.is_set():
            self._fail_pending(P4RuntimeError(f"{self.sw.name}: this controller is a backup"))
            if client.wait_arbitration(BACKUP_WAIT_S) and client.is_primary:
                client.become_primary_over(client.highest_election_id)
                self.election_id = client.election_id
                log.warning("%s: now primary (election id %s)", self.sw.name, self.election_id)
                self.host.on_promoted(self.sw.name)
                return True
            if time.monotonic() >= next_poll:
                self._poll(client)
                next_poll = time.monotonic() + self.poll_interval
        return False

    def _serve(self, client: P4RuntimeClient) -> None:
        """Until the session breaks: hand over the stream's reports, run the submitted jobs,
        read the counters every poll interval. Between them the thread sleeps on its job
        queue, woken by a job or by the stream (`_wake`)."""
        next_poll = time.monotonic()
        client.on_stream = self._wake
        while not self._stopping.is_set():
            if not client.is_primary:
                raise DemotedError(f"no longer primary: election id {client.highest_election_id}")
            self._wake_pending = False  # before draining: a report after this wakes again
            drain_reports(client, self.pipeline, self.sw.name, self.peers, self.host)
            if time.monotonic() >= next_poll:
                self._poll(client)
                next_poll = time.monotonic() + self.poll_interval
            # the stream's reader wakes it for every report, arbitration update and error
            # (Session.on_stream), `stop` with None: it sleeps until the next poll (68
            # agents waking four times a second cost 1-2 % of a core, docs/results/scale.md)
            timeout = max(0.0, next_poll - time.monotonic())
            try:
                item = self._jobs.get(timeout=timeout)
            except queue.Empty:
                continue
            if item is None or isinstance(item, _Wake):
                continue
            job, future, submitted = item
            if not future.set_running_or_notify_cancel():
                continue
            started = time.perf_counter()
            try:
                future.set_result(job(client))
            except P4RuntimeError as error:
                # A refused write is the caller's error, not a broken session;
                # a broken session shows up at the next poll.
                future.set_exception(error)
            except Exception as error:  # a bad job must not kill the session
                log.exception("%s: job failed", self.sw.name)
                future.set_exception(error)
            finally:
                self.job_times.append(JobTime(started - submitted,
                                              time.perf_counter() - started))
