"""`make bench-dataplane`: maximum forwarding rate of the full program vs a minimal one on one BMv2.

The programs run on the same `simple_switch_grpc` binary, one after the other in the same
run, with the same two veth ports: one 64-byte UDP flow into port 1, counted as it leaves
port 2. The full program gets the forwarding state the controller installs for an edge switch
with one path (route to the paths, the path's next hop, weights), so its frame takes the whole
path-selection pipeline; the minimal program (p4src/bench/minimal.p4) is one exact-match table
on the ingress port, and a second reference, plain IPv4 forwarding (p4src/bench/ipv4.p4:
checksum check, LPM route, MAC rewrite, TTL, checksum update), shows how much of the full
program's cost routing alone takes (printed, not in the ratio). With two or more CPUs the
load generator runs on the first and every thread of the switch on the last (`--no-pin`:
wherever the kernel puts them).

The figure per program is its maximum forwarding rate (RFC 2285, 3.6.2): the highest rate
delivered over a sweep of paced offered loads (`pktsend --rate`), from half the overload rate
up in steps of `--step` until two loads in a row lose more than 1 %, then `--fine` loads
between the highest one that lost less and the next step. An unpaced sender (as fast as it
can, about 0.9 M frames/s here) is no measure of capacity: under that overload the switch's
receive path slows down (the minimal program took in 31 k frames/s, forwarded 16-20 k of them
and dropped the rest at its egress queue, where paced loads get 120 k/s through); that
overload rate is printed too, and starts the sweep.
If no load of the sweep loses more than 1 %, the switch was not saturated and the figure is
the sender's limit, which the output says. Rounds alternate the programs; the median per
program counts. Each round prints the switch's CPU use and CPU time per forwarded packet
at the best load. Ends with `dataplane_pps_ratio=` (full / minimal; target >= 0.8).
"""

from __future__ import annotations

import argparse
import logging
import sys
import tempfile
from pathlib import Path

from mpsched import stats
from mpsched.bench.dataplane_programs import PROGRAMS, missing_programs
from mpsched.bench.dataplane_rig import cpu_plan, measure, program_rig
from mpsched.bench.dataplane_sweep import Sweep
from mpsched.p4profiles import REDUCED
from mpsched.proc import cpulimit, prereqs
from mpsched.proc.cleanup import Registry, sweep
from mpsched.proc.veth import make_veths

log = logging.getLogger("mpsched.bench.dataplane")


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="mpsched bench dataplane",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--seconds", type=float, default=1.5, help="measurement window per load")
    p.add_argument("--rounds", type=int, default=3, help="rounds per program (median counts)")
    p.add_argument(
        "--step", type=float, default=1.25, help="factor between two loads of the sweep (> 1)"
    )
    p.add_argument("--fine", type=int, default=3, help="loads between the knee's two steps (>= 0)")
    p.add_argument(
        "--no-pin",
        dest="pin",
        action="store_false",
        help="leave the sender and the switch unpinned (default: each on a CPU of its own)",
    )
    p.add_argument(
        "--profile",
        action="append",
        default=[],
        choices=[p.name for p in REDUCED],
        help="also measure this compile-time profile (`make p4 P4_PROFILE=...`); repeatable",
    )
    p.add_argument("-v", "--verbose", action="store_true", help="print every load of the sweeps")
    cpulimit.add_option(p)
    return p


def main(argv: list[str] | None = None) -> int:
    p = _parser()
    args = p.parse_args(argv)
    programs = [*PROGRAMS, *((p.name, p.label) for p in REDUCED if p.name in args.profile)]
    if args.seconds <= 0 or args.rounds < 1 or args.step <= 1 or args.fine < 0:
        p.error("--seconds must be > 0, --rounds >= 1, --step > 1 and --fine >= 0")
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING, format="%(name)s: %(message)s"
    )
    problems = prereqs.missing("root", "simple_switch_grpc")
    problems += missing_programs(profiles=bool(args.profile))
    if problems:
        print(
            "bench-dataplane: missing prerequisites:\n  " + "\n  ".join(problems), file=sys.stderr
        )
        return 2
    refused = cpulimit.confine(args.cpu_limit, "bench-dataplane")
    if refused is not None:
        return refused
    for line in sweep():
        log.info("cleaned up: %s", line)
    registry = Registry()
    cpus = cpu_plan(args.pin)
    print(
        f"load generator on CPU {cpus[0]}, switch on CPU {cpus[1]}" if cpus else "unpinned",
        flush=True,
    )
    try:
        results = _rounds(args, [name for name, _ in programs], cpus, registry)
    except KeyboardInterrupt:
        print("bench-dataplane: interrupted; cleaned up", file=sys.stderr)
        return 130
    finally:
        registry.close()
    _summary(programs, args.profile, results)
    return 0


def _rounds(
    args: argparse.Namespace,
    programs: list[str],
    cpus: tuple[int, int] | None,
    registry: Registry,
) -> dict[str, list[Sweep]]:
    """`args.rounds` rounds, each a sweep of every program in turn; one line per sweep."""
    results: dict[str, list[Sweep]] = {name: [] for name in programs}
    (sw1, t1), (sw2, t2) = make_veths(registry, 2)
    ports = {1: sw1, 2: sw2}
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.rounds):
            for name in programs:
                with program_rig(
                    name, ports, t1, t2, args.seconds, cpus, Path(tmp), registry
                ) as rig:
                    overload, result = measure(rig, args.step, args.fine)
                results[name].append(result)
                b = result.best
                print(
                    f"round {r + 1} {name:7s} {b.delivered:10.0f} pkt/s max forwarding rate"
                    f" (offered {b.offered:.0f}, loss {b.loss:.1%}, switch CPU {b.cpu:.2f},"
                    f" {b.cpu_us_per_packet:.1f} us/pkt; {len(result.trials)} loads"
                    f"{'' if result.saturated else '; NOT saturated: sender-limited'});"
                    f" unpaced overload {overload.delivered:.0f} pkt/s",
                    flush=True,
                )
    return results


def _summary(
    programs: list[tuple[str, str]], profiles: list[str], results: dict[str, list[Sweep]]
) -> None:
    """The median per program and the ratios, ending with the key=value lines."""
    medians = {k: stats.median(s.best.delivered for s in v) for k, v in results.items()}
    for name, label in programs:
        limited = not all(s.saturated for s in results[name])
        print(
            f"{label:26s} max forwarding rate median {medians[name]:10.0f} pkt/s"
            + (" (a lower bound: the sender limited some round)" if limited else "")
        )
    print(f"full / IPv4 forwarding: {medians['full'] / medians['ipv4']:.3f}")
    for name in profiles:
        print(f"{name} / IPv4 forwarding: {medians[name] / medians['ipv4']:.3f}")
    print(f"dataplane_pps_ratio_ipv4={medians['full'] / medians['ipv4']:.3f}")
    print(f"dataplane_pps_ratio={medians['full'] / medians['minimal']:.3f}")


if __name__ == "__main__":
    sys.exit(main())
