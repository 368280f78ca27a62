"""`make soak FABRIC=...`: the soak on a fabric (`mpsched bench soak --fabric`).

The fabric is a fabric scenario file (`scenarios/fabric-*.yaml`; `1`:
scenarios/fabric-leaf-spine.yaml) or a leaf-spine shape `LxS` (that file with L leaves and S
spines: its 2.5 Mbit/s links, one host per leaf), brought up on linkem links
(src/mpsched/topo/fabric_testbed.py) with the controller on its description. For the whole run the
scenario's workload runs from every leaf's hosts to the others' (all-to-all; the file's
arrivals, sizes and load, planned for the run's length by `fabric_workload.sender_plans`);
the scenario's own link schedules do not run, the soak's events do (src/mpsched/bench/soak_plan.py):
the policy changed every `--change-every-s` through every policy as in the two-edge soak, a
link flap every `--flap-every-s` (`--flap-down-s` down; alternately a real failure through
linkem and an administrative one over REST, `PUT /links/{name}/admin`), and at
`--restart-at-s` a spine's simple_switch_grpc killed (SIGKILL, by its PID) and started
again on the same ports: the controller has to notice, reconnect and push the program and
its entries again (src/mpsched/controller/southbound/agent.py).

Every `--sample-every-s` from `--warmup-s` on the bench samples every process (the
controller, every BMv2, every linkem) as the two-edge soak does (RSS, fds, threads) and the
control loop's p99 (`GET /decisions`), into `samples.csv`. The restarted switch's new
process is a life of its own (`spine1#2`): its own warm-up from the restart, its own slope
window (`--slope-after-s` after the restart), so the step from the killed process to the new
one counts as growth nowhere (soak_plan.Lives).

Ends with `soak_restart_reprogrammed_s=` (from starting the switch again to the controller's
`GET /switches` showing it programmed anew: NaN if it never was, and the soak fails),
`soak_restart_traffic_s=` (to every link of the restarted switch delivering frames again
both ways), `soak_rest_errors=` (REST calls of the events that failed), then the two-edge
soak's keys: `soak_rss_growth_pct=`, `soak_rss_slope_kb_per_min=` (target <= 50),
`soak_fds_growth=`, `soak_threads_growth=` (flat is 0) and `soak_loop_p99_ms=` (target <= 100
on a fabric).
"""

from __future__ import annotations

import logging
import math
import os
import re
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import requests

from mpsched.bench.soak_plan import Event, Lives, plan_events, policy_changes
from mpsched.bench.soak_series import SAMPLES_HEADER, ProcSample, proc_sample, sample_row
from mpsched.bench.soak_warm import WARM_FRAMES, far_ends, warm_switch
from mpsched.lab.scenario import Scenario, ScenarioError, parse
from mpsched.proc.layout import REPO_ROOT
from mpsched.validation import read_document

log = logging.getLogger("mpsched.bench.soak")

DEFAULT_SCENARIO = REPO_ROOT / "scenarios" / "fabric-leaf-spine.yaml"
BASE_PORT = 7201
REPROGRAM_TIMEOUT_S = 60.0


def load_fabric(value: str) -> Scenario:
    """The soak's fabric scenario: `1` (the default file), `LxS` (the default file's
    leaf-spine with L leaves and S spines) or a fabric scenario file."""
    from mpsched.bench.ui_fabric import parse_shape

    path = DEFAULT_SCENARIO if value in ("1", "") or re.fullmatch(r"\d+x\d+", value) else Path(
        value)
    data = read_document(path)
    if re.fullmatch(r"\d+x\d+", value):
        leaves, spines = parse_shape(value)
        data["fabric"]["leaf_spine"] |= {"leaves": leaves, "spines": spines}
        data["name"] = f"{data['name']}-{value}"
    sc = parse(data, source=path, fabric=True)
    if sc.fabric is None:
        raise ScenarioError("fabric", "missing: the soak on a fabric needs a fabric scenario",
                            str(path))
    return sc


@dataclass(frozen=True)
class FabricOptions:
    minutes: float
    change_s: float = 5.0
    sample_s: float = 10.0
    warmup_s: float = 60.0
    flap_every_s: float = 60.0
    flap_down_s: float = 5.0
    restart_at_s: float | None = 120.0
    restart: str | None = None  # default: the fabric's first spine
    warm_frames: int = WARM_FRAMES  # per burst into each switch first (soak_warm.py); 0: none


@dataclass
class RestartWatch:
    """The restart's figures: seconds from starting the switch again (`wall`, time.time())
    to the controller's report of it programmed anew, and to every link of it delivering
    frames both ways again (their counters past those at the reprogramming)."""

    name: str
    wall: float
    links: list[str]
    reprogrammed_s: float = math.nan
    traffic_s: float = math.nan
    baseline: dict[tuple[str, str], int] = field(default_factory=dict)

    def done(self) -> bool:
        return not math.isnan(self.traffic_s)

    def check(self, rest: Any, link_stats: dict[str, dict]) -> None:
        now = time.time()
        if math.isnan(self.reprogrammed_s):
            mine = next(s for s in rest.get("/switches") if s["name"] == self.name)
            programmed = mine.get("programmed") or {}
            if mine["state"] == "ready" and programmed.get("at", 0) > self.wall:
                self.reprogrammed_s = now - self.wall
                self.baseline = _delivered(link_stats, self.links)
            return
        counts = _delivered(link_stats, self.links)
        if all(counts[k] > v for k, v in self.baseline.items()):
            self.traffic_s = now - self.wall


def _delivered(link_stats: dict[str, dict], links: list[str]) -> dict[tuple[str, str], int]:
    return {(name, d): int(link_stats[name][d].get("tx_bytes", 0))
            for name in links for d in ("ab", "ba")}


def restart_switch(bed: Any, name: str) -> float:
    """SIGKILL the testbed switch's simple_switch_grpc by its PID and start it again on the
    same ports and gRPC address, without a program (the controller has to find it and
    program it); the wall-clock time (time.time()) just before it started again."""
    bmv2 = bed.host(name).bmv2
    os.kill(bmv2.process.pid, signal.SIGKILL)
    bmv2.process.wait(timeout=10)
    bmv2.stop()  # forgets the PID, removes the Thrift guard
    wall = time.time()
    bmv2.start()
    return wall


class FabricSoak:
    """One soak run on a fabric testbed (module docstring); `run()` returns the lives and
    the loop p99s sampled after the warm-up."""

    def __init__(self, sc: Scenario, out_dir: Path, opts: FabricOptions) -> None:
        assert sc.fabric is not None, "a fabric scenario"
        self.sc, self.out_dir, self.opts = sc, out_dir, opts
        self.fabric = sc.fabric
        self.duration = opts.minutes * 60
        self.restart = opts.restart or self.fabric.spines()[0]
        if self.restart not in self.fabric.by_name:
            raise ValueError(f"--restart: no switch {self.restart!r} in the fabric")
        self.events = plan_events(self.duration, opts.change_s, opts.flap_every_s,
                                  opts.flap_down_s, [lk.name for lk in self.fabric.links],
                                  opts.restart_at_s, self.restart)
        self.lives = Lives()
        self.loop_p99: list[float] = []
        self.rest_errors = 0
        self.watch: RestartWatch | None = None
        self.procs: list[subprocess.Popen] = []
        self.bed: Any = None
        self.changes = policy_changes()

    # -- the run -------------------------------------------------------------------

    def run(self) -> None:
        from mpsched.proc.controller import start_controller, stop_controller
        from mpsched.topo.fabric_testbed import FabricSpec, FabricTestbed

        spec = FabricSpec(self.sc.fabric_section or {}, self.fabric, backend="linkem",
                          seed=self.sc.seed, log_dir=self.out_dir / "logs")
        with FabricTestbed(spec) as bed:
            self.bed = bed
            ctl, rest = start_controller(bed.netcfg_path, self.out_dir / "controller.log",
                                         bed.registry)
            try:
                self._warm([s.name for s in bed.plan.switches])
                pending = self._start_traffic()
                self._loop(ctl, rest, pending)
            finally:
                self._stop_traffic()
                stop_controller(ctl, bed.registry)

    def _loop(self, ctl: subprocess.Popen, rest: Any, pending: list) -> None:
        events = list(self.events)
        start = time.monotonic()
        next_sample, next_watch = start + self.opts.warmup_s, start
        samples = (self.out_dir / "samples.csv").open("w")
        samples.write(SAMPLES_HEADER + "\n")
        try:
            while (now := time.monotonic()) - start < self.duration:
                t = now - start
                while events and events[0].at_s <= t:
                    self._act(events.pop(0), t, rest)
                pending = self._launch_due(pending, t)
                if now >= next_sample:
                    self._sample(t, ctl.pid, rest, samples)
                    next_sample += self.opts.sample_s
                if self.watch is not None and not self.watch.done() and now >= next_watch:
                    self._check_restart(rest)
                    next_watch = now + 0.2
                dead = self.bed.dead_switches()
                if dead or ctl.poll() is not None:
                    raise RuntimeError(f"died during the soak: {dead or ['controller']}")
                time.sleep(0.05)
        finally:
            samples.close()

    def _warm(self, switches: list[str]) -> None:
        """Each of `switches`' pools of packet header vectors filled (soak_warm.py)."""
        if self.opts.warm_frames <= 0:
            return
        from mpsched.topo.fabric_plan import intf_name

        links = [(lk.a, lk.b, intf_name(lk.emulator, 1), intf_name(lk.emulator, 2))
                 for lk in self.bed.plan.links]
        for name in switches:
            ends = far_ends(links, name)
            bmv2 = self.bed.host(name).bmv2
            if not ends or bmv2 is None or bmv2.process is None:
                continue
            pid = bmv2.process.pid
            warm_switch(name, ends[0], lambda pid=pid: proc_sample(pid).rss_kb,
                        self.opts.warm_frames)

    # -- events --------------------------------------------------------------------

    def _act(self, event: Event, t: float, rest: Any) -> None:
        log.info("t=%.0fs %s %s", t, event.kind, event.target)
        try:
            if event.kind == "policy":
                rest.put("/classes/0/policy", next(self.changes))
            elif event.kind.startswith("admin_"):
                rest.put(f"/links/{event.target}/admin", {"state": event.kind[6:]})
            elif event.kind.startswith("linkem_"):
                self._set_link_up(event.target, event.kind == "linkem_up")
            elif event.kind == "restart":
                self._restart(event.target, t)
        except requests.RequestException as exc:
            self.rest_errors += 1
            log.warning("t=%.0fs %s %s: %s", t, event.kind, event.target, exc)

    def _set_link_up(self, name: str, up: bool) -> None:
        """Both directions of the link's linkem down (frames dropped, queue flushed) or up
        again with the fabric's parameters."""
        link = self.fabric.link_by_name[name]
        for direction, source in (("ab", link.a), ("ba", link.b)):
            self.bed.set_link(name, direction, replace(link.params(source), up=up))

    def _restart(self, name: str, t: float) -> None:
        self.lives.restarted(name, t)
        wall = restart_switch(self.bed, name)
        links = [lk.name for lk in self.fabric.links_of(name)]
        self.watch = RestartWatch(name, wall, links)
        print(f"t={t:.0f}s: {name} killed and started again "
              f"(PID {self.bed.host(name).bmv2.process.pid})", flush=True)

    def _check_restart(self, rest: Any) -> None:
        watch = self.watch
        assert watch is not None
        programmed = not math.isnan(watch.reprogrammed_s)
        try:
            watch.check(rest, self.bed.link_stats())
        except requests.RequestException as exc:
            log.debug("restart check: %s", exc)
        if not programmed and not math.isnan(watch.reprogrammed_s):
            # its new life's pool starts empty; beside the loop, which times the restart
            threading.Thread(target=self._warm, args=([watch.name],), name="warm",
                             daemon=True).start()
        if math.isnan(watch.reprogrammed_s) and time.time() - watch.wall > REPROGRAM_TIMEOUT_S:
            raise RuntimeError(f"{watch.name}: not programmed again "
                               f"{REPROGRAM_TIMEOUT_S:g} s after its restart")

    # -- sampling ------------------------------------------------------------------

    def pids(self, controller: int) -> dict[str, int]:
        """The PID of every process by name: the controller, each BMv2, each linkem."""
        out = {"controller": controller}
        for sw in self.bed.bmv2_switches():
            if sw.bmv2 is not None and sw.bmv2.process is not None:
                out[sw.name] = sw.bmv2.process.pid
        return out | self.bed.emulator_pids()

    def _sample(self, t: float, controller: int, rest: Any, out: Any) -> None:
        try:
            p99 = rest.get("/decisions?limit=1")["loop"]["latency_ms_p99"]
        except requests.RequestException as exc:
            self.rest_errors += 1
            log.warning("t=%.0fs GET /decisions: %s", t, exc)
            p99 = None
        if p99 is not None:
            self.loop_p99.append(p99)
        for name, pid in self.pids(controller).items():
            series = self.lives.series(name, pid, t)
            if t < series.born_s + self.opts.warmup_s:
                continue  # this life's warm-up
            try:
                sample: ProcSample = proc_sample(pid)
            except (FileNotFoundError, ProcessLookupError):
                continue  # gone since: the dead check says so
            series.samples.append((t, sample))
            out.write(sample_row(t, series.name, pid, sample, p99))
        out.flush()
        if int(t // 60) != int((t - self.opts.sample_s) // 60):
            print(f"t={t:4.0f}s/{self.duration:g}s loop_p99_ms={p99} "
                  f"rest_errors={self.rest_errors}", flush=True)

    # -- traffic -------------------------------------------------------------------

    def _popen(self, host: str, role: list[str], name: str) -> subprocess.Popen:
        args = [sys.executable, "-m", "mpsched.traffic.gen", *role,
                "--out", str(self.out_dir / f"{name}.json")]
        with (self.out_dir / f"{name}.log").open("wb") as out:
            proc = self.bed.host(host).popen(args, stdout=out, stderr=subprocess.STDOUT)
        self.bed.registry.add_process(proc.pid, " ".join(args))
        self.procs.append(proc)
        return proc

    def _start_traffic(self) -> list:
        """Sinks on every receiving host now; the senders' plans, started by `_launch_due`
        at their workload's start."""
        from mpsched.lab.fabric_launch import hosts_from_names, sink_args
        from mpsched.lab.fabric_workload import receivers, sender_plans

        hosts = hosts_from_names(self.bed.hosts())
        plans = sender_plans(self.sc.fabric_workload, self.fabric, self.duration,
                             self.sc.seed, hosts)
        for index, host in receivers(plans, hosts):
            self._popen(host.name, sink_args(index, BASE_PORT), f"sink{index}_{host.name}")
        time.sleep(1.0)  # sinks listening
        return sorted(plans, key=lambda p: p.start_s)

    def _launch_due(self, pending: list, t: float) -> list:
        import json

        from mpsched.lab.fabric_launch import flows_document, sender_args

        while pending and pending[0].start_s <= t:
            plan = pending.pop(0)
            flows = self.out_dir / f"{plan.name}.flows.json"
            if plan.kind != "bulk":
                flows.write_text(json.dumps(flows_document(plan)))
            self._popen(plan.host.name, sender_args(plan, BASE_PORT, self.sc.seed, flows),
                        plan.name)
        return pending

    def _stop_traffic(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                proc.terminate()
        for proc in self.procs:
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=5)
            self.bed.registry.forget_process(proc.pid)

    # -- the end ---------------------------------------------------------------------

    def report(self) -> bool:
        """The fabric's own lines (events, the restart's figures); True if the restarted
        switch was programmed again (or none was restarted)."""
        kinds = [e.kind for e in self.events]
        print(f"events: {kinds.count('policy')} policy changes, {kinds.count('linkem_down')} "
              f"link failures through linkem, {kinds.count('admin_down')} administrative "
              f"ones, {kinds.count('restart')} restart of {self.restart}")
        w = self.watch
        print(f"soak_restart_reprogrammed_s={math.nan if w is None else w.reprogrammed_s:.2f}")
        print(f"soak_restart_traffic_s={math.nan if w is None else w.traffic_s:.2f}")
        print(f"soak_rest_errors={self.rest_errors}")
        return "restart" not in kinds or (w is not None and not math.isnan(w.reprogrammed_s))
