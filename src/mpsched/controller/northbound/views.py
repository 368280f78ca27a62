"""What the REST API's GETs return, as typed models (pydantic), and how they are built
from the controller's state.

The REST layer serialises them at its boundary (`to_json`); the JSON is described in
openapi.yaml. Models keep the key order and the nulls of that JSON; a key that is absent
rather than null (a placement's ``ca`` outside mode ca) is left out on serialisation.
Free-form parts (policy parameters, parameter schemas, telemetry snapshots and histories,
decision log entries, adaptive policy views) stay dicts.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict
from typing import Any, Literal

from pydantic import BaseModel, Field

from mpsched.controller.model.loop import LoopStats
from mpsched.controller.model.placement import Placement
from mpsched.controller.model.view import Number, View
from mpsched.controller.scheduling.classes import (
    ClassPolicy,
    TrafficClass,
    class_to_dict,
    policy_to_dict,
)
from mpsched.controller.scheduling.mptcp import Connection, Flow, connection_to_dict
from mpsched.controller.scheduling.scheduler import GlobalParams, Scheduler, ca_dict
from mpsched.controller.southbound.agent import SwitchAgent
from mpsched.controller.telemetry.stats import PathStats

FreeForm = dict[str, Any]


def to_json(value: Any) -> Any:
    """A view (or a list of views, or plain JSON data) as plain JSON data: models dumped by
    alias, absent keys left out, nulls kept; floats as they are (no NaN rewriting)."""
    if isinstance(value, BaseModel):
        return value.model_dump(by_alias=True)
    if isinstance(value, list):
        return [to_json(v) for v in value]
    return value


class SwitchCounters(View):
    """A path's counters at one edge switch, and the rates of the last poll interval."""

    tx_packets: int
    tx_bytes: int
    rx_packets: int
    rx_bytes: int
    tx_rate_bps: Number
    rx_rate_bps: Number
    updated: Number | None


class PathView(View):
    """GET /paths/{id}."""

    id: int
    weight: int
    admin: Literal["up", "down"]
    configured_rate_mbps: Number | None
    packets: int
    bytes: int
    rate_bps: Number
    by_switch: dict[str, SwitchCounters]
    telemetry: dict[str, FreeForm]  # direction -> current estimates


class DirectionTelemetry(View):
    current: FreeForm
    history: list[FreeForm]


class PathTelemetryView(View):
    """GET /paths/{id}/telemetry."""

    id: int
    directions: dict[str, DirectionTelemetry]


class TelemetrySinceView(View):
    """GET /telemetry?since=: per path and direction, the history newer than `since`."""

    now: float
    paths: dict[str, dict[str, list[FreeForm]]]


class ProgrammingView(View):
    how: str
    detail: str
    at: float


class ProbeCounts(View):
    via: str
    sent: int
    skipped: int
    gated: int


class SwitchStatusView(View):
    """One entry of GET /switches."""

    name: str
    device_id: int
    grpc_address: str
    state: str
    error: str | None
    since: float
    election_id: int
    programmed: ProgrammingView | None
    drops: dict[str, int]
    probes: ProbeCounts | None


class PolicyView(View):
    """GET /classes/{id}/policy."""

    name: str
    params: FreeForm
    lm3: bool
    flowlet_gap_us: int


class PlacementView(View):
    """A class's placement on one switch; `ca` only in mode ca."""

    weights: dict[str, int]
    mode: str
    flowlet_gap_us: int
    syn_copy: bool
    ca: FreeForm | None = Field(default=None, exclude_if=lambda v: v is None)


class ClassView(View):
    """GET /classes/{id}."""

    id: int
    name: str
    priority: int
    match: FreeForm
    policy: PolicyView
    qos_target: dict[str, Number | None] | None
    placement: dict[str, PlacementView | None]


class LinkDirectionView(View):
    """One direction of a link, leaving `src` towards `dst` by `src`'s `port`: its configured
    rate, and its measured rate (Mbit/s between the latest two reads of the port's transmit
    counter, port_counters.p4; null before two reads) and that as a fraction of the configured
    rate, at most 1: what the port sent above the rate filled or overflowed the link's queue
    (null without either)."""

    src: str
    dst: str
    port: int
    rate_mbps: Number | None
    mbps: Number | None
    utilisation: Number | None


class LinkView(View):
    """GET /links: a fabric's link (docs/fabric.md), its administrative state (the
    operator's), its inferred state (`inferred`: down while the controller holds it failed
    from the paths' liveness, src/mpsched/controller/fabric/failures.py), whether the routing uses
    it (`alive`:
    up in both, and some pair's path crosses it; `paths`: how many) and its load per
    direction (`forward` a -> b, `reverse` b -> a)."""

    name: str
    a: str
    b: str
    admin: Literal["up", "down"]
    inferred: Literal["up", "down"]
    alive: bool
    paths: int
    forward: LinkDirectionView
    reverse: LinkDirectionView


class PairPathView(View):
    """A path of a pair now: its switches and links (a fabric's; a two-edge path names its
    two switches and no link) and its configured bottleneck rate."""

    id: int
    hops: int
    switches: list[str]
    links: list[str]
    rate_mbps: Number | None


class PairView(View):
    """GET /pairs/{id}: one unit of the scheduler, the traffic of `ingress` towards edge
    `dst_edge` (switch `egress`), keyed by `id` ("<ingress>-><egress>" in a fabric, the
    ingress switch's name with two edges): its paths now, its placement per class id, the
    current estimates of each of its paths in its direction, and how its paths are probed:
    `probing` "active" (every probe interval; always with two edges) or "idle" (a fabric's
    pair of edges without traffic, probed every idle probe interval:
    src/mpsched/controller/telemetry/regimes.py)."""

    id: str
    ingress: str
    egress: str
    dst_edge: int
    probing: Literal["active", "idle"]
    paths: list[PairPathView]
    placement: dict[str, PlacementView | None]
    telemetry: dict[str, FreeForm]


class ParamsView(View):
    """GET /params: the global parameters and their schema."""

    control_period_ms: Number
    step_budget_pct: Number
    cpu_budget_pct: Number | None
    lm3: FreeForm
    policies: dict[str, FreeForm]
    mptcp: FreeForm
    params_schema: FreeForm = Field(alias="schema")


class DecisionsView(View):
    """GET /decisions."""

    now: float
    decisions: list[FreeForm]
    loop: LoopStats


class SubflowView(View):
    src: str
    sport: int
    dst: str
    dport: int
    initial: bool
    addr_id: int
    path_id: int | None
    packets: int
    idle_s: float
    fin_from: list[str]
    pair: str | None = Field(None, description="the unit of its direction, an id of GET /pairs "
                             "(the dashboard's fabric view draws the subflow on that pair's path)")


class ConnectionView(View):
    """GET /mptcp/connections/{id}."""

    id: int
    since: float
    server_token: str | None
    client_token: str | None
    subflows: list[SubflowView]


class ConnectionsView(View):
    """GET /mptcp/connections."""

    steering: bool
    connections: list[ConnectionView]


class AdaptiveView(View):
    """GET /classes/{id}/adaptive: per switch the adaptive policy's own view."""

    class_id: int
    policy: PolicyView
    switches: dict[str, FreeForm | None]


class StateView(View):
    """GET /state (src/mpsched/controller/intent/state.py)."""

    path: str | None
    persistent: bool
    restored: bool
    intent: FreeForm | None
    saved_at: float | None
    saves: int
    failures: int
    error: str | None
    error_at: float | None


# -- builders ------------------------------------------------------------------


def path_view(
    path_id: int,
    weight: int,
    up: bool,
    rate_mbps: float | None,
    stats: PathStats,
    telemetry: dict[str, FreeForm],
) -> PathView:
    return PathView(
        id=path_id,
        weight=weight,
        admin="up" if up else "down",
        configured_rate_mbps=rate_mbps,
        **stats.totals(),
        by_switch={
            name: SwitchCounters(**s.to_dict()) for name, s in sorted(stats.by_switch.items())
        },
        telemetry=telemetry,
    )


def switch_view(agent: SwitchAgent) -> SwitchStatusView:
    status, programmed = agent.status, agent.programmed
    probes = agent.probe_counts()
    return SwitchStatusView(
        name=agent.sw.name,
        device_id=agent.sw.device_id,
        grpc_address=agent.sw.grpc_address,
        state=status.state,
        error=status.error,
        since=status.since,
        election_id=agent.election_id[1],
        programmed=None if programmed is None else ProgrammingView(**asdict(programmed)),
        drops=dict(agent.drops),
        probes=None if probes is None else ProbeCounts(**probes),
    )


def policy_view(policy: ClassPolicy) -> PolicyView:
    return PolicyView(**policy_to_dict(policy))


def placement_view(pl: Placement | None) -> PlacementView | None:
    if pl is None:
        return None
    return PlacementView(
        weights={str(p): w for p, w in pl.weights},
        mode=pl.mode,
        flowlet_gap_us=pl.flowlet_gap_us,
        syn_copy=pl.syn_copy,
        ca=None if pl.ca is None else ca_dict(pl.ca),
    )


def class_view(c: TrafficClass, placements: dict[str, Placement | None]) -> ClassView:
    return ClassView(
        **class_to_dict(c),
        placement={sw: placement_view(pl) for sw, pl in placements.items()},
    )


def params_view(params: GlobalParams) -> ParamsView:
    return ParamsView(**params.to_dict(), schema=params.schema())


def connection_view(c: Connection, now: float,
                    unit_of: Callable[[Flow], str] | None = None) -> ConnectionView:
    """One connection; each subflow with the unit (pair) of its direction if `unit_of`."""
    body = connection_to_dict(c, now)
    if unit_of is not None:
        for s, d in zip(c.ordered(), body["subflows"], strict=True):
            d["pair"] = unit_of(s.flow)
    return ConnectionView(**body)


def connections_view(connections: dict[int, Connection], steering: bool, now: float,
                     unit_of: Callable[[Flow], str] | None = None) -> ConnectionsView:
    """GET /mptcp/connections: the tracked connections by id."""
    return ConnectionsView(
        steering=steering,
        connections=[connection_view(c, now, unit_of) for _, c in sorted(connections.items())],
    )


def adaptive_view(c: TrafficClass, scheduler: Scheduler) -> AdaptiveView:
    """Per switch the view of class `c`'s adaptive policy (None where it has none)."""
    switches: dict[str, FreeForm | None] = {}
    for sw in scheduler.switches:
        view = getattr(scheduler.policy_of(sw, c.id), "view", None)
        switches[sw] = view() if view is not None else None
    return AdaptiveView(class_id=c.id, policy=policy_view(c.policy), switches=switches)
