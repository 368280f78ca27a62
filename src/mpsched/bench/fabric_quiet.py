"""What a fabric costs with nothing to carry: `make bench-fabric`'s quiet phase.

A fabric at rest still costs what its control and measurement do: probes, reports, feedback,
the controller's loop. For `seconds` after a warm-up the bench samples the machine (and each
process) with the fabric up and no traffic, once with the switches under the controller
running the CA policy, once with the plain ECMP program (src/mpsched/lab/plain_ecmp.py: no
controller, nothing but forwarding). ``fabric_quiet_busy_pct`` is the first busy share less
the second: what the scheduler costs a machine whose network is idle (target <= 10). Busy is
of the machine, or of the CPU limit where the bench runs under one (`cpu.interval_idle_pct`).
"""

from __future__ import annotations

import json
import logging
import math
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mpsched.lab import cpu
from mpsched.lab.programs import PLAIN_ECMP
from mpsched.lab.scenario import Scenario

log = logging.getLogger(__name__)

WARMUP_S = 5.0
QUIET_S = 30.0
KEY = "fabric_quiet_busy_pct"
QUIET_FILE = "quiet.json"


@dataclass(frozen=True)
class Quiet:
    """One quiet measurement: the machine's busy share (%) and each process's share."""

    program: str
    busy_pct: float
    shares: dict[str, float] = field(default_factory=dict)

    def line(self) -> str:
        switches = math.fsum(v for k, v in self.shares.items() if k.startswith("bmv2:"))
        return (f"  quiet {self.program:10s} busy {self.busy_pct:5.1f} %  switches "
                f"{switches:5.1f} %  controller {self.shares.get('controller', 0.0):4.1f} %")


def busy_of(samples: list[cpu.CpuSample]) -> float:
    """100 - the idle share between the first and the last sample (NaN with fewer than 2)."""
    if len(samples) < 2:
        return math.nan
    return 100.0 - cpu.interval_idle_pct(samples[0], samples[-1])


def _pids(bed: Any, controller: int | None) -> dict[str, int]:
    out = {} if controller is None else {"controller": controller}
    for sw in bed.bmv2_switches():
        if sw.bmv2 is not None and sw.bmv2.process is not None:
            out[f"bmv2:{sw.name}"] = sw.bmv2.process.pid
    return out


def measure(sc: Scenario, policy: str, out_dir: Path, seconds: float = QUIET_S) -> Quiet:
    """The fabric of `sc` up, no traffic: under the controller running `policy`, or with
    `policy` PLAIN_ECMP the plain program; sampled for `seconds` after WARMUP_S."""
    from mpsched.lab.cpu_sampler import CpuSampler
    from mpsched.lab.plain_ecmp import PlainEcmpSwitches
    from mpsched.proc.controller import start_controller, stop_controller
    from mpsched.topo.fabric_testbed import FabricSpec, FabricTestbed

    assert sc.fabric is not None and sc.fabric_section is not None, "a fabric scenario"
    out_dir.mkdir(parents=True, exist_ok=True)
    spec = FabricSpec(sc.fabric_section, sc.fabric, backend="linkem", seed=sc.seed,
                      log_dir=out_dir / "logs")
    with FabricTestbed(spec) as bed:
        ctl = None
        if policy == PLAIN_ECMP:
            PlainEcmpSwitches(bed.netcfg).program()
        else:
            ctl, rest = start_controller(bed.netcfg_path, out_dir / "controller.log",
                                         bed.registry)
        try:
            if ctl is not None:
                if sc.params:
                    rest.put("/params", sc.params)
                rest.put("/classes/0/policy", sc.policy_request(policy))
            time.sleep(WARMUP_S)
            sampler = CpuSampler(lambda: _pids(bed, None if ctl is None else ctl.pid))
            sampler.start()
            time.sleep(seconds)
            samples = sampler.stop()
        finally:
            if ctl is not None:
                stop_controller(ctl, bed.registry)
    return Quiet(PLAIN_ECMP if policy == PLAIN_ECMP else policy, busy_of(samples),
                 cpu.process_shares(samples))


def run_quiet(sc: Scenario, policy: str, out_dir: Path, seconds: float = QUIET_S) -> None:
    """Both quiet measurements, written to `out_dir`/QUIET_FILE (their lines and
    ``fabric_quiet_busy_pct``) for `read_quiet`."""
    got = [measure(sc, p, out_dir / p, seconds) for p in (policy, PLAIN_ECMP)]
    for q in got:
        log.info("%s", q.line().strip())
    (out_dir / QUIET_FILE).write_text(json.dumps(
        {"lines": [q.line() for q in got], "seconds": seconds,
         KEY: got[0].busy_pct - got[1].busy_pct}))


def read_quiet(source: Path) -> tuple[list[str], float]:
    """The quiet phase's lines and figure from a bench's output `source` ([] and NaN when
    it did not run)."""
    path = source / "quiet" / QUIET_FILE
    if not path.is_file():
        return [], math.nan
    data = json.loads(path.read_text())
    value = data.get(KEY)
    seconds = data.get("seconds", QUIET_S)
    return [f"machine busy at rest (no traffic, {seconds:g} s):", *data.get("lines", [])], (
        math.nan if value is None else float(value))
