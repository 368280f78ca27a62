"""Entries written for pairs of edges, and which pairs both their edges acknowledged.

A fabric's per-pair settings (the liveness of a probe regime, southbound/regime_ops.py; the
report intervals, southbound/report_ops.py) are MODIFYs on both edges of each pair, one job
per switch for all of its entries, through the same write path as a re-route's
(southbound/writes.py `upsert_forwarding`). A pair counts as written once neither of its
edges failed or timed out; the others are planned again at the next update.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import Future, wait

from mpsched.controller.southbound.agent import SwitchAgent
from mpsched.controller.southbound.writes import upsert_forwarding
from mpsched.controller.telemetry.regimes import EdgePair
from mpsched.netcfg import NetCfg
from mpsched.p4rt.client import TableEntry
from mpsched.p4rt.pipeline import Pipeline

log = logging.getLogger(__name__)

def submit_entries(agents: Sequence[SwitchAgent], pipeline: Pipeline,
                   entries: Mapping[str, list[TableEntry]]) -> dict[str, Future]:
    """One job per switch with entries to write: its agent upserts them (under the
    controller's lock: the jobs only queue)."""
    write = functools.partial(upsert_forwarding, pipeline=pipeline)
    return {a.sw.name: a.submit(functools.partial(write, entries=entries[a.sw.name]))
            for a in agents if entries.get(a.sw.name)}


def failed_switches(futures: Mapping[str, Future], timeout: float) -> list[str]:
    """The switches whose job failed or did not finish within `timeout` s (sorted)."""
    done, _ = wait(futures.values(), timeout=timeout)
    return sorted(name for name, f in futures.items()
                  if f not in done or f.exception() is not None)


def acknowledged(net: NetCfg, pairs: Iterable[EdgePair], futures: Mapping[str, Future],
                 timeout: float, what: str) -> frozenset[EdgePair]:
    """The `pairs` neither of whose edges failed to acknowledge its write (an edge with
    nothing to write has nothing to fail); the failures logged, naming `what` was written."""
    failed = failed_switches(futures, timeout)
    if failed:
        log.warning("%s not written on %s (again at the next update)", what, ", ".join(failed))
    return frozenset(p for p in pairs if not any(net.edge_switch(e).name in failed for e in p))


def pair_names(pairs: Iterable[EdgePair]) -> str:
    """`1-3,2-4` for a log line; `-` for none."""
    return ",".join(f"{a}-{b}" for a, b in sorted(pairs)) or "-"


__all__ = ["acknowledged", "failed_switches", "pair_names", "submit_entries"]
