"""`make bench-capacity`: how fast the testbed can run the papers' scenarios on this machine.

Three parts (`--only` picks some):

capacity    the mptcp-steered shape (scenarios/mptcp-steered.yaml: one kernel-MPTCP connection,
            three subflows pinned to three paths, its delays and queues) with path rates
            3:2:1 (RATIOS; the file itself runs 10/6/4) scaled step by step to
            a summed rate of 12, 24, 36, 48, 60 Mbit/s (`--steps`), `--runs` seeded runs per
            step on a fresh testbed; it stops after the first step whose mean goodput fraction
            is below 0.85 or with a run marked cpu_bound (docs/results/README.md). Each step's
            line gives the goodput fraction, the machine's idle CPU and the shares of the
            controller, the switches and the link emulators.
controller  the same shape with four equal paths at `--controller-mbps` summed (four subflows):
            the controller's CPU share under traffic, in % of one core.
dataplane   `make bench-dataplane` and `make bench-dpcost` (subprocesses): the full program's
            maximum forwarding rate and its switch CPU per packet at 10 000 pkt/s, each against
            plain IPv4 forwarding (p4src/bench/ipv4.p4) on the same BMv2 build.

It ends with

    capacity_mbps=                  the highest summed rate whose runs reach a mean goodput
                                    fraction >= 0.9 with no run cpu_bound          [>= 40]
    controller_cpu_pct=             the controller's share of one core, 4 paths    [<= 10]
    dataplane_pps_ratio_ipv4=       full / IPv4 forwarding, maximum forwarding rate [>= 0.4]
    switch_us_per_pkt_ratio_ipv4=   full / IPv4 forwarding, switch CPU per packet  [<= 1.3]

On fewer cores: `taskset -c 0 mpsched bench capacity --only capacity` confines every
process of the runs to core 0 (they inherit the affinity), and idle, shares and cpu_bound are
then measured on that core alone ("% of one core" stays a share of one core).

Needs root, BMv2, Mininet, kernel MPTCP, `make p4 linkem`, and perf for the last figure. Runs
go to --out (default build/results/bench-capacity), one `mpsched compare` directory per step.
"""

from __future__ import annotations

import argparse
import copy
import dataclasses
import logging
import math
import os
import re
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import yaml

from mpsched import stats
from mpsched.proc import cpulimit
from mpsched.proc.layout import REPO_ROOT, build_dir

log = logging.getLogger(__name__)

SHAPE = REPO_ROOT / "scenarios" / "mptcp-steered.yaml"
RATIOS = (3, 2, 1)  # the shape's path rates, relative
STEPS = (12.0, 24.0, 36.0, 48.0, 60.0)
KEEP_FRAC = 0.9  # a step counts towards capacity_mbps at this mean goodput fraction
STOP_FRAC = 0.85  # and the sweep stops below this one
CONTROLLER_PATHS = 4
PARTS = ("capacity", "controller", "dataplane")
SWITCHES, EMULATORS = r"s\d+", r"e\d+"  # their roles in src/mpsched/lab/cpu.py
KEYS = re.compile(r"^(dataplane_pps_ratio_ipv4|switch_us_per_pkt_ratio_ipv4)=(\S+)$", re.M)


def scaled_shape(data: dict, summed_mbps: float, ratios: Sequence[float], name: str) -> dict:
    """The scenario `data` (parsed YAML of the mptcp-steered shape) with one path per ratio,
    their rates in those proportions summing to `summed_mbps`, and as many MPTCP subflows as
    paths. Everything else (delay, queue, workload, steering) as in the shape's first path."""
    if summed_mbps <= 0 or not ratios or any(r <= 0 for r in ratios):
        raise ValueError("the summed rate and every ratio must be > 0")
    out = copy.deepcopy(data)
    template = dict(out["paths"][0])
    template.pop("schedule", None)
    total = math.fsum(ratios)
    out["paths"] = [
        {**template, "rate_mbps": round(summed_mbps * r / total, 3)} for r in ratios
    ]
    out["name"] = name
    out["description"] = (
        f"{out.get('description', '')} - scaled to {summed_mbps:g} Mbit/s summed, rates "
        + ":".join(f"{r:g}" for r in ratios)
    )
    for w in out["workload"]:
        if w.get("mptcp"):
            w["subflows"] = len(ratios)
    return out


@dataclass(frozen=True)
class Step:
    """The runs of one summed rate."""

    summed_mbps: float
    goodput_frac: tuple[float, ...]
    cpu_bound: tuple[bool | None, ...]
    idle_pct: tuple[float, ...] = ()
    shares: tuple[dict[str, float], ...] = ()  # % of all cores, per run and role

    @property
    def mean_frac(self) -> float:
        vals = [v for v in self.goodput_frac if math.isfinite(v)]
        return stats.mean(vals)

    @property
    def any_cpu_bound(self) -> bool:
        return any(b is True for b in self.cpu_bound)

    def kept(self) -> bool:
        """Counts towards capacity_mbps: every run done, mean fraction >= KEEP_FRAC, no run
        cpu_bound."""
        return bool(self.goodput_frac) and self.mean_frac >= KEEP_FRAC and not self.any_cpu_bound

    def stops(self) -> bool:
        """The sweep goes no further: mean fraction below STOP_FRAC, a run cpu_bound, or no
        run finished."""
        return not (self.mean_frac >= STOP_FRAC) or self.any_cpu_bound

    def share(self, roles: str) -> float:
        """Mean over the runs of the summed share (% of all cores) of the roles (process names
        of src/mpsched/lab/cpu.py: controller, s1, e2, send0@h1, ...) matching the regex `roles`."""
        pattern = re.compile(roles)
        per_run = [
            math.fsum(v for k, v in s.items() if pattern.fullmatch(k)) for s in self.shares
        ]
        return stats.mean(per_run)


def capacity_mbps(steps: Sequence[Step]) -> float:
    """The highest summed rate of a kept step among those run before the sweep stopped (0 when
    none was kept)."""
    best = 0.0
    for step in steps:
        if step.kept():
            best = max(best, step.summed_mbps)
        if step.stops():
            break
    return best


def _run_step(scenario: dict, runs: int, duration: float | None, out: Path) -> Step:
    """Runs one scaled scenario `runs` times (mpsched.lab), returns its Step."""
    from mpsched.lab.experiment import run_experiments, write_reports
    from mpsched.lab.scenario import parse

    sc = parse(scenario, source=SHAPE)
    if duration is not None:
        sc = dataclasses.replace(sc, duration_s=duration)
    out.mkdir(parents=True, exist_ok=True)
    results, failed = run_experiments([sc], {sc.name: sc.compare[:1]}, runs, out, False)
    if failed:
        log.warning("%s: %d run(s) failed", sc.name, failed)
    write_reports(out, [sc], results)
    summed = math.fsum(p["rate_mbps"] for p in scenario["paths"])
    return Step(
        summed,
        tuple(r.metrics.get("goodput_frac", math.nan) for r in results),
        tuple(r.cpu_bound for r in results),
        tuple(r.metrics.get("cpu_idle_pct", math.nan) for r in results),
        tuple(r.cpu_shares for r in results),
    )


def measured_cores() -> int:
    """How many cores the runs' shares are a share of: those this process may use (a run
    inherits the affinity, src/mpsched/lab/cpu.py)."""
    return len(os.sched_getaffinity(0))


def _describe(step: Step) -> str:
    ncpu = measured_cores()
    fracs = " ".join(f"{v:.2f}" for v in step.goodput_frac)
    idle = stats.mean(step.idle_pct)
    return (
        f"{step.summed_mbps:5.0f} Mbit/s: goodput fraction {step.mean_frac:.3f} ({fracs}); "
        f"idle {idle:.0f} %; % of one core: controller {ncpu * step.share('controller'):.1f}, "
        f"switches {ncpu * step.share(SWITCHES):.1f}, "
        f"link emulators {ncpu * step.share(EMULATORS):.1f}"
        + ("; cpu_bound" if step.any_cpu_bound else "")
    )


def _dataplane_keys() -> dict[str, float]:
    """bench-dataplane's and bench-dpcost's ratios to IPv4 forwarding (subprocesses)."""
    keys: dict[str, float] = {}
    for module in ("mpsched.bench.dataplane", "mpsched.bench.dpcost"):
        cmd = [sys.executable, "-m", module]
        print(f"bench-capacity: {' '.join(cmd[1:])}", flush=True)
        done = subprocess.run(cmd, capture_output=True, text=True, check=False)
        sys.stdout.write(done.stdout)
        if done.returncode != 0:
            sys.stderr.write(done.stderr)
            log.warning("%s exited %d", module, done.returncode)
        for key, value in KEYS.findall(done.stdout):
            keys[key] = float(value)
    return keys


def capacity_sweep(data: dict, steps: list[float], runs: int, duration: float | None,
                   out: Path) -> float:
    """The shape at each summed rate in turn until a step stops the sweep; the capacity."""
    done: list[Step] = []
    for summed in steps:
        name = f"capacity-{summed:g}"
        sc = scaled_shape(data, summed, RATIOS, name)
        step = _run_step(sc, runs, duration, out / name)
        done.append(step)
        print(f"bench-capacity: {_describe(step)}", flush=True)
        if step.stops():
            break
    return capacity_mbps(done)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="mpsched bench capacity",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--steps",
        default=",".join(f"{s:g}" for s in STEPS),
        help="summed rates in Mbit/s, in the order run (default: %(default)s)",
    )
    p.add_argument("--runs", type=int, default=3, help="runs per step (default: %(default)s)")
    p.add_argument("--duration", type=float, default=None, help="seconds per run (default: "
                   "the shape's)")
    p.add_argument("--controller-mbps", type=float, default=24.0,
                   help="summed rate of the 4-path controller run (default: %(default)s)")
    p.add_argument("--only", action="append", choices=PARTS, help="run only these parts "
                   "(repeatable; default: all)")
    p.add_argument("--out", type=Path, default=build_dir() / "results" / "bench-capacity",
                   help="output directory (default: %(default)s)")
    cpulimit.add_option(p)
    args = p.parse_args(argv)
    try:
        steps = [float(s) for s in args.steps.split(",") if s.strip()]
    except ValueError:
        p.error("--steps: comma-separated numbers expected")
    if not steps or any(s <= 0 for s in steps) or args.runs < 1 or args.controller_mbps <= 0:
        p.error("--steps must be > 0, --runs >= 1, --controller-mbps > 0")
    if args.duration is not None and args.duration <= 0:
        p.error("--duration must be > 0")
    logging.basicConfig(level=logging.WARNING, format="%(name)s: %(message)s")
    refused = cpulimit.confine(args.cpu_limit, "bench-capacity")
    if refused is not None:
        return refused
    parts = args.only or list(PARTS)
    data = yaml.safe_load(SHAPE.read_text())
    keys: dict[str, float] = {}
    ncpu = measured_cores()
    try:
        if "capacity" in parts:
            keys["capacity_mbps"] = capacity_sweep(data, steps, args.runs, args.duration,
                                                   args.out)
        if "controller" in parts:
            name = f"controller-{CONTROLLER_PATHS}paths"
            sc = scaled_shape(data, args.controller_mbps, (1,) * CONTROLLER_PATHS, name)
            step = _run_step(sc, 1, args.duration, args.out / name)
            print(f"bench-capacity: {CONTROLLER_PATHS} paths, {_describe(step)}", flush=True)
            keys["controller_cpu_pct"] = ncpu * step.share("controller")
        if "dataplane" in parts:
            keys.update(_dataplane_keys())
    except KeyboardInterrupt:
        print("bench-capacity: interrupted; cleaned up", file=sys.stderr)
        return 130
    for key in ("capacity_mbps", "controller_cpu_pct", "dataplane_pps_ratio_ipv4",
                "switch_us_per_pkt_ratio_ipv4"):
        if key in keys:
            print(f"{key}={keys[key]:.3g}" if key != "capacity_mbps" else f"{key}={keys[key]:g}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
