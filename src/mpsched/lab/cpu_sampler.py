"""The runner's CPU sampler: a thread that reads /proc/stat and each testbed process's
/proc/<pid>/stat every CPU_SAMPLE_S during a run (`CpuSampler`), under a CPU limit also the
limit's cgroup usage (src/mpsched/proc/cpulimit.py), and the run's `cpu.csv` (`write_cpu_csv`);
`cpu.py` holds the parsing and the arithmetic (whether the machine was the bottleneck)."""

from __future__ import annotations

import csv
import logging
import math
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path

from mpsched.lab import cpu
from mpsched.proc import cpulimit

log = logging.getLogger(__name__)

CPU_SAMPLE_S = 0.5


def measured_cpus() -> frozenset[int] | None:
    """The cores a run started from this process is measured on (`cpu.allowed_cpus`)."""
    return cpu.allowed_cpus(os.sched_getaffinity(0), os.cpu_count() or 1)


def measured_cores() -> int:
    """How many cores a run started from this process is measured on (its shares are % of
    these together)."""
    cpus = measured_cpus()
    return len(cpus) if cpus is not None else os.cpu_count() or 1


def read_cpu_sample(
    pids: dict[str, int],
    proc: Path = Path("/proc"),
    cpus: frozenset[int] | None = None,
    limit: cpulimit.ActiveLimit | None = None,
) -> cpu.CpuSample:
    """/proc/stat (over `cpus`, default all cores), each role's /proc/<pid>/stat and the
    `limit`'s cgroup usage now; a process that is gone is left out."""
    now = time.time()
    usage = limit.usage_s() if limit is not None else None
    times = cpu.parse_proc_stat((proc / "stat").read_text(), cpus)
    procs: dict[str, tuple[int, int]] = {}
    for role, pid in pids.items():
        try:
            procs[role] = (pid, cpu.parse_pid_stat((proc / str(pid) / "stat").read_text()))
        except (OSError, cpu.ProcParseError):
            continue  # exited (or a zombie's stat vanished) between listing and reading
    return cpu.CpuSample(now, times, procs, usage, limit.limit if limit is not None else None)


class CpuSampler(threading.Thread):
    """Samples /proc every `period` s until `stop()`; `pids()` names the processes by role
    (asked anew each time: senders start during the run). Samples go to `samples`; under a
    CPU limit (`cpulimit.active`) each holds the limit's usage too."""

    def __init__(self, pids: Callable[[], dict[str, int]], period: float = CPU_SAMPLE_S) -> None:
        super().__init__(name="cpu-sampler", daemon=True)
        self.pids = pids
        self.period = period
        self.samples: list[cpu.CpuSample] = []
        self.cpus = measured_cpus()
        self.limit = cpulimit.active()
        self._stop_event = threading.Event()

    def _sample(self) -> None:
        try:
            self.samples.append(read_cpu_sample(self.pids(), cpus=self.cpus, limit=self.limit))
        except Exception as exc:  # a missed sample must never break the run it measures
            log.warning("CPU sample: %s", exc)

    def run(self) -> None:
        self._sample()
        while not self._stop_event.wait(self.period):
            self._sample()

    def stop(self) -> list[cpu.CpuSample]:
        """Stop, take a last sample (so a run shorter than `period` still has an interval)."""
        self._stop_event.set()
        self.join(timeout=5)
        self._sample()
        return self.samples


def write_cpu_csv(path: Path, samples: list[cpu.CpuSample], t0: float) -> None:
    """Per sampling interval: start_s, end_s (after traffic start), idle_pct (of the CPU limit
    under one), and each role's CPU share in % of all cores (empty while a role had no
    process)."""
    roles, rows = cpu.interval_rows(samples, t0)
    with path.open("w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["start_s", "end_s", "idle_pct", *roles])
        for row in rows:
            w.writerow([f"{x:.3f}" if math.isfinite(x) else "" for x in row])
