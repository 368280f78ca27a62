"""The synthetic telemetry of `make bench-scale` (src/mpsched/bench/scale.py): what the leaves of a
leaf-spine would send the controller with every pair carrying data.

Each (source leaf, destination leaf, path) cell gets a path report (as the destination, the
egress edge, sends it) once per report interval and an RTT report (as the source, the ingress
edge, sends it) once per RTT report interval: the intervals the controller set for the pair in
the data plane now (src/mpsched/controller/telemetry/report_rates.py: an active pair's, an idle
pair's, or a leaf's own under the report cap, `TelemetryConfig.for_targets`), read again at every
report, so the feeder follows each pair's changes as the switches would. The cells fall due
spread evenly over their first interval, then each one interval after its last, with values
that change every time (every pair busy: its view changes with every report). A feeder behind
(it shares the controller's interpreter) hands a cell's due report over late, up to one
interval; beyond that it skips the reports missed, and counts them: `offered_per_s` against
`sent` and `skipped`. Its thread's CPU (`cpu_s`) is the bench's, except the controller's own
handling of the reports it hands over (`ingest_s`, which an agent's thread would spend on
reports from a switch).
"""

from __future__ import annotations

import heapq
import random
import threading
import time
from collections.abc import Callable

from mpsched.controller.app.core import Controller
from mpsched.controller.model.reports import PathReport, RttReport

TICK_S = 0.010  # the feeder hands over the reports fallen due every tick
Cell = tuple[int, int, int]  # (source edge, destination edge, path id)
PATH, RTT = "path", "rtt"


def catch_up(due_s: float, now_s: float, interval_s: float) -> tuple[int, float]:
    """A cell's report due at `due_s`, handed over at `now_s` (not before it): how many of
    its reports were missed (behind by whole intervals beyond this one: skipped), and when
    its next report falls due."""
    missed = int((now_s - due_s) // interval_s) if now_s - due_s > interval_s else 0
    return missed, due_s + (missed + 1) * interval_s


class Feeder(threading.Thread):
    """Every cell's path and RTT reports at the intervals the controller set, spread over
    time."""

    def __init__(self, ctl: Controller, leaves: int) -> None:
        super().__init__(name="feeder", daemon=True)
        self.ctl, self.leaves = ctl, leaves
        self.rng = random.Random(leaves)
        self.halt = threading.Event()
        self.cells: list[Cell] = [(s, d, p) for s in range(1, leaves + 1)
                                  for d in range(1, leaves + 1) if s != d
                                  for p in ctl.net.path_ids()]
        self.rng.shuffle(self.cells)  # a tick's reports spread over the pairs
        self.sent = 0  # reports handed over
        self.skipped = 0  # reports that fell due while the feeder was behind
        self.cpu_s = 0.0  # this thread's CPU time
        self.ingest_s = 0.0  # of it, in the controller's on_report and on_rtt
        self._seq: dict[Cell, int] = {}

    def interval_s(self, kind: str, cell: Cell) -> float:
        """The interval the controller set for the cell's reports of `kind` now: a path report
        is the destination's (egress) switch's, an RTT report the source's."""
        s, d, _ = cell
        own = self.ctl.intake.switch_telemetry[f"leaf{d if kind == PATH else s}"]
        got = self.ctl.routes.reports.intervals(own, s, d)
        return (got.report_us if kind == PATH else got.rtt_us) / 1e6

    def offered_per_s(self) -> float:
        """The reports a second every cell's intervals in force make now."""
        return sum(1 / self.interval_s(kind, cell) for cell in self.cells for kind in (PATH, RTT))

    def intervals_ms(self) -> dict[int, int]:
        """How many cells' path reports come at each interval now (ms -> cells)."""
        out: dict[int, int] = {}
        for cell in self.cells:
            ms = round(self.interval_s(PATH, cell) * 1000)
            out[ms] = out.get(ms, 0) + 1
        return dict(sorted(out.items()))

    def run(self) -> None:
        start = time.monotonic()
        n = len(self.cells)
        # (due, order, kind, cell): the RTT reports half an interval after the path reports
        due = [(start + (i / n + (kind == RTT) / 2) * self.interval_s(kind, cell), i, kind, cell)
               for kind in (PATH, RTT) for i, cell in enumerate(self.cells)]
        heapq.heapify(due)
        while not self.halt.wait(TICK_S):
            now = time.monotonic()
            t_us = 1_000_000 + int((now - start) * 1e6)
            wall = time.time()
            calls: list[Callable[[], None]] = []
            while due and due[0][0] <= now:
                at, order, kind, cell = due[0]
                missed, nxt = catch_up(at, now, self.interval_s(kind, cell))
                self.skipped += missed
                heapq.heapreplace(due, (nxt, order, kind, cell))
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
        if kind == RTT:
            rtt = RttReport(f"leaf{s}", p, d, rtt_us, 0, int(self.rng.uniform(0, 200_000)), now)
            return lambda: self.ctl.on_rtt(rtt)
        seq = self._seq[cell] = self._seq.get(cell, 0) + 50
        rx = seq * int(self.rng.uniform(200, 1500))
        report = PathReport(
            f"leaf{d}", p, seq, t_us - rtt_us // 2 + 7_000_000, t_us, seq, rx,
            self.rng.randrange(0, 3), 0, self.rng.randrange(0, 40), now, src_edge=s)
        return lambda: self.ctl.on_report(report)
