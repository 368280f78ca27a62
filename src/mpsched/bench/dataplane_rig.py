"""One BMv2 switch running one program of `make bench-dataplane` under load from a separate
sender process (`pktsend`), with the CPU plan that pins them apart; `bench-dpcost` uses the
same rig."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from mpsched.bench.dataplane_programs import frame_hex, full_program_state, program_artifacts
from mpsched.bench.dataplane_sweep import Sweep, Trial, max_forwarding_rate
from mpsched.p4rt.client import P4RuntimeClient
from mpsched.p4rt.p4info import P4Info
from mpsched.p4rt.pipeline import Pipeline
from mpsched.proc.bmv2 import Bmv2Switch
from mpsched.proc.cleanup import Registry

# the name bench-dataplane's -v output has always shown for the rig's lines
log = logging.getLogger("mpsched.bench.dataplane")


def rx_packets(iface: str) -> int:
    return int(Path(f"/sys/class/net/{iface}/statistics/rx_packets").read_text())


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far (all its threads)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def pin_process(pid: int, cpu: int) -> None:
    """Pin every thread of a process to one CPU (threads it starts later inherit it)."""
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            os.sched_setaffinity(int(task.name), {cpu})
        except (ProcessLookupError, PermissionError) as e:
            log.warning("could not pin thread %s to CPU %d: %s", task.name, cpu, e)


def cpu_plan(pin: bool) -> tuple[int, int] | None:
    """(load generator's CPU, switch's CPU) from the CPUs this process may use."""
    allowed = sorted(os.sched_getaffinity(0))
    if not pin or len(allowed) < 2:
        return None
    return allowed[0], allowed[-1]


class Rig:
    """One switch running one program under load from a separate sender process."""

    def __init__(
        self,
        send_iface: str,
        sink: str,
        seconds: float,
        cpus: tuple[int, int] | None,
        sw: Bmv2Switch,
        registry: Registry,
        traffic: str = "udp",
    ) -> None:
        self.send_iface, self.sink, self.seconds = send_iface, sink, seconds
        self.cpus, self.sw, self.registry = cpus, sw, registry
        self.frame = frame_hex(traffic)

    def trial(self, rate: float) -> Trial:
        """Hold `rate` pkt/s (0: unpaced) for a warm-up and the measurement window."""
        warmup = 0.3
        duration = warmup + self.seconds + 0.2
        sender = subprocess.Popen(
            [
                *(("taskset", "-c", str(self.cpus[0])) if self.cpus is not None else ()),
                sys.executable,
                "-m",
                "mpsched.bench.pktsend",
                "--iface",
                self.send_iface,
                "--frame",
                self.frame,
                "--seconds",
                str(duration),
                "--rate",
                str(rate),
            ],
            stdout=subprocess.PIPE,
            text=True,
        )
        self.registry.add_process(sender.pid, " ".join(sender.args))
        pid = self.sw.process.pid
        try:
            time.sleep(warmup)
            before, t0, cpu0 = rx_packets(self.sink), time.monotonic(), cpu_seconds(pid)
            time.sleep(self.seconds)
            delivered, elapsed = rx_packets(self.sink) - before, time.monotonic() - t0
            cpu = cpu_seconds(pid) - cpu0
            out, _ = sender.communicate(timeout=duration + 10)
        finally:
            if sender.poll() is None:
                sender.kill()
                sender.wait()
            self.registry.forget_process(sender.pid)
        time.sleep(0.2)  # queues drain before the next load
        sent = int(out.strip() or 0) / duration
        t = Trial(rate, sent, delivered / elapsed, cpu / elapsed)
        log.info(
            "offered %8.0f sent %8.0f delivered %8.0f loss %.4f cpu %.2f",
            t.offered,
            t.sent,
            t.delivered,
            t.loss,
            t.cpu,
        )
        return t


def start_switch(
    name: str,
    p4info_path: Path,
    bmv2_json: Path,
    ports: dict[int, str],
    log_dir: Path,
    registry: Registry,
    full: bool,
    cpus: tuple[int, int] | None,
    mode: str = "hash",
) -> Bmv2Switch:
    """A switch with the program (and, for the full one, an edge switch's forwarding state
    with class 0 in `mode`), its threads pinned to the switch's CPU."""
    sw = Bmv2Switch(name=name, device_id=1, ports=ports, log_dir=log_dir, registry=registry)
    sw.start()
    try:
        info = P4Info.from_file(p4info_path)
        client = P4RuntimeClient(sw.grpc_address, 1, info)
        client.connect()
        try:
            client.set_pipeline(str(bmv2_json))
            if full:
                for entry in full_program_state(Pipeline(info), sw.grpc_address, mode):
                    client.insert(entry)
        finally:
            client.close()
        if cpus is not None:
            pin_process(sw.process.pid, cpus[1])
    except BaseException:
        sw.stop()
        raise
    return sw


@contextmanager
def program_rig(
    name: str,
    ports: dict[int, str],
    send_iface: str,
    sink: str,
    seconds: float,
    cpus: tuple[int, int] | None,
    log_dir: Path,
    registry: Registry,
    traffic: str = "udp",
    mode: str = "hash",
) -> Iterator[Rig]:
    """A Rig on a switch running program `name` (of PROGRAMS or mpsched.p4profiles.REDUCED)
    with `traffic` (TRAFFIC; "tagged" and "transit" are sent into the sink's port, the path
    port, and leave the other) and class 0 in `mode` (MODES), stopped on exit."""
    json_, info = program_artifacts()[name]
    full = name not in ("minimal", "ipv4")
    sw = start_switch(f"bench-{name}", info, json_, ports, log_dir, registry, full, cpus, mode)
    try:
        if traffic in ("tagged", "transit"):
            send_iface, sink = sink, send_iface
        yield Rig(send_iface, sink, seconds, cpus, sw, registry, traffic)
    finally:
        sw.stop()


def measure(rig: Rig, step: float, fine: int) -> tuple[Trial, Sweep]:
    """The overload trial (unpaced sender), then the sweep from half its delivered rate."""
    overload = rig.trial(0)
    start = max(1000.0, overload.delivered / 2)
    return overload, max_forwarding_rate(rig.trial, start, step, fine)
