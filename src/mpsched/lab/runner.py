"""The experiment runner: a scenario, N seeded runs per policy, raw reports on disk.

One run = a fresh testbed (emulated paths seeded with the run's seed; a fabric scenario's is
the fabric testbed, `testbeds.make_testbed`), the controller running the policy (PUT
/classes/0/policy; its decision log is saved) or, for the policy `plain-ecmp` on a fabric,
no controller but the plain ECMP program on every switch (plain_ecmp.py), the scenario's
workloads started at their times in the hosts, link schedules driven in real time, the
switches' per-path counters polled over REST (a fabric's links' delivered bytes instead;
run_polls.py), a receiver-side capture of h2's TCP traffic (a fabric's workloads and captures:
fabric_launch.py, on the testbed's hosts), and everything torn down again (also on Ctrl-C or
a crash: the testbed's registry owns every process and link). A `CpuSampler` thread
(cpu_sampler.py) records the machine's CPU idle and each testbed process's CPU time during
the run (`cpu.csv` in the run's directory; `cpu.py` does the arithmetic). `analysis.py`
turns a run's raw reports into metrics; `report.py` keeps them, `tables.py` and `plots.py`
show them.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mpsched import addressing as ap
from mpsched.client.rest import RestClient
from mpsched.lab import cpu, ready
from mpsched.lab.cpu_sampler import CpuSampler, write_cpu_csv
from mpsched.lab.edge_launch import (
    BASE_PORT,
    poisson_args,
    sender_args,
    sink_host,
    source_host,
    vbr_args,
)
from mpsched.lab.fabric_launch import FabricTraffic, hosts_from_names
from mpsched.lab.fabric_workload import mptcp_initiators, mptcp_subflows
from mpsched.lab.plain_ecmp import PlainEcmpSwitches
from mpsched.lab.programs import PLAIN_ECMP
from mpsched.lab.run_polls import poll, save_controller_views
from mpsched.lab.scenario import Scenario, Workload
from mpsched.lab.testbeds import make_testbed
from mpsched.proc.controller import start_controller

log = logging.getLogger(__name__)

POLL_S = 0.5
# libpcap hands a buffered (non-immediate) capture over a TPACKET_V3 block at a time, at the
# latest after tcpdump's 1 s block timeout: the last packets are in the file only after it
CAPTURE_DRAIN_S = 1.2


class RunError(RuntimeError):
    """A run could not complete (a switch died, a schedule failed, a tool broke)."""


@dataclass
class RunRaw:
    """What one run left on disk and in memory, before analysis."""

    scenario: Scenario
    policy: str
    run: int
    seed: int
    dir: Path
    t0: float = 0.0
    reports: dict[str, dict[str, Any]] = field(default_factory=dict)
    path_counters: list[tuple[float, dict[int, int]]] = field(default_factory=list)
    link_tx: list[tuple[float, dict[int, int]]] = field(default_factory=list)
    # a fabric's links: delivered bytes per link and direction ("<link>:ab"), per poll
    link_bytes: list[tuple[float, dict[str, int]]] = field(default_factory=list)
    capture: Path | None = None
    captures: dict[str, Path] = field(default_factory=dict)  # a fabric's, per receiving host
    link_stats: dict[str, dict] = field(default_factory=dict)
    weights: dict[int, int] = field(default_factory=dict)
    cpu_samples: list[cpu.CpuSample] = field(default_factory=list)


class Run:
    """One run of a scenario under one policy; use `execute()`."""

    def __init__(self, scenario: Scenario, policy: str, run: int, out_dir: Path,
                 p4rt_plaintext: bool = False) -> None:
        self.scenario = scenario
        self.p4rt_plaintext = p4rt_plaintext  # the testbed's P4Runtime without TLS
        self.policy = policy
        self.seed = scenario.seed + run
        self.raw = RunRaw(scenario, policy, run, self.seed, out_dir)
        self.procs: list[tuple[str, subprocess.Popen]] = []
        self.lock = threading.RLock()
        self.failure: str | None = None
        self.closing = False
        self.timers: list[threading.Timer] = []
        self.bed = None
        self.host_of: dict[str, str] = {}  # process log name -> host it runs in
        self.fabric: FabricTraffic | None = None  # a fabric scenario's traffic
        self.plain: PlainEcmpSwitches | None = None  # policy plain-ecmp: no controller

    def cpu_roles(self) -> dict[str, int]:
        """PIDs by role: every switch (s1, s2; a fabric's by name), link emulators (e1, f1,
        ...; a fabric's by link name), the controller, the tools in hosts (send0@h1,
        sink0@h2, tcpdump@h2) and this runner itself."""
        bed = self.bed
        roles: dict[str, int] = {"runner": os.getpid()}
        if bed is None or bed.net is None:
            return roles
        for sw in bed.bmv2_switches():
            if sw.bmv2 and sw.bmv2.process:
                roles[sw.name] = sw.bmv2.process.pid
        roles.update(bed.emulator_pids())
        with self.lock:
            procs = list(self.procs)
            hosts = dict(self.host_of)
        for name, proc in procs:
            roles[f"{name}@{hosts[name]}" if name in hosts else name] = proc.pid
        return roles

    # -- processes in hosts ------------------------------------------------

    def _popen(self, host_name: str, args: list[str], log_name: str) -> subprocess.Popen:
        host = self.bed.host(host_name)
        out = (self.raw.dir / f"{log_name}.log").open("wb")
        proc = host.popen(args, stdout=out, stderr=subprocess.STDOUT)
        out.close()
        self.bed.registry.add_process(proc.pid, " ".join(args))
        with self.lock:
            self.procs.append((log_name, proc))
            self.host_of[log_name] = host_name
        return proc

    def _gen(self, host: str, role_args: list[str], name: str) -> subprocess.Popen:
        report = self.raw.dir / f"{name}.json"
        args = [sys.executable, "-m", "mpsched.traffic.gen", *role_args, "--out", str(report)]
        return self._popen(host, args, name)

    def _fail(self, message: str) -> None:
        if self.failure is None:
            self.failure = message
            log.error("run failed: %s", message)

    # -- set-up ------------------------------------------------------------------

    def _mptcp(self) -> None:
        sc = self.scenario
        subflows = max((w.subflows for w in sc.workload if w.mptcp), default=0)
        if subflows:
            self.bed.enable_mptcp(subflows)
        subflows = mptcp_subflows(sc.fabric_workload)
        if subflows and sc.fabric is not None:  # subflow endpoints on the initiators only
            self.bed.enable_mptcp(subflows, mptcp_initiators(sc.fabric_workload, sc.fabric))

    def _start_controller(self) -> RestClient:
        proc, rest = start_controller(
            self.bed.netcfg_path, self.raw.dir / "controller.log", self.bed.registry, POLL_S,
            extra_args=self.scenario.controller_args,
        )
        with self.lock:
            self.procs.append(("controller", proc))
        return rest

    def _capture(self) -> subprocess.Popen:
        h2 = self.bed.host("h2")
        self.raw.capture = self.raw.dir / "h2.pcap"
        # a multi-homed h2 receives on several interfaces: capture them all
        iface = "any" if self.scenario.topo.host_interfaces > 1 else h2.defaultIntf().name
        # Buffered, not --immediate-mode -U: packets reach tcpdump a kernel block at a time and
        # its file through stdio, not one wake-up and one write per packet (5 % of a core at
        # 48 Mbit/s, docs/results/capacity.md); _finish_senders waits CAPTURE_DRAIN_S for the
        # last block before it stops the capture.
        args = [
            "tcpdump", "-i", iface, "-s", "96", "-B", "8192",
            "-n", "-w", str(self.raw.capture), f"tcp and dst net {ap.subnet(ap.RECEIVER_EDGE)}",
        ]  # fmt: skip
        return self._popen("h2", args, "tcpdump")

    # -- the run -------------------------------------------------------------------

    def execute(self, progress: Callable[[str], None] = lambda _m: None) -> RunRaw:
        self.raw.dir.mkdir(parents=True, exist_ok=True)
        log_dir = self.raw.dir / "logs"
        log_dir.mkdir(parents=True, exist_ok=True)
        with make_testbed(self.scenario, self.seed, log_dir, self.p4rt_plaintext) as bed:
            self.bed = bed
            try:
                self._execute(progress)
            finally:
                try:
                    self.raw.link_stats = bed.segment_stats() if bed.links else {}
                    (self.raw.dir / "links.json").write_text(json.dumps(self.raw.link_stats))
                except Exception as exc:  # an emulator gone (e.g. at Ctrl-C) must not mask it
                    log.debug("link stats at the end: %s", exc)
                self._stop_all()
                self.bed = None
        if self.failure:
            raise RunError(self.failure)
        return self.raw

    def _control(self) -> RestClient | None:
        """The controller on the testbed, running the run's policy; none for the policy
        plain-ecmp (a fabric's switches get the plain ECMP program and its entries once,
        plain_ecmp.py)."""
        sc = self.scenario
        if self.policy == PLAIN_ECMP:
            self.plain = PlainEcmpSwitches(self.bed.netcfg)
            self.plain.program()
            return None
        rest = self._start_controller()
        if sc.params:
            rest.put("/params", sc.params)
        request = sc.policy_request(self.policy)
        if self.policy in ("ecmp", "static"):
            self.raw.weights = sc.policy_weights(self.policy)
        rest.put("/classes/0/policy", request)
        return rest

    def _execute(self, progress: Callable[[str], None]) -> None:
        sc = self.scenario
        rest = self._control()
        self._mptcp()
        if sc.fabric is not None:  # the fabric's workload on the testbed's hosts, by edge
            self.fabric = FabricTraffic(self, hosts_from_names(self.bed.hosts()), BASE_PORT)
            self.fabric.start_receivers()
        for i, w in enumerate(sc.workload):
            host, _ = sink_host(w)
            args = ["sink", "--port", str(BASE_PORT + i)]
            if w.kind == "vbr":
                args += ["--udp-port", str(BASE_PORT + i)]
            self._gen(host, args, f"sink{i}")
        if sc.fabric is None:  # h2's traffic; a fabric's receivers capture their own
            self._capture()
        with self.lock:
            receivers = {name: (proc, self.raw.dir / f"{name}.log") for name, proc in self.procs
                         if name.startswith(("sink", "tcpdump"))}
        ready.wait_ready(receivers)  # sinks listening, captures open
        sampler = CpuSampler(self.cpu_roles)
        t0 = time.monotonic()
        self.raw.t0 = time.time()
        sampler.start()
        try:
            self._measure(rest, t0, progress)
        finally:
            self.raw.cpu_samples = sampler.stop()
            self._write_cpu()
        self._cancel_timers()
        self._poll_counters(rest)
        if rest is not None:
            save_controller_views(rest, self.raw.dir, self.policy)
        if self.plain is not None:
            self.plain.save_drops(self.raw.dir / "drops.json")
        self._finish_senders(timeout=15)
        self.bed.stop_schedules()

    def _write_cpu(self) -> None:
        try:
            write_cpu_csv(self.raw.dir / "cpu.csv", self.raw.cpu_samples, self.raw.t0)
        except OSError as exc:
            log.warning("cpu.csv: %s", exc)

    def _measure(self, rest: RestClient | None, t0: float, progress: Callable[[str], None]) -> None:
        """The measured time: workloads and schedules started, counters polled until the end."""
        sc = self.scenario
        self.bed.start_schedules(sc.duration_s, on_error=lambda e: self._fail(f"schedule: {e}"))
        self.timers = [self._schedule_workload(i, w, t0) for i, w in enumerate(sc.workload)]
        if self.fabric is not None:
            self.timers += self.fabric.schedule(t0)
        deadline = t0 + sc.duration_s
        next_progress = t0
        while time.monotonic() < deadline and self.failure is None:
            self._poll_counters(rest)
            dead = self.bed.dead_switches()
            if dead:
                self._fail(f"{', '.join(dead)} died during the run")
            now = time.monotonic()
            if now >= next_progress:
                progress(f"t={now - t0:4.0f}s/{sc.duration_s:g}s")
                next_progress = now + 10
            time.sleep(POLL_S)

    def _schedule_workload(self, index: int, w: Workload, t0: float) -> threading.Timer:
        sc = self.scenario
        stop_s = w.stop_s if w.stop_s is not None else sc.duration_s
        seconds = max(0.5, min(stop_s, sc.duration_s) - w.start_s)
        _, dst = sink_host(w)
        seed = self.seed * 100 + index
        if w.kind == "vbr":
            rate = sc.topo.paths[w.path - 1].rate_at(0.0) or 10.0
            role = vbr_args(w, index, dst, seconds, seed, rate)
        elif w.kind == "poisson":
            role = poisson_args(w, index, dst, seconds, seed, sc.offered_mbps(w))
        else:
            role = sender_args(w, index, dst, seconds, seed)

        def launch() -> None:
            try:
                with self.lock:  # no sender starts once the run is closing
                    if self.closing or self.failure is not None or self.bed is None:
                        return
                    self._gen(source_host(w), role, f"send{index}")
            except Exception as exc:
                self._fail(f"workload {index}: {exc}")

        timer = threading.Timer(max(0.0, t0 + w.start_s - time.monotonic()), launch)
        timer.daemon = True
        timer.start()
        return timer

    def _cancel_timers(self) -> None:
        with self.lock:
            self.closing = True
        for timer in self.timers:
            timer.cancel()

    def _poll_counters(self, rest: RestClient | None) -> None:
        failure = poll(self.raw, self.bed, rest)
        if failure is not None:
            self._fail(failure)

    def _finish_senders(self, timeout: float) -> None:
        """Senders end by themselves at their --seconds; then sinks and capture get SIGTERM."""
        deadline = time.monotonic() + timeout
        with self.lock:
            procs = list(self.procs)
        for name, proc in procs:
            if name.startswith("send"):
                try:
                    proc.wait(timeout=max(0.1, deadline - time.monotonic()))
                except subprocess.TimeoutExpired:
                    self._fail(f"{name} did not end on time")
                    proc.terminate()
        senders_done = time.monotonic()
        for name, proc in procs:
            if name.startswith("sink"):
                proc.terminate()
        for name, proc in procs:
            if name.startswith(("sink", "send")):
                with contextlib.suppress(subprocess.TimeoutExpired):
                    proc.wait(timeout=5)
        captures = [proc for name, proc in procs if name.startswith("tcpdump")]
        if captures:  # the sinks' ending counts towards the capture's drain
            time.sleep(max(0.0, CAPTURE_DRAIN_S - (time.monotonic() - senders_done)))
        for proc in captures:
            proc.terminate()
        for proc in captures:
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=5)
        for name, _ in procs:
            path = self.raw.dir / f"{name}.json"
            if path.exists():
                try:
                    self.raw.reports[name] = json.loads(path.read_text())
                except json.JSONDecodeError as exc:
                    self._fail(f"{path}: {exc}")

    def _stop_all(self) -> None:
        self._cancel_timers()
        with self.lock:
            procs = list(self.procs)
            self.procs.clear()
        for _, proc in procs:
            if proc.poll() is None:
                proc.terminate()
        for _, proc in procs:
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=5)
            if self.bed is not None:
                self.bed.registry.forget_process(proc.pid)


