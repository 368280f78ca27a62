"""The synthetic telemetry of `make bench-scale` (src/mpsched/bench/scale.py): what the leaves of a
leaf-spine would send the controller with every pair active.

Each (source leaf, destination leaf, path) cell gets a path report (as the destination, the
egress edge, sends it) once per report interval and an RTT report (as the source, the ingress
edge, sends it) once per RTT report interval: the intervals each leaf was given
(`TelemetryConfig.for_targets`, stretched by the report cap `report_max_pps`), each kind's
cells spread evenly over the interval (`quota` per tick), with values that change every time,
so that every pair's view changes with every report. A feeder behind (it shares the
controller's interpreter) hands over a tick's backlog late, up to one interval's worth; beyond
that it skips, and counts: `offered_per_s` against `sent` and `skipped`. Its thread's CPU
(`cpu_s`) is the bench's, except the controller's own handling of the reports it hands over
(`ingest_s`, which an agent's thread would spend on reports from a switch).
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable

from mpsched.controller.core import Controller
from mpsched.controller.southbound.reports import RttReport
from mpsched.controller.telemetry.estimators import PathReport

TICK_S = 0.010  # the feeder hands over each tick's share of the reports
Cell = tuple[int, int, int]  # (source edge, destination edge, path id)


def quota(credit: float, cells: int, dt_s: float, interval_s: float) -> tuple[int, float]:
    """How many of `cells` cells, each reported once per `interval_s`, fall due in `dt_s`
    given the fraction `credit` carried from the last tick: (reports now, credit left)."""
    credit += cells * dt_s / interval_s
    n = int(credit)
    return n, credit - n


class Feeder(threading.Thread):
    """Every cell's path and RTT reports at the leaves' intervals, spread over time."""

    def __init__(self, ctl: Controller, leaves: int) -> None:
        super().__init__(name="feeder", daemon=True)
        self.ctl, self.leaves = ctl, leaves
        self.rng = random.Random(leaves)
        self.halt = threading.Event()
        self.cells: list[Cell] = [(s, d, p) for s in range(1, leaves + 1)
                                  for d in range(1, leaves + 1) if s != d
                                  for p in ctl.net.path_ids()]
        self.rng.shuffle(self.cells)  # a tick's reports spread over the pairs
        tel = ctl.intake.switch_telemetry["leaf1"]  # every leaf has as many cells
        self.report_s, self.rtt_s = tel.report_interval_us / 1e6, tel.rtt_interval_us / 1e6
        self.offered_per_s = len(self.cells) * (1 / self.report_s + 1 / self.rtt_s)
        self.sent = 0  # reports handed over
        self.skipped = 0  # reports that fell due while the feeder was behind
        self.cpu_s = 0.0  # this thread's CPU time
        self.ingest_s = 0.0  # of it, in the controller's on_report and on_rtt
        self._seq: dict[Cell, int] = {}

    def run(self) -> None:
        start = last = time.monotonic()
        credit = {"path": 0.0, "rtt": 0.0}
        cursor = {"path": 0, "rtt": len(self.cells) // 2}
        while not self.halt.wait(TICK_S):
            now = time.monotonic()
            dt, last = now - last, now
            t_us = 1_000_000 + int((now - start) * 1e6)
            wall = time.time()
            calls: list[Callable[[], None]] = []
            for kind, interval in (("path", self.report_s), ("rtt", self.rtt_s)):
                n, credit[kind] = quota(credit[kind], len(self.cells), dt, interval)
                due = min(n, len(self.cells))  # behind by a whole interval: skip the rest
                self.skipped += n - due
                for _ in range(due):
                    cell = self.cells[cursor[kind]]
                    cursor[kind] = (cursor[kind] + 1) % len(self.cells)
                    calls.append(self._report(kind, cell, t_us, wall))
            start_s = time.thread_time()
            for call in calls:
                call()
            self.sent += len(calls)
            self.cpu_s = time.thread_time()
            self.ingest_s += self.cpu_s - start_s

    def made_s(self) -> float:
        """This thread's CPU so far less the controller's handling of its reports: what
        making them up cost."""
        return self.cpu_s - self.ingest_s

    def _report(self, kind: str, cell: Cell, t_us: int, now: float) -> Callable[[], None]:
        """The hand-over of one report, made up now."""
        s, d, p = cell
        rtt_us = int(self.rng.uniform(5_000, 80_000))
        if kind == "rtt":
            rtt = RttReport(f"leaf{s}", p, d, rtt_us, 0, int(self.rng.uniform(0, 200_000)), now)
            return lambda: self.ctl.on_rtt(rtt)
        seq = self._seq[cell] = self._seq.get(cell, 0) + 50
        rx = seq * int(self.rng.uniform(200, 1500))
        report = PathReport(
            f"leaf{d}", p, seq, t_us - rtt_us // 2 + 7_000_000, t_us, seq, rx,
            self.rng.randrange(0, 3), 0, self.rng.randrange(0, 40), now, src_edge=s)
        return lambda: self.ctl.on_report(report)
