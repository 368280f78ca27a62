"""What an agent's counter poll reads of an edge's per-(peer edge, path) counters, and how
often (southbound/agent_telemetry.py).

An edge's `path_tx`, `path_rx` and `probe_skipped` (`PATH_COUNTERS`) are indexed by
`EDGE_PATH(edge, path)` (p4src/include/sizes.p4) and read whole, every cell of each, so a
fabric's reads grow with the square of its edges (64 edges of the 64-edge build: 975 cells an
edge, 62 400 a second at one read a second; docs/results/scale.md). All the edges together
read at most `COUNTER_BUDGET_CPS` cells a second by default: under it an edge reads them
less often than the poll interval (`path_poll_interval`). `path_samples` turns one read into
each path id's counts, summed over the peers (`GET /paths`).
"""

from __future__ import annotations

from collections.abc import Sequence

from mpsched.controller.telemetry.stats import Sample
from mpsched.p4rt.client import CounterValue
from mpsched.p4rt.pipeline import COUNTER_PROBE_SKIPPED, COUNTER_RX, COUNTER_TX, Pipeline

COUNTER_BUDGET_CPS = 20_000.0
PATH_COUNTERS = (COUNTER_TX, COUNTER_RX, COUNTER_PROBE_SKIPPED)


def path_poll_interval(poll_interval: float, edges: int, cells: int,
                       budget_cps: float | None) -> float:
    """Seconds between an edge's reads of its `cells` per-path counter cells: the poll
    interval, or longer where `edges` edges reading at it would exceed `budget_cps` cells a
    second together (None: no budget)."""
    if budget_cps is None or edges <= 0 or cells <= 0:
        return poll_interval
    return max(poll_interval, edges * cells / budget_cps)


def path_samples(pipeline: Pipeline, peers: Sequence[int], path_ids: Sequence[int],
                 tx: dict[int, CounterValue], rx: dict[int, CounterValue],
                 now: float) -> dict[int, Sample]:
    """Each path id's transmitted and received counts at `now`, summed over the peers' cells
    (the counters are per (peer edge, path))."""
    samples = {}
    for path_id in path_ids:
        cells = [pipeline.edge_path_index(e, path_id) for e in peers]
        t, r = _summed(tx, cells), _summed(rx, cells)
        samples[path_id] = Sample(now, t.packets, t.bytes, r.packets, r.bytes)
    return samples


def _summed(values: dict[int, CounterValue], cells: list[int]) -> CounterValue:
    """The cells' counters added up (a cell not read counts 0)."""
    found = [values[c] for c in cells if c in values]
    return CounterValue(sum(v.packets for v in found), sum(v.bytes for v in found))
