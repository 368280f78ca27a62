"""`mpsched topo`: bring the two-path BMv2 testbed up, print its netcfg, wait for Ctrl-C."""

from __future__ import annotations

import argparse
import signal
import sys
import threading


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="mpsched topo",
        description="Start h1 - s1 =(paths)= s2 - h2 with BMv2 switches and HTB-shaped paths, "
        "write the network description for the controller, and wait; Ctrl-C tears it down.",
    )
    parser.add_argument(
        "--rates",
        default="10,5",
        help="path rates in Mbit/s, comma separated, 1-4 paths " "(default: %(default)s)",
    )
    parser.add_argument("--cli", action="store_true", help="open the Mininet CLI")
    args = parser.parse_args(argv)
    from mpsched import toolchain

    problems = toolchain.missing("root", "simple_switch_grpc", "mininet", "ethtool")
    if problems:
        print("topo: missing prerequisites:\n  " + "\n  ".join(problems), file=sys.stderr)
        return 2
    try:
        rates = tuple(float(r) for r in args.rates.split(","))
    except ValueError:
        print(f"topo: --rates: not a list of numbers: {args.rates!r}", file=sys.stderr)
        return 2

    from mpsched.topo.testbed import Testbed, TopoSpec

    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    with Testbed(TopoSpec.from_rates(rates)) as bed:
        print(f"netcfg: {bed.netcfg_path}", flush=True)
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
