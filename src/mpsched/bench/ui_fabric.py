"""`make bench-ui FABRIC=8x4` (`mpsched bench ui --fabric 8x4`): the dashboard's
fabric view under the same measurements as the two-edge one (src/mpsched/bench/ui.py).

What runs: one BMv2 `simple_switch_grpc` per switch of a leaf-spine of L leaves and S spines
(no ports: the tables are written, nothing forwards), programmed by the real `Controller`
with its fabric routing, its REST API and the page. A feeder injects synthetic telemetry for
every ordered pair of leaves and every path, as the egress leaves' path reports and the
ingress leaves' RTT reports would, every `FEED_INTERVAL_S` (a fabric of 8 leaves has 56 pairs
of 4 paths: 224 directions of path telemetry), so the policies decide per pair live. Every
direction's history is backfilled with 10 minutes of snapshots as in ui.py.

The page in a fabric polls GET /links and GET /pairs and the picked pair's direction of the
telemetry (the first pair, `MARKED`: leaf1->leaf2) and its decisions. `ui_update_lag_ms`
marks that pair's path 1's bytes in flight and waits for the paths table to show it.
"""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

from mpsched.bench.ui_feed import N_PATHS, Feeder, bench_settings
from mpsched.controller.model.reports import PathReport, RttReport

FEED_INTERVAL_S = 0.1  # every pair's every path this often (ui.py's two edges: 10 ms)
MARKED = ("leaf1", "leaf2")  # the pair the lag is measured on: the page's first pair
# the in-flight cell of path 1 in the paths table (the picked pair's direction)
WATCHED_JS = (
    "(() => { const r = document.querySelector('#paths tbody tr[data-key=\"1\"]');"
    " return r && r.cells[8].textContent; })()"
)


def parse_shape(text: str) -> tuple[int, int]:
    """"8x4" -> (8 leaves, 4 spines)."""
    m = re.fullmatch(r"(\d+)x(\d+)", text)
    if not m or int(m[1]) < 2 or int(m[2]) < 1:
        raise ValueError(f"--fabric: LEAVESxSPINES, e.g. 8x4, at least 2 leaves, got {text!r}")
    return int(m[1]), int(m[2])


def section(leaves: int, spines: int) -> dict:
    return {"leaf_spine": {"leaves": leaves, "spines": spines, "hosts_per_leaf": 1,
                           "link": {"rate_mbps": 10, "delay_ms": 1}}}


class FabricFeeder(Feeder):
    """ui.Feeder's marking on pair `MARKED`'s path 1; reports for every pair of edges."""

    def run(self) -> None:
        net = self.ctl.net
        edges = [s for s in net.switches if net.is_edge(s)]
        ids = {s.name: net.edge_id(s) for s in edges}
        pairs = [(a.name, b.name) for a in edges for b in edges if a is not b]
        seq: dict[tuple[str, str, int], int] = {}
        t_us = 1_000_000
        while not self.halt.wait(FEED_INTERVAL_S):
            now = time.time()
            t_us += int(FEED_INTERVAL_S * 1e6)
            for src, dst in pairs:
                for p in range(1, self.n + 1):
                    key = (src, dst, p)
                    seq[key] = seq.get(key, 0) + 50
                    rtt_us = int(self.rng.uniform(5_000, 80_000))
                    marked = (src, dst) == MARKED
                    self.ctl.on_report(PathReport(
                        dst, p, seq[key], t_us - rtt_us // 2 + 7_000_000, t_us, seq[key],
                        seq[key] * 1200, self.rng.randrange(0, 3), 0,
                        self.rng.randrange(0, 40), now, src_edge=ids[src]))
                    inflight = self.inflight(p) if marked else self.rng.randrange(0, 99) * 2 + 1
                    self.ctl.on_rtt(RttReport(src, p, ids[dst], rtt_us, 0, inflight, now))
                    if marked:
                        self.fed(p)


def start_fabric(workdir: Path, registry: Any, leaves: int, spines: int
                 ) -> tuple[list[Any], Any]:
    """A BMv2 per switch of the leaf-spine and the controller on them: (switches, controller),
    all started."""
    from mpsched.bench.control import artifacts_for
    from mpsched.controller.app.core import Controller
    from mpsched.fabric.files import parse_fabric
    from mpsched.fabric.netdesc import describe
    from mpsched.p4rt.p4info import P4Info
    from mpsched.p4rt.pipeline import Pipeline
    from mpsched.proc.bmv2 import Bmv2Switch

    art = artifacts_for(N_PATHS)
    sec = section(leaves, spines)
    fabric = parse_fabric(sec)
    switches: list[Bmv2Switch] = []
    try:
        for device_id, sw in enumerate(fabric.switches, start=1):
            switches.append(Bmv2Switch(name=f"bench-ui-{sw.name}", device_id=device_id,
                                       ports={}, log_dir=workdir, registry=registry))
            switches[-1].start()
        ctl = Controller(
            describe(sec, fabric, lambda i: switches[i - 1].grpc_address),
            Pipeline(P4Info.from_file(art.p4info)),
            str(art.bmv2_json),
            bench_settings(),
        )
        ctl.start()
    except BaseException:
        for sw in switches:
            sw.stop()
        raise
    return switches, ctl
