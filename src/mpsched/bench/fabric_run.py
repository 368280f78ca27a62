"""A fabric run with path-tag captures at the edges' ports (`make bench-fabric`'s failover).

`CapturingRun` is the runner's `Run` (src/mpsched/lab/runner.py) plus, for the measured time, a
`tcpdump -Q out` of the path-tagged frames on every edge switch's port towards the fabric
(`fabric_failover.start_captures`), and the wall-clock instant the link schedules started
(`schedule_wall`), from which a schedule event at `down_s` happened at `schedule_wall +
down_s`. The captures are the runner's processes (named `tcpdump-<iface>`), so it stops them
with its own captures and on every error path.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from mpsched.lab.runner import Run
from mpsched.testing.tagcap import edge_uplinks, start_captures


class CapturingRun(Run):
    """`Run` with tag captures at the edges' uplinks (module docstring); with `inbound` also
    of what the edges receive there (`start_captures`)."""

    schedule_wall: float = float("nan")
    inbound: bool = False

    def _measure(self, rest: Any, t0: float, progress: Callable[[str], None]) -> None:
        from mpsched.topo.fabric_plan import intf_name

        if self.scenario.fabric is None:
            raise ValueError(f"{self.scenario.name}: not a fabric scenario")
        ifaces = edge_uplinks(self.scenario.fabric, intf_name)
        procs = start_captures(ifaces, self.raw.dir, self.bed.registry, self.inbound)
        with self.lock:
            self.procs += procs
        # Run._measure starts the link schedules first thing: their t = 0
        self.schedule_wall = time.time()
        super()._measure(rest, t0, progress)
