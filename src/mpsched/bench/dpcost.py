"""`make bench-dpcost`: what one packet costs each program on BMv2, counted rather than timed.

For the programs of `make bench-dataplane` (the minimal one-table program, plain IPv4
forwarding, the full program with an edge switch's forwarding state), one after the other on
the same two veth ports, at one paced load below every program's capacity (`--rate`, default
10 000 pkt/s of one 64-byte UDP flow): the switch's CPU time per forwarded packet, and, from
uprobes on the `simple_switch_grpc` binary counted with `perf stat`, per received packet:

- field writes: calls of `bm::Field::export_bytes`, which every write of a field ends in
  (the per-packet reset of the metadata, a header made valid or invalid, an assignment, a
  parser `set`); each costs two big-number copies;
- table applies: `bm::MatchTableAbstract::apply_action` (p4c's synthesised tables for blocks
  of statements included);
- conditions: `bm::Conditional::operator()`.

The counts do not depend on timing, so a change to the P4 program shows in them exactly,
where the rates of `make bench-dataplane` vary by 10-20 % between rounds. The probes are
placed at the functions' addresses in the binary's symbol table (`nm`) and removed at the
end, also on errors and Ctrl-C, and at the start if a killed run left them. Each symbol is
looked for in the executable (its symbol table, else its dynamic symbols) and then in the shared
libraries it loads (`ldd`, dynamic symbols), so a stripped, dynamically linked BMv2 as
distributions ship it is counted too, and probed where the symbol is. Needs root and `perf`
(Debian's linux-perf); a counter whose symbol is found nowhere prints n/a, and a line
`not counted: EVENT (...)` says why.

`--profiles` measures the compile-time profiles of the full program as well (REDUCED of
src/mpsched/p4profiles.py, built by `make p4-profiles`), with every kind of traffic
(`--traffic`, TRAFFIC): the UDP frame above, a TCP segment from the host bound for the paths,
the same segment arriving tagged from a path bound for the host (the egress edge), and one
tagged for another pair of edges (a transit switch's work: `--traffic transit`; the programs
without path tags are not run with these two). The cost of a stage is the full program's
minus that of the profile without it, per kind of traffic.

Without `--traffic`, the UDP frame, the tagged arrival and the transit tag are measured, and
the output ends with the full program's cost per packet as an edge switch (a tagged arrival
at its egress edge) and as a transit switch, as key=value lines: `dpcost_edge_us=`,
`dpcost_edge_table_applies=`, `dpcost_edge_conditions=`, `dpcost_edge_field_writes=` and the
same for `dpcost_transit_`.

`--mode MODE` (repeatable: hash, flowlet, ca) measures the full program with class 0 in that
path-choice mode and a flowlet gap of 0, so that every UDP packet is a new flowlet and pays the
mode's choice: flowlet's weighted random draw, ca's least-cost choice (`ca_select.p4`; every
cost term on). The difference to hash is what a new flowlet costs in that mode.
"""

from __future__ import annotations

import argparse
import logging
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from mpsched.bench.dataplane_programs import MODES, PROGRAMS, TRAFFIC, missing_programs
from mpsched.bench.dataplane_rig import cpu_plan, program_rig
from mpsched.bench.dpcost_probes import Probes, count, per_packet
from mpsched.p4profiles import REDUCED
from mpsched.proc import cpulimit, prereqs
from mpsched.proc.cleanup import Registry, sweep
from mpsched.proc.veth import make_veths

log = logging.getLogger("mpsched.bench.dpcost")


@dataclass(frozen=True)
class Cost:
    """One program's cost per packet at the load (None: not counted)."""

    cpu_us: float
    field_writes: float | None
    table_applies: float | None
    conditions: float | None


def fmt(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.1f}"


def stage_costs(costs: dict[str, Cost]) -> dict[str, Cost]:
    """Per stage a profile leaves out (p4profiles.REDUCED, "lean" for all of them): the full
    program's cost minus the profile's (None where either was not counted)."""

    def minus(a: float | None, b: float | None) -> float | None:
        return None if a is None or b is None else a - b

    full = costs["full"]
    return {
        name: Cost(
            full.cpu_us - c.cpu_us,
            minus(full.field_writes, c.field_writes),
            minus(full.table_applies, c.table_applies),
            minus(full.conditions, c.conditions),
        )
        for name, c in costs.items()
        if name in {p.name for p in REDUCED}
    }


def table(title: str, costs: dict[str, Cost]) -> list[str]:
    lines = [
        title,
        f"{'program':15s} {'CPU us':>8s} {'field writes':>13s} {'table applies':>14s}"
        f" {'conditions':>11s}",
    ]
    for name, c in costs.items():
        lines.append(
            f"{name:15s} {c.cpu_us:8.1f} {fmt(c.field_writes):>13s}"
            f" {fmt(c.table_applies):>14s} {fmt(c.conditions):>11s}"
        )
    return lines


# What the full program costs per packet in each role, as key=value lines: an edge switch
# receiving a tagged packet from a path (its egress edge's work: measurement, tag removal,
# routing) and a transit switch forwarding a tag of another pair of edges
# (docs/fabric-dataplane.md).
ROLES = {"edge": "tagged", "transit": "transit"}
# Traffic measured without --traffic: UDP (every program) and each role's.
DEFAULT_TRAFFIC = ("udp", *ROLES.values())


def role_lines(costs: dict[str, dict[str, Cost]]) -> list[str]:
    """`dpcost_<role>_us=`, `_table_applies=`, `_conditions=`, `_field_writes=` of the full
    program for each role of ROLES whose traffic was measured (n/a: not counted)."""
    lines = []
    for role, traffic in ROLES.items():
        c = costs.get(traffic, {}).get("full")
        if c is None:
            continue
        lines += [
            f"dpcost_{role}_us={c.cpu_us:.1f}",
            f"dpcost_{role}_table_applies={fmt(c.table_applies)}",
            f"dpcost_{role}_conditions={fmt(c.conditions)}",
            f"dpcost_{role}_field_writes={fmt(c.field_writes)}",
        ]
    return lines


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="mpsched bench dpcost",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--rate", type=float, default=10_000.0, help="offered load, pkt/s")
    p.add_argument("--seconds", type=float, default=3.0, help="measurement window")
    p.add_argument(
        "--profiles",
        action="store_true",
        help="also the compile-time profiles (`make p4 P4_PROFILE=...`) and the cost per stage",
    )
    p.add_argument(
        "--traffic",
        action="append",
        choices=TRAFFIC,
        help="kind of test traffic, repeatable (default: udp, tagged and transit; with "
        "--profiles: all)",
    )
    p.add_argument(
        "--mode",
        action="append",
        choices=MODES,
        help="also the full program with class 0 in this path-choice mode, flowlet gap 0: "
        "every packet a new flowlet (repeatable; udp traffic; the default state is hash)",
    )
    cpulimit.add_option(p)
    return p


def main(argv: list[str] | None = None) -> int:
    p = _parser()
    args = p.parse_args(argv)
    if args.rate <= 0 or args.seconds <= 0:
        p.error("--rate and --seconds must be > 0")
    logging.basicConfig(level=logging.WARNING, format="%(name)s: %(message)s")
    problems = prereqs.missing("root", "simple_switch_grpc")
    problems += missing_programs(profiles=args.profiles)
    if shutil.which("perf") is None:
        problems.append("perf: install it with `make setup` (Debian package linux-perf)")
    if problems:
        print("bench-dpcost: missing prerequisites:\n  " + "\n  ".join(problems), file=sys.stderr)
        return 2
    refused = cpulimit.confine(args.cpu_limit, "bench-dpcost")
    if refused is not None:
        return refused
    for line in sweep():
        log.info("cleaned up: %s", line)
    measured = Measured(args)
    registry = Registry()
    try:
        measured.run(registry)
    except KeyboardInterrupt:
        print("bench-dpcost: interrupted; cleaned up", file=sys.stderr)
        return 130
    finally:
        registry.close()
    measured.print()
    return 0


class Measured:
    """The costs of one run: per kind of traffic and program, and of the full program per
    extra mode (`--mode`); the events not counted and why."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        profiles = args.profiles
        self.traffics = args.traffic or (list(TRAFFIC) if profiles else list(DEFAULT_TRAFFIC))
        self.programs = [name for name, _ in PROGRAMS]
        if profiles:
            self.programs += [p.name for p in REDUCED]
        self.costs: dict[str, dict[str, Cost]] = {t: {} for t in self.traffics}
        self.mode_costs: dict[str, Cost] = {}
        self.not_counted: dict[str, str] = {}

    def run(self, registry: Registry) -> None:
        """Each program with each kind of traffic, then the full program in each mode."""
        args = self.args
        binary = shutil.which("simple_switch_grpc") or "simple_switch_grpc"
        cpus = cpu_plan(True)
        (sw1, t1), (sw2, t2) = make_veths(registry, 2)
        ports = {1: sw1, 2: sw2}
        with tempfile.TemporaryDirectory() as tmp, Probes(binary) as probes:
            self.not_counted = probes.not_counted

            def cost(name: str, traffic: str, mode: str = "hash") -> Cost:
                with program_rig(
                    name, ports, t1, t2, args.seconds, cpus, Path(tmp), registry, traffic, mode
                ) as rig:
                    timed = rig.trial(args.rate)  # without probes: they cost time
                    counts = count(rig, args.rate, probes.events)
                return Cost(
                    timed.cpu_us_per_packet,
                    per_packet(counts, "field_writes"),
                    per_packet(counts, "table_applies"),
                    per_packet(counts, "conditions"),
                )

            for traffic in self.traffics:
                for name in self.programs:
                    if traffic in ("tagged", "transit") and name in ("minimal", "ipv4"):
                        continue  # no path tags in these
                    self.costs[traffic][name] = cost(name, traffic)
            for mode in args.mode or []:
                self.mode_costs[mode] = cost("full", "udp", mode)

    def print(self) -> None:
        """The tables, what was not counted, and the key=value lines."""
        rate = self.args.rate
        for traffic, by_program in self.costs.items():
            print("\n".join(table(f"per packet at {rate:.0f} pkt/s offered ({traffic}):",
                                   by_program)))
            if self.args.profiles and "full" in by_program:
                print("\n".join(table(f"cost of each stage, full minus the profile ({traffic}):",
                                       stage_costs(by_program))))
        if self.mode_costs:
            print("\n".join(table(f"full program by mode, every packet a new flowlet, at "
                                   f"{rate:.0f} pkt/s offered (udp):", self.mode_costs)))
        for event, why in self.not_counted.items():
            print(f"not counted: {event} ({why})")
        for line in role_lines(self.costs):
            print(line)
        udp = self.costs.get("udp", {})
        if "full" in udp and "ipv4" in udp and udp["ipv4"].cpu_us > 0:
            print(f"switch_us_per_pkt_ratio_ipv4={udp['full'].cpu_us / udp['ipv4'].cpu_us:.3f}")


if __name__ == "__main__":
    sys.exit(main())
