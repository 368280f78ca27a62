"""`make demo`: the walking skeleton end to end on the real stack.

Brings up h1 - s1 =(2 paths)= s2 - h2 on BMv2, starts the controller, runs
bulk TCP for a phase with weights 1:0 and a phase with 1:1 (set over REST),
prints per-path packets and rates and the goodput of each phase, and tears
everything down (also on Ctrl-C or a switch crash). `--fabric` (`make demo FABRIC=1`) runs
the fabric demo instead (src/mpsched/demo_fabric.py).
"""

from __future__ import annotations

import argparse
import logging
import math
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import requests

from mpsched import addressing as ap
from mpsched import demo_fabric
from mpsched.client.rest import RestClient
from mpsched.emu.params import LinkParams
from mpsched.emu.segment import MAX_PATHS
from mpsched.proc import labtls, prereqs
from mpsched.proc.cleanup import interrupt_on_signals
from mpsched.proc.controller import start_controller, stop_controller
from mpsched.proc.layout import REPO_ROOT, p4_artifacts
from mpsched.testing.browser import screenshot_later, screenshot_path
from mpsched.traffic.iperf import TrafficError, bulk_tcp

log = logging.getLogger("mpsched.demo")

# the dashboard's screenshots in the docs (also at 1024 px: dashboard-1024.png): `make demo`
# regenerates them
SCREENSHOT = REPO_ROOT / "docs" / "dashboard.png"
MAX_STREAMS = 128  # iperf3's most parallel streams (-P)


@dataclass
class PhaseResult:
    name: str
    weights: dict[int, int]
    packets: dict[int, int]
    path_mbps: dict[int, float]
    goodput_mbps: float


def tx_packets_bytes(rest: RestClient) -> dict[int, tuple[int, int]]:
    return {p["id"]: (p["packets"], p["bytes"]) for p in rest.get("/paths")}


def run_phase(
    bed,
    rest: RestClient,
    name: str,
    weights: dict[int, int],
    seconds: float,
    streams: int,
    poll: float,
    screenshot: Path | None = None,
) -> PhaseResult:
    for path_id, weight in weights.items():
        rest.set_weight(path_id, weight)
    time.sleep(2 * poll)
    before = tx_packets_bytes(rest)
    def switch_died() -> str | None:
        dead = bed.dead_switches()
        return f"switch(es) {', '.join(dead)} died during phase {name}" if dead else None

    shot = screenshot_later(rest, screenshot, 0.6 * seconds) if screenshot else None
    result = bulk_tcp(bed.host("h1"), bed.host("h2"), ap.H2_IP, seconds, streams,
                      abort=switch_died)
    if shot is not None:
        shot.join()
    time.sleep(2 * poll)
    after = tx_packets_bytes(rest)
    return PhaseResult(
        name,
        weights,
        {p: after[p][0] - before[p][0] for p in after},
        {p: 8 * (after[p][1] - before[p][1]) / seconds / 1e6 for p in after},
        result.goodput_mbps,
    )


def format_table(results: list[PhaseResult], rates: dict[int, float | None]) -> str:
    lines = [
        f"{'phase':<10} {'path':>4} {'rate':>9} {'weight':>6} {'packets':>10} "
        f"{'Mbit/s':>8} {'goodput Mbit/s':>15}"
    ]
    for res in results:
        for i, path_id in enumerate(sorted(res.packets)):
            rate = rates.get(path_id)
            goodput = f"{res.goodput_mbps:15.2f}" if i == 0 else ""
            lines.append(
                f"{res.name:<10} {path_id:>4} {(f'{rate:g}M' if rate else '-'):>9} "
                f"{res.weights.get(path_id, 0):>6} {res.packets[path_id]:>10} "
                f"{res.path_mbps[path_id]:>8.2f} {goodput}"
            )
    return "\n".join(lines)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mpsched demo",
        description="Walking-skeleton demo: two paths of different rates between two BMv2 "
        "switches, bulk TCP with path weights 1:0 then 1:1 set over REST; prints per-path "
        "packets and goodput per phase and tears everything down.",
    )
    parser.add_argument(
        "--seconds", type=float, default=None,
        help="traffic time per phase (default: 20; with --fabric the run's time, default: "
        f"{demo_fabric.SECONDS:g})",
    )
    parser.add_argument(
        "--streams",
        type=int,
        default=8,
        help=f"parallel TCP streams, hashed over the paths (1..{MAX_STREAMS}; default: "
        "%(default)s)",
    )
    parser.add_argument(
        "--rates",
        default="10,5",
        help=f"path rates in Mbit/s, comma separated, 1..{MAX_PATHS} paths (default: "
        "%(default)s)",
    )
    parser.add_argument(
        "--fabric",
        action="store_true",
        help="instead: a 4x2 leaf-spine fabric under all-to-all web-search flows for --seconds, "
        "the dashboard's URL, per-pair goodput at the end (src/mpsched/demo_fabric.py)",
    )
    demo_fabric.add_arguments(parser)
    labtls.add_option(parser)
    parser.add_argument(
        "--screenshot",
        default=None,
        help="screenshots of the dashboard during the last phase (with --fabric: halfway "
        "through the run, the fabric view) go here, at 1400 px wide, and at 1024 px beside it "
        "(NAME-1024.png), if headless Chromium is installed; '' for none (default: the "
        f"docs' {SCREENSHOT.name}; with --fabric: {demo_fabric.SCREENSHOT.name})",
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    return execute(build_parser().parse_args(argv))


def check_args(args: argparse.Namespace) -> tuple[float, ...]:
    """The path rates of `--rates`; ValueError naming the first option out of range. Checked
    before anything is started or removed."""
    if args.seconds is not None and not 0 < args.seconds < math.inf:
        raise ValueError(f"--seconds: must be > 0, got {args.seconds:g}")
    if not 1 <= args.streams <= MAX_STREAMS:
        raise ValueError(f"--streams: must be 1..{MAX_STREAMS}, got {args.streams}")
    if args.fabric:
        return ()
    try:
        rates = tuple(float(r) for r in args.rates.split(","))
    except ValueError:
        raise ValueError(f"--rates: not a list of numbers: {args.rates!r}") from None
    if not 1 <= len(rates) <= MAX_PATHS:
        raise ValueError(f"--rates: 1..{MAX_PATHS} paths, got {len(rates)}")
    for rate in rates:
        try:
            LinkParams(rate_mbps=rate)
        except ValueError as error:
            raise ValueError(f"--rates: {error}") from None
    return rates


def execute(args: argparse.Namespace) -> int:
    """Run the demo `args` (parsed by `build_parser`) describes."""
    try:
        rates = check_args(args)
    except ValueError as error:
        print(f"demo: {error}", file=sys.stderr)
        return 2
    if args.fabric:
        return demo_fabric.execute(args)
    if args.seconds is None:
        args.seconds = 20.0
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")

    problems = prereqs.missing(
        "root", "p4c", "simple_switch_grpc", "mininet", "iperf3", "ethtool"
    )
    art = p4_artifacts()
    problems += [f"{p}: missing; run `make p4`" for p in art.missing()]
    if problems:
        print("demo: missing prerequisites:\n  " + "\n  ".join(problems), file=sys.stderr)
        return 2

    from mpsched.topo.testbed import Testbed, TopoSpec

    interrupt_on_signals()
    poll = 0.5
    controller = None
    try:
        with Testbed(TopoSpec.from_rates(rates), args.p4rt_plaintext) as bed:
            controller, rest = start_controller(
                bed.netcfg_path, bed.spec.log_dir / "controller.log", bed.registry, poll
            )
            ids = sorted(p["id"] for p in rest.get("/paths"))
            print(f"demo: the dashboard is live at {rest.base}/ui/ while the demo runs",
                  flush=True)
            phases = [
                ("1:0", {p: (1 if p == ids[0] else 0) for p in ids}),
                ("1:1", dict.fromkeys(ids, 1)),
            ]
            results = []
            for i, (name, weights) in enumerate(phases):
                log.info("phase %s: %gs of bulk TCP, %d streams", name, args.seconds, args.streams)
                last = i == len(phases) - 1
                shot = screenshot_path(args.screenshot, SCREENSHOT) if last else None
                results.append(
                    run_phase(bed, rest, name, weights, args.seconds, args.streams, poll, shot)
                )
            stop_controller(controller, bed.registry)
        print()
        print(format_table(results, dict(enumerate(rates, start=1))))
        return 0
    except KeyboardInterrupt:
        print("demo: interrupted; everything was torn down", file=sys.stderr)
        return 130
    except (TrafficError, requests.RequestException, RuntimeError) as error:
        print(f"demo: failed: {error} (logs in build/logs/)", file=sys.stderr)
        return 1
    finally:
        if controller is not None and controller.poll() is None:
            controller.kill()


if __name__ == "__main__":
    sys.exit(main())
