"""`mpsched bench NAME [ARGS...]`: every benchmark under one command.

The benchmarks are listed here once (`BENCHES`: name, one line, module); `mpsched bench --list`
prints them. `mpsched bench NAME ARGS...` imports only that benchmark's module and hands ARGS,
untouched, to its `main(argv)`: each benchmark keeps its own options and `--help`
(`mpsched bench NAME --help`), and `python -m mpsched.bench.<module>` runs the same `main`.
Every `make bench-*` target (and `make soak`) runs its benchmark through this command.

The helper programs the benchmarks start inside the testbed's namespaces (framecap, pktsend,
udpprobe) are not benchmarks and are not listed.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from types import ModuleType

PROG = "mpsched bench"


@dataclass(frozen=True)
class Bench:
    """A benchmark: `mpsched bench <name>` runs `<module>.main(argv)`."""

    name: str
    help: str
    module: str

    def load(self) -> ModuleType:
        return importlib.import_module(self.module)

    @property
    def prog(self) -> str:
        """The name its parser gives itself in usage lines: `mpsched bench <name>`."""
        return f"{PROG} {self.name}"


BENCHES = (
    Bench("links", "link emulator accuracy and CPU on a veth pair", "mpsched.bench.links"),
    Bench("dpcost", "per packet: CPU time, field writes, table applies, conditions",
          "mpsched.bench.dpcost"),
    Bench("telemetry", "path measurements against known delay, loss and rate; failover",
          "mpsched.bench.telemetry"),
    Bench("dataplane", "maximum forwarding rate, full program against reference programs",
          "mpsched.bench.dataplane"),
    Bench("scale", "the control plane on leaf-spine fabrics of 8 to 64 leaves",
          "mpsched.bench.scale"),
    Bench("control", "control-loop latency with 2, 4 and 8 paths", "mpsched.bench.control"),
    Bench("sched", "every policy on llhd-1-manyflows, 3 runs each", "mpsched.bench.sched"),
    Bench("adaptive", "adaptive against the best fixed policy on five scenarios",
          "mpsched.bench.adaptive"),
    Bench("fct", "ca against ECMP and LetFlow on asymmetric paths: flow completion times",
          "mpsched.bench.fct"),
    Bench("fabric", "ca and the papers' -ca variants on an asymmetric leaf-spine; failover",
          "mpsched.bench.fabric"),
    Bench("fabric-failover", "only the failover phase of `fabric`, or its report",
          "mpsched.bench.fabric_failover"),
    Bench("fabric-mptcp", "MPTCP subflows steered against hashed on a leaf-spine",
          "mpsched.bench.fabric_mptcp"),
    Bench("mptcp", "one MPTCP connection, subflows hashed against pinned",
          "mpsched.bench.mptcp"),
    Bench("capacity", "how fast the testbed runs the papers' scenarios on this machine",
          "mpsched.bench.capacity"),
    Bench("reliability", "controller and switch restarts, takeover, malformed input, REST abuse",
          "mpsched.bench.reliability"),
    Bench("rest-abuse", "the REST abuse table against a running controller (--url)",
          "mpsched.testing.restabuse"),
    Bench("scenario-fuzz", "malformed scenario, fabric and network files through mpsched check",
          "mpsched.bench.scenario_fuzz"),
    Bench("ui", "the dashboard in headless Chromium: load time, update lag, JS heap",
          "mpsched.bench.ui"),
    Bench("soak", "policy changes, link flaps, a switch restart: does anything grow?",
          "mpsched.bench.soak"),
)
BY_NAME = {bench.name: bench for bench in BENCHES}


def listing() -> str:
    """`mpsched bench --list`: one benchmark a line, `name  help`, the help column aligned."""
    width = max(len(bench.name) for bench in BENCHES)
    return "\n".join(f"{bench.name:<{width}}  {bench.help}" for bench in BENCHES)


def build_parser() -> argparse.ArgumentParser:
    """The dispatch: a benchmark's name, then its own arguments (argparse.REMAINDER keeps them,
    `--help` included, for the benchmark's parser)."""
    p = argparse.ArgumentParser(
        prog=PROG,
        usage=f"{PROG} [-h] [--list] [NAME [ARGS ...]]",
        description="Run a benchmark: `mpsched bench NAME [ARGS...]` hands ARGS to the "
        "benchmark's own options (`mpsched bench NAME --help`).",
        epilog="`mpsched bench --list` lists the benchmarks; docs/benchmarks.md says what "
        "each runs and prints.",
    )
    p.add_argument("--list", action="store_true", dest="list_benches",
                   help="list the benchmarks, one line each, and exit")
    p.add_argument("bench", nargs="?", metavar="NAME", choices=sorted(BY_NAME),
                   help="the benchmark (see --list)")
    p.add_argument("bench_args", nargs=argparse.REMAINDER, metavar="ARGS",
                   help="the benchmark's own arguments")
    return p


def execute(args: argparse.Namespace) -> int:
    """Run the benchmark named (its exit status), or list them. A benchmark's usage error or
    `--help` ends in its parser's SystemExit, as under `python -m`."""
    if args.list_benches:
        print(listing())
        return 0
    if args.bench is None:  # a usage error, as argparse reports one (it cannot ask for this)
        build_parser().print_usage(sys.stderr)
        print(f"{PROG}: error: name a benchmark (`{PROG} --list` lists them)", file=sys.stderr)
        return 2
    return int(BY_NAME[args.bench].load().main(list(args.bench_args)))


def main(argv: Sequence[str] | None = None) -> int:
    return execute(build_parser().parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
