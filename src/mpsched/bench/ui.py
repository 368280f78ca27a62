"""`make bench-ui`: the operator dashboard (`/ui/`) in headless Chromium, load time and lag.

What runs: one BMv2 `simple_switch_grpc` with the 4-path program, programmed by the real
`Controller` (estimators, scheduler, control loop every 100 ms, P4Runtime agent), its REST API
(`RestApi` on the waitress `RestServer`, as the os-ken app hosts it) and the page served by
that API, driven by Selenium through Debian's chromium and chromedriver. A feeder injects
synthetic telemetry for the 4 paths as the switches' digests would (a path report and an RTT
report per path every 10 ms, values changing all the time), as `make bench-control` does, so
the policy decides, writes and logs decisions live.

The 10 minutes of history: every path's history (the fed direction) holds 600 snapshots (one per
second, the page's limit). They are the estimator's own snapshots (`PathEstimator.snapshot`,
so the same fields and JSON size as in a real run), dated back one per second with their
numbers varied; waiting 10 real minutes for them would make this benchmark 10 minutes long and
measure nothing more: the page's cost is in the size of what it fetches and draws, which is the
real one. Everything after that (the controller, its REST server, the switch, the decisions, the
telemetry the page sees change) is live.

- `ui_load_ms`: navigation start until the page's first full render (every view drawn from
  the first complete poll, 600 s of history for each of the 4 paths included), median of 3
  loads (target ≤ 1000).
- `ui_update_lag_ms`: the feeder switches path 1's bytes in flight to a new value; from the
  moment the controller's estimator holds it until the page shows it (a MutationObserver in the
  page notes the time; one clock: same machine), the worst of 10 changes at random phases
  against the page's 1 s poll (target ≤ 1500; p50 printed too).
- the page's JS heap after the run (Chrome DevTools `Performance.getMetrics`).

`--fabric LxS` (`make bench-ui FABRIC=8x4`) measures the fabric view instead, on a leaf-spine
of BMv2s (src/mpsched/bench/ui_fabric.py).

The browser is src/mpsched/testing/browser.py's, the controller and its feeder
src/mpsched/bench/ui_feed.py's.
"""

from __future__ import annotations

import argparse
import logging
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from mpsched import stats
from mpsched.bench import ui_fabric
from mpsched.bench.ui_fabric import parse_shape
from mpsched.bench.ui_feed import HISTORY_S, N_PATHS, Feeder, backfill, start_controller
from mpsched.proc import cpulimit, prereqs
from mpsched.testing.browser import BROWSER_PREREQS, console_errors, start_browser, wait_rendered

log = logging.getLogger("mpsched.bench.ui")

LOADS = 3
CHANGES = 10


def measure_loads(driver: Any, url: str) -> list[float]:
    """LOADS page loads: each one's first full render in ms."""
    loads = []
    for i in range(LOADS):
        driver.get(url)
        loads.append(wait_rendered(driver))
        held = driver.execute_script(
            "return Object.values(state.series).flatMap(Object.values)"
            ".reduce((n, s) => n + s.length, 0)"
        )
        print(f"load {i + 1}: first full render {loads[-1]:.0f} ms, {held} snapshots held")
    errors = console_errors(driver)
    if errors:
        raise RuntimeError(f"console errors: {errors}")
    return loads


# The value the lag is measured on, as the page shows it: path 1's bytes in flight (two edges:
# its drawing's data-inflight; the fabric's: ui_fabric.WATCHED_JS), and the element it is in.
WATCHED_JS = "(() => { const g = document.querySelector('#topology g[data-path=\"1\"]');" \
    " return g && g.dataset.inflight; })()"


def measure_lags(driver: Any, feeder: Feeder, watched: tuple[str, str] = (WATCHED_JS, "topology")
                 ) -> list[float]:
    """CHANGES marked values fed at random times: how long each took to show, in ms."""
    value_js, where = watched
    driver.execute_script(
        """
        window.__seen = {};
        new MutationObserver(() => {
          const v = VALUE;
          if (v && !(v in window.__seen)) window.__seen[v] = Date.now();
        }).observe(document.getElementById(arguments[0]),
                   {childList: true, subtree: true, characterData: true});
        """.replace("VALUE", value_js),
        where,
    )
    rng = random.Random(3)
    lags = []
    for i in range(CHANGES):
        time.sleep(rng.uniform(0.3, 1.3))
        marker = 2 * (500_000 + i)  # even: the feeder's own values are odd
        at = feeder.mark(marker)
        deadline = time.monotonic() + 10
        seen = None
        while seen is None and time.monotonic() < deadline:
            time.sleep(0.05)
            seen = driver.execute_script(f"return window.__seen['{marker}'] || null")
        if seen is None:
            raise RuntimeError(f"the page never showed in-flight bytes {marker}")
        lags.append(seen - at * 1000)
        print(f"change {i + 1}: shown after {lags[-1]:.0f} ms")
    return lags


def page_metrics(driver: Any) -> dict[str, float]:
    """The page's JS heap (MB) and DOM nodes (Chrome DevTools Performance metrics)."""
    driver.execute_cdp_cmd("Performance.enable", {})
    reply = driver.execute_cdp_cmd("Performance.getMetrics", {})
    metrics = {m["name"]: m["value"] for m in reply["metrics"]}
    return {
        "heap_used_mb": metrics["JSHeapUsedSize"] / 1e6,
        "heap_total_mb": metrics["JSHeapTotalSize"] / 1e6,
        "dom_nodes": metrics.get("Nodes", 0),
    }


def run(args: argparse.Namespace, workdir: Path, registry: Any) -> dict[str, float]:
    from mpsched.controller.northbound.rest import RestApi
    from mpsched.controller.northbound.server import RestServer
    from mpsched.proc.bmv2 import free_port

    watched = (WATCHED_JS, "topology")
    if args.fabric:
        switches, ctl = ui_fabric.start_fabric(workdir, registry, *args.fabric)
        feeder: Feeder = ui_fabric.FabricFeeder(ctl, N_PATHS, seed=1)
        watched = (ui_fabric.WATCHED_JS, "paths")
    else:
        sw, ctl = start_controller(workdir, registry)
        switches, feeder = [sw], Feeder(ctl, N_PATHS, seed=1)
    server = driver = None
    try:
        for agent in ctl.agents:
            if not agent.wait_ready(60):
                raise RuntimeError(f"{agent.sw.name} not ready: {agent.status}")
        feeder.start()
        server = RestServer(RestApi(ctl), "127.0.0.1", free_port())
        server.start()
        url = "http://{}:{}/ui/".format(*server.address)
        time.sleep(2.0)  # estimators filled, decisions logged
        snapshots = backfill(ctl, HISTORY_S, seed=2)
        shape = "a {}x{} leaf-spine".format(*args.fabric) if args.fabric else "two edges"
        print(f"controller: {shape}, {N_PATHS} paths, on BMv2, {snapshots} history snapshots,"
              f" {url}")
        driver = start_browser()
        loads = measure_loads(driver, url)
        lags = measure_lags(driver, feeder, watched)
        return {
            "load_ms": stats.median(loads),
            "lag_max_ms": max(lags),
            "lag_p50_ms": stats.median(lags),
            **page_metrics(driver),
        }
    finally:
        if driver is not None:
            driver.quit()
        feeder.halt.set()
        if server is not None:
            server.stop()
        ctl.stop()
        for sw in switches:
            sw.stop()


def _shape(text: str) -> tuple[int, int]:

    try:
        return parse_shape(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="mpsched bench ui",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--fabric", metavar="LxS", type=_shape, default=None,
                        help="a leaf-spine of L leaves and S spines, a BMv2 each, instead of"
                             " two edges: the page's fabric view (src/mpsched/bench/ui_fabric.py),"
                             " e.g. 8x4")
    cpulimit.add_option(parser)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(name)s: %(message)s")
    from mpsched.bench.control import artifacts_for
    from mpsched.proc.cleanup import Registry, sweep

    problems = prereqs.missing("simple_switch_grpc", *BROWSER_PREREQS)
    problems += [f"{m}: missing; run `make p4`" for m in artifacts_for(N_PATHS).missing()]
    if problems:
        print("bench-ui: missing prerequisites:\n  " + "\n  ".join(problems), file=sys.stderr)
        return 2
    refused = cpulimit.confine(args.cpu_limit, "bench-ui")
    if refused is not None:
        return refused
    for line in sweep():
        log.info("cleaned up: %s", line)
    registry = Registry()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            result = run(args, Path(tmp), registry)
    except KeyboardInterrupt:
        print("bench-ui: interrupted; cleaned up", file=sys.stderr)
        return 130
    except (RuntimeError, TimeoutError) as error:
        print(f"bench-ui: failed: {error}", file=sys.stderr)
        return 1
    finally:
        registry.close()
    print(
        f"page JS heap: {result['heap_used_mb']:.1f} MB used of {result['heap_total_mb']:.1f} MB,"
        f" {result['dom_nodes']:.0f} DOM nodes (detached ones not yet collected included);"
        f" update lag p50 {result['lag_p50_ms']:.0f} ms"
    )
    print(f"ui_load_ms={result['load_ms']:.0f}")
    print(f"ui_update_lag_ms={result['lag_max_ms']:.0f}")
    print(f"ui_js_heap_mb={result['heap_used_mb']:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
