"""The workload of a fabric scenario: traffic between the hosts behind its edges.

A fabric scenario's `workload[i]` validates into `FabricWorkload` (pydantic, naming the bad
key, src/mpsched/validation.py); which keys a source takes depends on its `kind`
(`FABRIC_WORKLOAD_KEYS`). Names of edges and hosts are checked against the fabric by
`check_against`, called by the scenario (src/mpsched/lab/scenario.py). The schedule the kinds
describe is computed by src/mpsched/lab/fabric_workload.py; docs/fabric-lab.md ("Workloads") and
scenarios/README.md are the reference.

Endpoints are named as the testbed names them: a host ``h<e>_<k>`` (host k behind edge id e,
src/mpsched/fabric/netdesc.py) or an edge switch by its name; an edge name stands for every host
behind it in incast's `senders`, for its first host elsewhere.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import model_validator

from mpsched import addressing as ap
from mpsched.fabric.model import Fabric
from mpsched.lab.scenario_workload import (
    SIZE_DISTRIBUTIONS,
    Bound,
    Count,
    SizeKb,
    check_keys,
    check_stop,
)
from mpsched.validation import BoolValue, KeyCheck, Text, fail, int_in, number, one_of

FABRIC_WORKLOAD_KINDS = ("poisson", "incast", "bulk")
FABRIC_WORKLOAD_KEYS = {
    "poisson": {"sizes", "load_pct", "matrix", "max_kb", "scale", "max_concurrent", "drain_s"},
    "incast": {"receiver", "senders", "size_kb", "period_ms", "drain_s"},
    "bulk": {"pairs", "streams", "mptcp", "subflows"},
}
NEEDED_KEYS = {
    "poisson": ("sizes", "load_pct"),
    "incast": ("receiver", "size_kb"),
    "bulk": ("pairs",),
}
HOST_NAME = re.compile(r"h([1-9][0-9]*)_([1-9][0-9]*)")


@dataclass(frozen=True)
class MatrixEntry(KeyCheck):
    """One ordered pair of a traffic matrix: source and destination edge (switch names) and
    the pair's weight (its share of the offered load is weight / the weights' sum)."""

    src: Text
    dst: Text
    weight: Annotated[float, number(0.001, 1e6)] = 1.0


@dataclass(frozen=True)
class BulkPair(KeyCheck):
    """A long-lived transfer from endpoint `src` to endpoint `dst` (a host or an edge)."""

    src: Text
    dst: Text


@dataclass(frozen=True)
class FabricWorkload:
    """One traffic source of a fabric. `kind`:

    poisson: open-loop Poisson flows with sizes from the published `sizes` CDF (as the
        two-edge kind: `max_kb`, `scale`, `max_concurrent`, `drain_s`), offering `load_pct`
        % of the fabric's capacity (`fabric_workload.edge_capacity_mbps`). Without `matrix`
        all-to-all: every edge offers `load_pct` % of its own capacity, shared equally by
        its hosts, each flow to a host behind another edge, no edge receiving more than
        `load_pct` % of its links' capacity towards it (`fabric_workload.balance`).
        With `matrix`: the load of the summed capacity split over the listed ordered pairs
        of edges by weight (pairs not listed carry nothing).
    incast: every `period_ms`, all `senders` (default: every host behind another edge than
        the receiver's) start a `size_kb` response to `receiver` at the same instant (the
        partition/aggregate pattern of DCTCP, Alizadeh et al., SIGCOMM 2010); no rounds in
        the last `drain_s` seconds.
    bulk: `streams` long-lived TCP streams per entry of `pairs`, for the workload's time;
        with `mptcp`, kernel-MPTCP connections of `subflows` subflows each (the testbed gives
        every host `subflows` addresses, src/mpsched/topo/fabric_testbed.py `enable_mptcp`).
    """

    kind: Annotated[str, one_of(FABRIC_WORKLOAD_KINDS)]
    start_s: Annotated[float, number(0)] = 0.0
    stop_s: Annotated[float, number()] | None = None  # >= start_s; None: the run's end
    sizes: Annotated[str, one_of(SIZE_DISTRIBUTIONS)] = "websearch"
    load_pct: Annotated[float, number(0.1, 100)] = 0.0
    matrix: tuple[MatrixEntry, ...] = ()  # empty: all-to-all
    max_kb: Annotated[float, number(1, 10_000_000)] = 3000.0
    scale: Annotated[float, number(0.001, 1000)] = 1.0
    max_concurrent: Bound = 0
    drain_s: Annotated[float, number(0, 3600)] = 5.0
    receiver: Text = ""
    senders: tuple[Text, ...] = ()  # empty: every host behind another edge
    size_kb: SizeKb = 0
    period_ms: Annotated[float, number(10, 3_600_000)] = 1000.0
    pairs: tuple[BulkPair, ...] = ()
    streams: Count = 1
    mptcp: BoolValue = False
    subflows: Annotated[int, int_in(1, ap.FABRIC_HOST_ADDRESSES)] = 2

    @model_validator(mode="before")
    @classmethod
    def _keys_of_the_kind(cls, data: Any) -> Any:
        """A file's workload: the keys its kind takes, and those it needs."""
        if not isinstance(data, dict):
            return data
        kind = data.get("kind")
        if kind not in FABRIC_WORKLOAD_KINDS:
            fail("kind", f"must be one of {', '.join(FABRIC_WORKLOAD_KINDS)} in a fabric, "
                 f"got {kind!r}", kind)
        check_keys(data, kind, FABRIC_WORKLOAD_KEYS[kind], NEEDED_KEYS[kind])
        for key in ("matrix", "pairs"):
            if isinstance(data.get(key), list) and not data[key]:
                fail(key, "at least one entry", data[key])
        return data

    @model_validator(mode="after")
    def _stop_after_start(self) -> FabricWorkload:
        check_stop(self.start_s, self.stop_s)
        return self

    def span_s(self, duration_s: float) -> float:
        """How long the workload runs in a run of `duration_s` (its stop or the run's end)."""
        stop = self.stop_s if self.stop_s is not None else duration_s
        return min(duration_s, stop) - self.start_s


# ---- names against the fabric ----------------------------------------------------------


def edge_id(fabric: Fabric, name: str) -> int | None:
    """The edge id of the edge switch `name` (None: no such edge)."""
    sw = fabric.by_name.get(name)
    return sw.edge_id if sw is not None and sw.is_edge else None


def hosts_of(fabric: Fabric, name: str, every: bool) -> list[tuple[int, int]]:
    """The hosts (edge id, k) an endpoint names: ``h<e>_<k>``, or an edge's name (all its
    hosts if `every`, else its first). Raises ValueError saying what is wrong."""
    match = HOST_NAME.fullmatch(name)
    if match:
        e, k = int(match[1]), int(match[2])
        if not 1 <= e <= len(fabric.edges) or k > fabric.edge(e).hosts:
            raise ValueError(f"no host {name} in the fabric (h<edge id>_<host 1..hosts>)")
        return [(e, k)]
    e_id = edge_id(fabric, name)
    if e_id is None:
        edges = ", ".join(s.name for s in fabric.edges)
        raise ValueError(f"must be a host h<e>_<k> or an edge ({edges}), got {name!r}")
    return [(e_id, k) for k in range(1, (fabric.edge(e_id).hosts if every else 1) + 1)]


def _endpoint(fabric: Fabric, loc: tuple, name: str, every: bool = False) -> list[tuple[int, int]]:
    try:
        return hosts_of(fabric, name, every)
    except ValueError as exc:
        fail(loc, str(exc), name)


def _check_matrix(fabric: Fabric, loc: tuple, matrix: Sequence[MatrixEntry]) -> None:
    seen = set()
    for j, entry in enumerate(matrix):
        ends = []
        for key in ("src", "dst"):
            name = getattr(entry, key)
            if edge_id(fabric, name) is None:
                edges = ", ".join(s.name for s in fabric.edges)
                fail((*loc, "matrix", j, key), f"must be an edge ({edges}), got {name!r}", name)
            ends.append(name)
        if ends[0] == ends[1]:
            fail((*loc, "matrix", j, "dst"), "must be another edge than src", ends[1])
        if tuple(ends) in seen:
            fail((*loc, "matrix", j), f"the pair {ends[0]}->{ends[1]} is listed twice")
        seen.add(tuple(ends))


def check_against(workloads: Sequence[FabricWorkload], fabric: Fabric, duration_s: float,
                  capacity: dict[int, float]) -> None:
    """Every name a workload gives is an edge or host of `fabric`, flows cross the fabric
    (no pair within one edge), Poisson loads have capacity to refer to (`capacity`: Mbit/s
    per edge id), and arrivals stop before the run ends; errors name ``workload[i].<key>``."""
    for i, w in enumerate(workloads):
        loc: tuple = ("workload", i)
        if w.kind in ("poisson", "incast") and w.drain_s >= w.span_s(duration_s):
            fail((*loc, "drain_s"), "must be shorter than the workload's time "
                 f"({w.span_s(duration_s):g} s)", w.drain_s)
        if w.kind == "poisson":
            _check_matrix(fabric, loc, w.matrix)
            sources = ({edge_id(fabric, m.src) for m in w.matrix} if w.matrix
                       else set(capacity))
            if not any(capacity[e] > 0 for e in sources if e is not None):
                fail((*loc, "load_pct"), "needs links with a rate_mbps at t=0 at the sending "
                     "edges (none has)")
        elif w.kind == "incast":
            ((r_edge, _),) = _endpoint(fabric, (*loc, "receiver"), w.receiver)
            for j, name in enumerate(w.senders):
                if any(e == r_edge for e, _ in _endpoint(fabric, (*loc, "senders", j), name, True)):
                    fail((*loc, "senders", j), "must be behind another edge than the receiver",
                         name)
        else:
            for j, pair in enumerate(w.pairs):
                ((a, _),) = _endpoint(fabric, (*loc, "pairs", j, "src"), pair.src)
                ((b, _),) = _endpoint(fabric, (*loc, "pairs", j, "dst"), pair.dst)
                if a == b:
                    fail((*loc, "pairs", j, "dst"), "must be behind another edge than src",
                         pair.dst)
