"""`mpsched topo`: bring the BMv2 testbed up, print its netcfg, wait for Ctrl-C."""

from __future__ import annotations

import argparse
import contextlib
import signal
import sys
import threading
from collections.abc import Callable
from functools import partial
from typing import Any

from mpsched.emu.linkem import LinkemError
from mpsched.proc import labtls


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mpsched topo",
        description="Start h1 - s1 =(paths)= s2 - h2 with BMv2 switches and emulated paths "
        "(rates only, or a scenario's topology and link parameters), or a fabric scenario's "
        "fabric (a BMv2 switch per fabric switch, hosts h<e>_<k> behind every edge, one "
        "emulated link per fabric link; docs/fabric-lab.md), over several servers when it has a "
        "cluster section (docs/scaling.md), write the network description for "
        "the controller, and wait; Ctrl-C tears it down. Schedules and workloads of a "
        "scenario are not started (use `mpsched run` for those). The switches serve "
        "P4Runtime over TLS with client certificates of a CA made for the testbed, in the "
        "description's directory and readable by this user only: run the controller as "
        "the same user.",
    )
    parser.add_argument(
        "--rates",
        default="10,5",
        help="path rates in Mbit/s, comma separated, 1-4 paths " "(default: %(default)s)",
    )
    parser.add_argument(
        "--scenario", default=None,
        help="take paths, hosts and cross-traffic hosts from this file, or its fabric"
    )
    parser.add_argument(
        "--backend",
        choices=("auto", "linkem", "netem"),
        default=None,
        help="link emulator (default: auto = netem if the kernel has it, else linkem)",
    )
    parser.add_argument("--cli", action="store_true", help="open the Mininet CLI")
    labtls.add_option(parser)
    return parser


def transport_line(tls: labtls.LabTls | None) -> str:
    """How the switches serve P4Runtime, for the operator."""
    if tls is None:
        return (f"p4runtime: plaintext ({labtls.PLAINTEXT_OPTION}): any local process can "
                "take the switches")
    return (f"p4runtime: TLS with client certificates in {tls.dir} (this user's only; "
            "removed at Ctrl-C)")


def main(argv: list[str] | None = None) -> int:
    return execute(build_parser().parse_args(argv))


def execute(args: argparse.Namespace) -> int:
    """Bring the testbed `args` (parsed by `build_parser`) describes up and wait."""
    from mpsched.proc import prereqs

    problems = prereqs.missing("root", "simple_switch_grpc", "mininet", "ethtool")
    if problems:
        print("topo: missing prerequisites:\n  " + "\n  ".join(problems), file=sys.stderr)
        return 2
    from mpsched.topo.testbed import Testbed, TopoSpec

    make_bed: Callable[[], Any]
    if args.scenario:
        from mpsched.lab.scenario import ScenarioError, load
        from mpsched.lab.testbeds import make_testbed
        from mpsched.proc.layout import build_dir
        from mpsched.validation import cli_error

        try:
            sc = load(args.scenario, backend=args.backend, fabric=True)
        except ScenarioError as exc:
            return cli_error(exc, "topo")
        make_bed = partial(make_testbed, sc, 0, build_dir() / "logs", args.p4rt_plaintext)
    else:
        try:
            rates = tuple(float(r) for r in args.rates.split(","))
        except ValueError:
            print(f"topo: --rates: not a list of numbers: {args.rates!r}", file=sys.stderr)
            return 2
        try:
            spec = TopoSpec.from_rates(rates, backend=args.backend or "auto")
        except ValueError as exc:
            print(f"topo: --rates: {exc}", file=sys.stderr)
            return 2
        make_bed = partial(Testbed, spec, args.p4rt_plaintext)

    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    try:
        bed = make_bed()
    except ValueError as exc:
        print(f"topo: {exc}", file=sys.stderr)
        return 2
    with contextlib.ExitStack() as stack:
        try:
            stack.enter_context(bed)
        except LinkemError as exc:  # e.g. not built: a message, not a traceback
            print(f"topo: {exc}", file=sys.stderr)
            return 2
        print(f"netcfg: {bed.netcfg_path}", flush=True)
        print(transport_line(bed.tls), flush=True)
        print(f"run: mpsched controller --netcfg {bed.netcfg_path}", flush=True)
        if args.cli:
            from mininet.cli import CLI

            CLI(bed.net)
        else:
            while not stop.wait(0.5):
                pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
