"""`make demo FABRIC=1`: a leaf-spine fabric under all-to-all traffic on the real stack.

One run of scenarios/fabric-leaf-spine.yaml (4 leaves x 2 spines: six BMv2 switches, eight
emulated links, a host behind every leaf) under the congestion-aware policy (`--policy`),
through the experiment runner (src/mpsched/lab/runner.py): the controller drives every switch,
each host sends open-loop web-search flows to the others. The dashboard's URL is printed as
soon as the controller answers; at the end, per ordered pair of leaves, goodput, flows and
mean FCT of the short ones (src/mpsched/lab/fabric_analysis.py). With headless Chromium installed,
screenshots of the dashboard's fabric view (its first pair picked) are taken halfway through
the traffic, at 1400 and 1024 px (`--screenshot`, default SCREENSHOT: the docs' own).
Everything is torn down, also on Ctrl-C or a switch crash; the run's files stay in
build/results/demo-fabric/.
"""

from __future__ import annotations

import argparse
import dataclasses
import logging
import math
import shutil
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from mpsched.lab.scenario import POLICIES
from mpsched.proc.layout import REPO_ROOT, build_dir
from mpsched.testing.browser import screenshot_later, screenshot_path

log = logging.getLogger("mpsched.demo")

SCENARIO = REPO_ROOT / "scenarios" / "fabric-leaf-spine.yaml"
SECONDS = 40.0  # the run's time: arrivals stop 10 s before its end (the scenario's drain_s)
SCREENSHOT = REPO_ROOT / "docs" / "dashboard-fabric.png"  # and dashboard-fabric-1024.png
COLUMNS = (("goodput_mbps", "goodput Mbit/s", "{:.2f}"), ("flows", "flows", "{:.0f}"),
           ("fct_lt100k_mean_s", "FCT < 100 kB, s", "{:.3f}"))


def pair_lines(pairs: Mapping[str, Mapping[str, float]], total_mbps: float) -> list[str]:
    """The per-pair table of the demo's end (a missing value as '-')."""
    lines = [f"{'pair':14s}" + "".join(f"{title:>17s}" for _, title, _ in COLUMNS)]
    for pair in sorted(pairs):
        cells = []
        for key, _, fmt in COLUMNS:
            v = pairs[pair].get(key, math.nan)
            if key == "flows":  # completed flows over the size buckets
                v = sum(pairs[pair].get(f"flows_{b}", 0.0) for b in ("lt100k", "100k_1m", "gt1m"))
            cells.append(fmt.format(v) if math.isfinite(v) else "-")
        lines.append(f"{pair:14s}" + "".join(f"{c:>17s}" for c in cells))
    lines.append(f"{'all pairs':14s}{total_mbps:17.2f}")
    return lines


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The fabric demo's options (on `mpsched demo --fabric`)."""
    parser.add_argument("--policy", default="ca", choices=POLICIES,
                        help="with --fabric: the policy of every pair (default: %(default)s)")


def _run_class(screenshot: Path | None) -> type:
    from mpsched.lab.runner import Run

    class DemoRun(Run):
        """The runner's run, printing the dashboard's URL once the controller answers and
        taking the screenshot halfway through the measured time."""

        def _start_controller(self) -> Any:
            rest = super()._start_controller()
            print(f"demo: the dashboard is live at {rest.base}/ui/ while the demo runs",
                  flush=True)
            return rest

        def _measure(self, rest: Any, t0: float, progress: Any) -> None:
            half = 0.5 * self.scenario.duration_s
            shot = screenshot_later(rest, screenshot, half) if screenshot else None
            super()._measure(rest, t0, progress)
            if shot is not None:
                shot.join(timeout=30)  # a browser slow to start under load: not for long

    return DemoRun


def execute(args: argparse.Namespace) -> int:
    """Run the fabric demo (`args.seconds` of traffic, default SECONDS; `args.policy`)."""
    from mpsched.lab import analysis
    from mpsched.lab.experiment import _prerequisites
    from mpsched.lab.runner import RunError
    from mpsched.lab.scenario import load
    from mpsched.proc.cleanup import interrupt_on_signals

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")
    problems = _prerequisites(None)
    if problems:
        print("demo: missing prerequisites:\n  " + "\n  ".join(problems), file=sys.stderr)
        return 2
    seconds = SECONDS if args.seconds is None else args.seconds
    sc = dataclasses.replace(load(SCENARIO, fabric=True), duration_s=seconds)
    out = build_dir() / "results" / "demo-fabric"
    shutil.rmtree(out, ignore_errors=True)
    interrupt_on_signals()
    log.info("%s under %s: %gs of all-to-all web-search flows", sc.name, args.policy, seconds)
    try:
        run = _run_class(screenshot_path(args.screenshot, SCREENSHOT))(
            sc, args.policy, 0, out, args.p4rt_plaintext)
        raw = run.execute(lambda m: log.info("%s", m))
        result = analysis.analyse(raw)
    except KeyboardInterrupt:
        print("demo: interrupted; everything was torn down", file=sys.stderr)
        return 130
    except (RunError, RuntimeError, OSError, ValueError) as error:
        print(f"demo: failed: {error} (files in {out})", file=sys.stderr)
        return 1
    print()
    print("\n".join(pair_lines(result.pairs, result.metrics.get("goodput_mbps", math.nan))))
    if result.cpu_bound:
        print("demo: the machine was CPU-bound during the run: the figures measure it",
              file=sys.stderr)
    return 0
