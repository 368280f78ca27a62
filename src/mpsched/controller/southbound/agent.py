"""One native thread per switch owns its P4Runtime session.

The thread connects, becomes primary and brings the switch to the controller's state: the
forwarding state derived from the network description and the scheduler's placements and
classifier (`AgentHost.sched_entries`). A switch that already runs this program (same pipeline
cookie, e.g. after a controller restart) keeps it, with its registers (flowlets, sequence
numbers, liveness): its tables are read back and only the difference is written. A switch
without it (new, restarted, or running another program) gets the program pushed and every
entry (southbound/programming.py). Then the thread sleeps on its job queue: other threads
hand it work through `submit()`, which returns a `concurrent.futures.Future`, and the
stream's reader wakes it for each report; every poll interval it reads the drop and port
counters, and an edge its per-path counters (less often on a large fabric:
southbound/counters.py; the polls: southbound/agent_telemetry.py). If the session breaks
(e.g. the switch restarts) the thread reconnects and does the same again, so the switch
always converges to the controller's state.

Once programmed, a second thread per agent (`Prober`, southbound/prober.py) probes every path
of the switch towards every peer edge (a fabric's transit switch has none: no prober, no path
counters, no reports). The agent's host (`AgentHost` of southbound/agent_model.py, the
controller) gives it the scheduler's entries and takes what the switch reports: counter
samples, path, RTT and MPTCP reports, and the news that this controller became primary.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future

from mpsched.controller.southbound.agent_model import (
    AgentHost,
    AgentSettings,
    AgentStatus,
    JobTime,
    Programming,
)
from mpsched.controller.southbound.agent_telemetry import AgentTelemetry
from mpsched.controller.southbound.digests import drain_reports
from mpsched.controller.southbound.forwarding import forwarding_entries, peers_and_paths
from mpsched.controller.southbound.programming import program_switch
from mpsched.netcfg import NetCfg, SwitchCfg
from mpsched.p4rt.client import P4RuntimeClient, P4RuntimeError, TableEntry
from mpsched.p4rt.pipeline import Pipeline

log = logging.getLogger(__name__)

Job = Callable[[P4RuntimeClient], object]

JOB_TIMES_KEPT = 200  # each agent's latest jobs' times (`SwitchAgent.job_times`)
BACKUP_WAIT_S = 0.2  # a backup checks for writes to refuse and for counters to read this often


class _Wake:
    """A job-queue item that only wakes the agent."""


_WAKE = _Wake()


class DemotedError(P4RuntimeError):
    """Another client with a higher election id became the switch's primary."""


class SwitchAgent(AgentTelemetry, threading.Thread):
    """A switch's session: connect, arbitrate, program, then serve the submitted jobs, the
    stream's reports and the counter polls until the session breaks; then again. What it
    measures (polls, probes) comes from `AgentTelemetry` (agent_telemetry.py)."""

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
        self._wake_pending = False  # a _WAKE is on the job queue
        # this switch's own settings: probe interval and liveness under the probe cap
        self.telemetry = settings.telemetry.for_targets(len(net.probe_targets(sw)))
        self.probe_interval = self.telemetry.probe_interval_s  # None: no probes
        # PacketOuts (probes) that may wait for the stream: a second of them, and a round's burst
        self.packet_out_backlog = settings.telemetry.packet_out_backlog(
            len(net.probe_targets(sw)))
        self._init_telemetry(settings.counter_budget_cps)
        self.status = AgentStatus(since=time.time())
        self.programmed: Programming | None = None
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

    def forwarding_entries(self) -> list[TableEntry]:
        if self.forwarding is not None:
            return self.forwarding()
        return forwarding_entries(self.pipeline, self.net, self.sw, self.telemetry)

    def _program(self, client: P4RuntimeClient) -> None:
        """Bring the switch to the controller's state (programming.py): its forwarding, every
        class's placement, the classifier and the pins (AgentHost.sched_entries)."""
        desired = self.forwarding_entries()
        desired += self.host.sched_entries(self.sw.name)
        self.programmed = program_switch(client, self.pipeline, self.bmv2_json, desired,
                                         self.telemetry.report_batch_us, self.sw.name)

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
                prober = self._start_prober(client)
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
                    self._stop_prober(prober)
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
