"""One native thread per switch owns its P4Runtime session.

The thread connects, becomes primary and brings the switch to the controller's state: the
forwarding state derived from the network description and the scheduler's placements and
classifier (Controller.sched_entries). A switch that already runs this program (same pipeline
cookie, e.g. after a controller restart) keeps it, with its registers (flowlets, sequence
numbers, liveness): its tables are read back and only the difference is written. A switch
without it (new, restarted, or running another program) gets the program pushed and every
entry. Then the thread polls the per-path counters. Other threads hand it work through
`submit()`, which returns a `concurrent.futures.Future`. If the session breaks (e.g. the switch
restarts) the thread reconnects and does the same again, so the switch always converges to the
controller's state.

Once programmed, a second thread per agent (`Prober`) sends a probe onto
every path of the switch each PROBE_INTERVAL_S: written as a frame onto the
switch's probe port where the network description names the controller's end
of it (`probe_iface`), else as a P4Runtime PacketOut, which it only puts on
the client's stream request queue (thread-safe). Either way it never waits
for the switch and never delays the agent's table writes, reads or digest
handling. It stops when the session breaks or the agent stops, and a new one
starts with the next session.
"""

from __future__ import annotations

import logging
import queue
import socket
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass

from mpsched.controller.scheduling.mptcp import MptcpReport, mptcp_report
from mpsched.controller.southbound.reports import (
    RttReport,
    check_members,
    check_rtt_members,
    path_report,
    rtt_report,
)
from mpsched.controller.telemetry.estimators import (
    PROBE_INTERVAL_S,
    REPORT_BATCH_MAX,
    PathReport,
    TelemetryConfig,
)
from mpsched.controller.telemetry.stats import Sample
from mpsched.netcfg import NetCfg, SwitchCfg
from mpsched.p4rt.client import P4RuntimeClient, P4RuntimeError, TableEntry
from mpsched.p4rt.pipeline import (
    COUNTER_DROP_REASON,
    COUNTER_PROBE_SKIPPED,
    COUNTER_RX,
    COUNTER_TX,
    DIGEST_PATH_REPORT,
    DIGEST_RTT_REPORT,
    Pipeline,
)

log = logging.getLogger(__name__)

Job = Callable[[P4RuntimeClient], object]

JOB_WAIT_S = 0.02  # the agent checks the stream for path reports at least this often
REPORT_WAIT_S = 0.001
BACKUP_WAIT_S = 0.2  # a backup checks for writes to refuse and for counters to read this often


def forwarding_entries(
    pipeline: Pipeline, net: NetCfg, sw: SwitchCfg, telemetry: TelemetryConfig | None = None
) -> list[TableEntry]:
    """Routes, pinned prefixes, path next hops, path arrival ports, and the
    telemetry settings (report and RTT report intervals, path liveness) of one switch.

    A pin is usually more specific than the remote subnet covering it (LPM
    prefers it); a pin of exactly a remote subnet replaces that subnet's
    weighted route.
    """
    pinned = {pin.prefix for pin in sw.pins}
    entries = [pipeline.route_to_host(h.ip, h.port, sw.mac, h.mac) for h in sw.hosts]
    entries += [
        pipeline.route_to_paths(prefix) for prefix in net.remote_subnets(sw) if prefix not in pinned
    ]
    entries += [pipeline.route_via_path(pin.prefix, pin.path_id) for pin in sw.pins]
    entries += [pipeline.path_nexthop(p.id, p.port) for p in sw.paths]
    entries += [pipeline.path_ingress(p.port, p.id) for p in sw.paths]
    tc = telemetry or TelemetryConfig()
    entries += [pipeline.report_config(p.id, tc.report_interval_us) for p in sw.paths]
    if pipeline.has_rtt_monitor:
        entries += [pipeline.rtt_config(p.id, tc.rtt_interval_us) for p in sw.paths]
    entries += [pipeline.liveness_config(p.id, tc.dead_after_us) for p in sw.paths]
    return entries


def open_probe_socket(iface: str) -> socket.socket:
    """A raw socket that writes whole frames onto `iface` (the controller's end of the veth
    to a switch's probe port). Needs CAP_NET_RAW."""
    sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    try:
        sock.bind((iface, 0))
    except OSError:
        sock.close()
        raise
    return sock


class Prober(threading.Thread):
    """Sends one probe per path of a switch every `interval` seconds.

    Through the switch's probe port when `iface` names the controller's end of the veth to it
    and the program has one (`Pipeline.probe_port`): one socket write per probe (under 40 us of
    CPU measured, docs/results/capacity.md). Otherwise as P4Runtime PacketOuts, which cost
    the controller about 200 us each (the gRPC stream's threads), i.e. 8 % of a core per
    switch at 4 paths every 10 ms.
    """

    def __init__(
        self,
        client: P4RuntimeClient,
        pipeline: Pipeline,
        path_ids: list[int],
        interval: float,
        iface: str | None = None,
        wanted: Callable[[int], bool] | None = None,
    ) -> None:
        super().__init__(name=f"probe-{client.device_id}", daemon=True)
        self.client = client
        self.interval = interval
        self.wanted = wanted  # path id -> probe it now? (None: always)
        self.sent = 0
        self.skipped = 0
        self.via = "packet_out"
        self.sock: socket.socket | None = None
        if iface is not None and pipeline.probe_port is None:
            log.warning("probe iface %s ignored: the P4 program has no probe port", iface)
        elif iface is not None:
            try:
                self.sock = open_probe_socket(iface)
                self.via = f"probe port ({iface})"
            except OSError as error:
                log.warning("probe iface %s unusable (%s): probes go as PacketOuts", iface, error)
        # built once: a probe never changes
        self.frames = [(p, pipeline.probe_frame(p)) for p in path_ids] if self.sock else []
        self.probes = (
            []
            if self.sock
            else [(p, client.build_packet_out(*pipeline.probe(p))) for p in path_ids]
        )
        self._halt = threading.Event()

    def stop(self) -> None:
        self._halt.set()
        if self.is_alive():
            self.join(timeout=1)
        if self.sock is not None and not self.is_alive():
            self.sock.close()

    def _due(self, path_id: int) -> bool:
        if self.wanted is None or self.wanted(path_id):
            return True
        self.skipped += 1
        return False

    def _send(self) -> None:
        if self.sock is not None:
            for path_id, frame in self.frames:
                if not self._due(path_id):
                    continue
                try:
                    self.sock.send(frame)
                    self.sent += 1
                except OSError as error:  # e.g. the veth went away with the switch
                    log.debug("probe not sent: %s", error)
            return
        for path_id, request in self.probes:
            if self._due(path_id):
                self.client.send_packet_out(request)
                self.sent += 1

    def run(self) -> None:
        next_at = time.monotonic()
        while not self._halt.is_set():
            try:
                self._send()
            except P4RuntimeError as error:  # session closed under us
                log.debug("probing stopped: %s", error)
                return
            next_at += self.interval
            delay = next_at - time.monotonic()
            if delay < 0:  # fell behind (e.g. a paused process): do not burst
                next_at = time.monotonic()
                delay = 0
            self._halt.wait(delay)


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


class DemotedError(P4RuntimeError):
    """Another client with a higher election id became the switch's primary."""


class SwitchAgent(threading.Thread):
    def __init__(
        self,
        sw: SwitchCfg,
        net: NetCfg,
        pipeline: Pipeline,
        bmv2_json: str,
        sched_entries: Callable[[str], list[TableEntry]],
        on_sample: Callable[[str, dict[int, Sample]], None],
        on_report: Callable[[PathReport], None] = lambda _r: None,
        on_rtt: Callable[[RttReport], None] = lambda _r: None,
        on_mptcp: Callable[[MptcpReport], None] = lambda _r: None,
        on_promoted: Callable[[str], None] = lambda _sw: None,
        probe_wanted: Callable[[str, int], bool] | None = None,
        poll_interval: float = 1.0,
        retry_interval: float = 1.0,
        election_id: tuple[int, int] = (0, 1),
        probe_interval: float | None = PROBE_INTERVAL_S,
        telemetry: TelemetryConfig | None = None,
    ) -> None:
        super().__init__(name=f"agent-{sw.name}", daemon=True)
        self.sw = sw
        self.net = net
        self.pipeline = pipeline
        self.bmv2_json = bmv2_json
        self.sched_entries = sched_entries
        self.on_sample = on_sample
        self.on_report = on_report
        self.on_rtt = on_rtt
        self.on_mptcp = on_mptcp
        self.on_promoted = on_promoted
        self.probe_wanted = probe_wanted  # (switch, path id) -> probe it now? (None: always)
        self.poll_interval = poll_interval
        self.retry_interval = retry_interval
        self.election_id = election_id
        self.telemetry = telemetry or TelemetryConfig(probe_interval_s=probe_interval)
        self.probe_interval = self.telemetry.probe_interval_s  # None: no probes
        self.prober: Prober | None = None
        self.status = AgentStatus(since=time.time())
        self.programmed: Programming | None = None
        # packets the switch dropped, by reason (the drop_reason counter, read with the others)
        self.drops: dict[str, int] = {}
        self.probes_gated = 0  # probes the switch's probe gate dropped (probe_gate.p4)
        self._jobs: queue.Queue[tuple[Job, Future] | None] = queue.Queue()
        self._stopping = threading.Event()
        self._ready = threading.Event()

    def submit(self, job: Job) -> Future:
        future: Future = Future()
        if self._stopping.is_set():
            future.set_exception(P4RuntimeError(f"{self.sw.name}: controller is stopping"))
        else:
            self._jobs.put((job, future))
        return future

    def wait_ready(self, timeout: float) -> bool:
        return self._ready.wait(timeout)

    def stop(self) -> None:
        self._stopping.set()
        self._jobs.put(None)

    def _set_status(self, state: str, error: str | None = None) -> None:
        self.status = AgentStatus(state, error, time.time())

    def probe_counts(self) -> dict | None:
        """How this session's prober sends (its probe port or PacketOuts), the probes it sent
        and those it skipped on busy paths, and of those sent, the ones the switch's probe
        gate dropped (as of the last poll); None while there is no prober."""
        prober = self.prober
        if prober is None:
            return None
        return {"via": prober.via, "sent": prober.sent, "skipped": prober.skipped,
                "gated": self.probes_gated}

    def _probe_wanted(self) -> Callable[[int], bool] | None:
        if self.probe_wanted is None or not self.telemetry.probe_idle_only:
            return None
        wanted, name = self.probe_wanted, self.sw.name
        return lambda path_id: wanted(name, path_id)

    def _program(self, client: P4RuntimeClient) -> None:
        """Bring the switch to the controller's state. A switch that already runs this
        program (its pipeline cookie) keeps it, and its registers: the tables are read back
        and only the difference is written. Any other switch gets the program pushed (which
        wipes it) and every entry."""
        desired = forwarding_entries(self.pipeline, self.net, self.sw, self.telemetry)
        # every class's placement and the classifier (Controller.sched_entries)
        desired += self.sched_entries(self.sw.name)
        cookie = client.program_cookie(self.bmv2_json)
        if client.pipeline_cookie() == cookie:
            difference = client.reconcile(self.pipeline.tables, desired)
            self.programmed = Programming("reconciled", difference.summary(), time.time())
        else:
            client.set_pipeline(self.bmv2_json, cookie)
            client.insert(*desired)
            self.programmed = Programming("pushed", f"{len(desired)} entries", time.time())
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

    def _drain_reports(self, client: P4RuntimeClient) -> None:
        """Hand every path, RTT and MPTCP report waiting on the stream to the controller."""
        path_id, rtt_id = self.pipeline.path_report_id, self.pipeline.rtt_report_id
        mptcp = self.pipeline.mptcp_digests
        while True:
            digest_list = client.read_digest_list(timeout=REPORT_WAIT_S)
            if digest_list is None:
                return
            now = time.time()
            if digest_list.digest_id == path_id:
                name, make, deliver = DIGEST_PATH_REPORT, path_report, self.on_report
            elif digest_list.digest_id == rtt_id:
                name, make, deliver = DIGEST_RTT_REPORT, rtt_report, self.on_rtt
            elif digest_list.digest_id in mptcp:
                name = mptcp[digest_list.digest_id][0]

                def make(v, sw, at, name=name):
                    return mptcp_report(name, v, sw, at)

                deliver = self.on_mptcp
            else:
                log.warning("%s: unknown digest id %d", self.sw.name, digest_list.digest_id)
                continue
            try:
                values = client.decode_digest_list(name, digest_list)
            except P4RuntimeError as error:
                log.warning("%s: undecodable digest: %s", self.sw.name, error)
                continue
            for v in values:
                deliver(make(v, self.sw.name, now))

    def _poll(self, client: P4RuntimeClient) -> None:
        now = time.time()
        tx = client.read_counter(COUNTER_TX)
        rx = client.read_counter(COUNTER_RX)
        drops = self.pipeline.drop_counts(client.read_counter(COUNTER_DROP_REASON))
        self.drops = {reason: value.packets for reason, value in drops.items()}
        gated = client.read_counter(COUNTER_PROBE_SKIPPED)
        self.probes_gated = sum(value.packets for value in gated.values())
        samples = {}
        for path in self.sw.paths:
            t, r = tx.get(path.id), rx.get(path.id)
            samples[path.id] = Sample(
                now,
                t.packets if t else 0,
                t.bytes if t else 0,
                r.packets if r else 0,
                r.bytes if r else 0,
            )
        self.on_sample(self.sw.name, samples)

    def _fail_pending(self, error: Exception) -> None:
        while True:
            try:
                item = self._jobs.get_nowait()
            except queue.Empty:
                return
            if item is not None:
                item[1].set_exception(error)

    def run(self) -> None:
        while not self._stopping.is_set():
            client = P4RuntimeClient(
                self.sw.grpc_address,
                self.sw.device_id,
                self.pipeline.p4info,
                election_id=self.election_id,
            )
            prober = None
            try:
                client.connect(allow_backup=True)
                if not client.is_primary and not self._hold_as_backup(client):
                    continue  # stopping
                self._program(client)
                if self.probe_interval is not None and self.sw.paths:
                    prober = Prober(
                        client,
                        self.pipeline,
                        [p.id for p in self.sw.paths],
                        self.probe_interval,
                        iface=self.sw.probe_iface,
                        wanted=self._probe_wanted(),
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
                    log.info("%s: probes via %s: %d sent, %d skipped on busy paths",
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
                self.on_promoted(self.sw.name)
                return True
            if time.monotonic() >= next_poll:
                self._poll(client)
                next_poll = time.monotonic() + self.poll_interval
        return False

    def _serve(self, client: P4RuntimeClient) -> None:
        next_poll = time.monotonic()
        while not self._stopping.is_set():
            if not client.is_primary:
                raise DemotedError(f"no longer primary: election id {client.highest_election_id}")
            self._drain_reports(client)
            timeout = max(0.0, min(next_poll - time.monotonic(), JOB_WAIT_S))
            try:
                item = self._jobs.get(timeout=timeout)
            except queue.Empty:
                item = None
                if time.monotonic() >= next_poll:
                    self._poll(client)
                    next_poll = time.monotonic() + self.poll_interval
                continue
            if item is None:
                continue
            job, future = item
            if not future.set_running_or_notify_cancel():
                continue
            try:
                future.set_result(job(client))
            except P4RuntimeError as error:
                # A refused write is the caller's error, not a broken session;
                # a broken session shows up at the next poll.
                future.set_exception(error)
            except Exception as error:  # a bad job must not kill the session
                log.exception("%s: job failed", self.sw.name)
                future.set_exception(error)
