"""`python -m mpsched.traffic.gen <role> …`: the argument parser, the role table and `main`,
which runs one role and writes its report (also when the role fails or is stopped)."""

from __future__ import annotations

import argparse
import logging
import time
from collections.abc import Callable
from typing import Any

from mpsched.traffic import flowsizes
from mpsched.traffic.gen.base import Stopper, write_report
from mpsched.traffic.gen.openloop import role_files, role_plan, role_poisson
from mpsched.traffic.gen.sender import role_bulk, role_flows
from mpsched.traffic.gen.sink import role_sink
from mpsched.traffic.gen.udp import role_cbr, role_vbr

log = logging.getLogger(__name__)

ROLES: dict[str, Callable[[argparse.Namespace, Stopper], dict[str, Any]]] = {
    "cbr": role_cbr,
    "sink": role_sink,
    "bulk": role_bulk,
    "files": role_files,
    "poisson": role_poisson,
    "plan": role_plan,
    "flows": role_flows,
    "vbr": role_vbr,
}

MAX_CONCURRENT_HELP = "at most this many flows in progress, later arrivals wait (0: no bound)"

Subparsers = argparse._SubParsersAction  # the type add_subparsers() returns


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m mpsched.traffic.gen",
        description="Traffic roles run inside testbed hosts; each writes a JSON report to --out.",
    )
    sub = p.add_subparsers(dest="role", required=True)
    for add in (_sink, _bulk, _files, _poisson, _plan, _flows, _cbr, _vbr):
        add(sub)
    return p


def _common(sp: argparse.ArgumentParser, client: bool = True) -> None:
    sp.add_argument("--out", required=True, help="JSON report written at the end")
    sp.add_argument("--port", type=int, required=True, help="TCP port of the sink")
    sp.add_argument("--seconds", type=float, default=None, help="stop after this long")
    if client:
        sp.add_argument("--dst", required=True, help="sink address")
        sp.add_argument("--mptcp", action="store_true", help="use kernel MPTCP (proto 262)")
        sp.add_argument("--seed", type=int, default=0)


def _sink(sub: Subparsers) -> None:
    sp = sub.add_parser("sink", help="receiver")
    _common(sp, client=False)
    sp.add_argument("--bind", default="0.0.0.0")
    sp.add_argument("--udp-port", type=int, default=0, help="also count UDP on this port")
    sp.add_argument("--peers", action="store_true",
                    help="also sample the bytes received per peer address")


def _bulk(sub: Subparsers) -> None:
    sp = sub.add_parser("bulk", help="long-lived streams")
    _common(sp)
    sp.add_argument("--streams", type=int, default=1)


def _files(sub: Subparsers) -> None:
    sp = sub.add_parser("files", help="file transfers (FCT)")
    _common(sp)
    sp.add_argument("--sizes-kb", required=True, help="comma-separated sizes in kB")
    sp.add_argument("--count", type=int, required=True)
    sp.add_argument("--concurrency", type=int, default=0, help=MAX_CONCURRENT_HELP)
    sp.add_argument("--interarrival-ms", type=float, default=100.0, help="mean (exponential)")


def _poisson(sub: Subparsers) -> None:
    sp = sub.add_parser("poisson", help="open-loop Poisson arrivals, published size CDF (FCT)")
    _common(sp)
    sp.add_argument("--sizes", required=True, choices=sorted(flowsizes.DISTRIBUTIONS))
    sp.add_argument(
        "--rate-mbps",
        type=float,
        required=True,
        help="offered load: application Mbit/s (arrival rate = rate / mean size)",
    )
    sp.add_argument(
        "--max-kb",
        type=float,
        default=flowsizes.DEFAULT_MAX_BYTES / 1000,
        help="sizes above are censored to this (default: %(default)g)",
    )
    sp.add_argument("--scale", type=float, default=1.0, help="sizes are multiplied by this")
    sp.add_argument("--max-concurrent", type=int, default=0, help=MAX_CONCURRENT_HELP)
    sp.add_argument(
        "--arrivals-s",
        type=float,
        default=None,
        help="no arrivals after this many seconds (default: until --seconds)",
    )


def _plan(sub: Subparsers) -> None:
    sp = sub.add_parser("plan", help="open-loop flows of a schedule, each to its destination")
    _common(sp)
    sp.add_argument("--flows", required=True,
                    help="JSON file: {\"flows\": [[at_s, dst address, size bytes], ...]}")
    sp.add_argument("--max-concurrent", type=int, default=0, help=MAX_CONCURRENT_HELP)


def _flows(sub: Subparsers) -> None:
    sp = sub.add_parser("flows", help="many concurrent closed-loop flows")
    _common(sp)
    sp.add_argument("--flows", type=int, required=True)
    sp.add_argument("--size-kb", type=int, required=True)


def _cbr(sub: Subparsers) -> None:
    sp = sub.add_parser("cbr", help="constant-bit-rate UDP")
    _common(sp)
    sp.add_argument("--udp-port", type=int, required=True)
    sp.add_argument("--rate-mbps", type=float, required=True, help="IP-level rate")
    sp.add_argument("--size", type=int, default=1200, help="UDP payload bytes")
    sp.add_argument("--flows", type=int, default=1, help="flows (source ports), round robin")


def _vbr(sub: Subparsers) -> None:
    sp = sub.add_parser("vbr", help="Pareto on/off cross traffic with the papers' packet mix")
    _common(sp)
    sp.add_argument("--udp-port", type=int, required=True)
    sp.add_argument("--rate-mbps", type=float, required=True, help="long-run mean rate")
    sp.add_argument("--shape", type=float, default=1.5, help="Pareto shape of on/off periods")
    sp.add_argument("--on-ms", type=float, default=500.0, help="mean on period")
    sp.add_argument("--off-ms", type=float, default=500.0, help="mean off period")
    sp.add_argument("--tcp-pct", type=float, default=90.0, help="share of packets over TCP")


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(name)s: %(message)s")
    stop = Stopper(args.seconds)
    started = time.time()
    try:
        report = ROLES[args.role](args, stop)
    except Exception as exc:  # the runner reads the error from the report
        log.exception("role %s failed", args.role)
        report = {"role": args.role, "error": repr(exc)}
    report.update({"started": started, "ended": time.time()})
    write_report(args.out, report)
    return 1 if "error" in report else 0
