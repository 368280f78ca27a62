"""Scenario files: topology, link parameters and schedules, workload, policy, duration.

A scenario is a YAML document (see scenarios/README.md for the reference and
scenarios/*.yaml for the papers' set-ups). Loading validates every key and
raises `ScenarioError` whose `field` is the dotted path of the bad key, e.g.
`paths[1].schedule[0].at_s`. Units are in the key names (`_ms`, `_s`,
`_pct`, `_mbps`, `_kb`); loss and probabilities are percentages in files and
fractions 0..1 in `LinkParams`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from mpsched.controller.errors import FieldError
from mpsched.controller.scheduling.scheduler import GlobalParams
from mpsched.emu.params import GilbertElliott, LinkParams, ParamError
from mpsched.emu.schedule import Event, Ramp, Step, check_event, load_trace
from mpsched.lab.cpu import CpuRule
from mpsched.topo.testbed import MAX_PATHS, PathSpec, Segment, TopoSpec
from mpsched.traffic import flowsizes

# Baselines, then the papers' schedulers (controller/*.py), the static weights of the scenario
# ("static": wcmp with `policy.weights`, else weights proportional to the configured rates),
# and each paper's scheduler under LM3 path activation ("<name>+lm3").
BASELINES = ("ecmp", "rr", "letflow", "minrtt", "wcmp")
PAPERS = ("llhd", "cmtla", "fdmvqs", "qos")
# mode ca (p4src/include/ca_select.p4): least live congestion cost, and the papers as its cost
CONGESTION_AWARE = ("ca", *(f"{p}-ca" for p in PAPERS))
# the context-adaptive choice among the others by the class's QoS target (QoS-MPTCP paper)
ADAPTIVE = ("adaptive",)
POLICIES = (
    *BASELINES, *PAPERS, *CONGESTION_AWARE, *ADAPTIVE, "static", *(f"{p}+lm3" for p in PAPERS)
)
# A scenario's default `compare` list: every policy ("static" only differs from wcmp when
# the scenario gives weights, so it is compared when asked for).
COMPARE = tuple(p for p in POLICIES if p != "static")
DEFAULT_FLOWLET_GAP_US = 0  # automatic (controller/scheduling/scheduler.py auto_gap_us)
WORKLOAD_KINDS = ("bulk", "files", "flows", "poisson", "vbr", "cross_bulk")
SIZE_DISTRIBUTIONS = tuple(flowsizes.DISTRIBUTIONS)  # the published flow-size CDFs
PACKET_MIX_PAPERS = ((44, 0.49), (576, 0.012), (628, 0.021), (1300, 0.017), (1500, 0.46))


class ScenarioError(ValueError):
    def __init__(self, field_name: str, message: str) -> None:
        super().__init__(f"{field_name}: {message}")
        self.field = field_name
        self.message = message


# ---- small typed readers ---------------------------------------------------


def _obj(data: Any, where: str, allowed: set[str], required: set[str] = frozenset()) -> dict:
    if not isinstance(data, Mapping):
        raise ScenarioError(where, "must be a mapping")
    for key in data:
        if key not in allowed:
            raise ScenarioError(
                f"{where}.{key}" if where else str(key),
                f"unknown key (allowed: {', '.join(sorted(allowed))})",
            )
    for key in sorted(required):
        if key not in data:
            raise ScenarioError(f"{where}.{key}" if where else key, "missing")
    return dict(data)


def _num(data: Any, where: str, low: float = -math.inf, high: float = math.inf) -> float:
    if isinstance(data, bool) or not isinstance(data, int | float) or not math.isfinite(data):
        raise ScenarioError(where, f"must be a number, got {data!r}")
    if not low <= data <= high:
        raise ScenarioError(where, f"must be in {low:g}..{high:g}, got {data!r}")
    return float(data)


def _int(data: Any, where: str, low: int, high: int) -> int:
    if isinstance(data, bool) or not isinstance(data, int) or not low <= data <= high:
        raise ScenarioError(where, f"must be an integer {low}..{high}, got {data!r}")
    return data


def _bool(data: Any, where: str) -> bool:
    if not isinstance(data, bool):
        raise ScenarioError(where, f"must be true or false, got {data!r}")
    return data


def _str(data: Any, where: str, choices: tuple[str, ...] | None = None) -> str:
    if not isinstance(data, str) or not data:
        raise ScenarioError(where, f"must be a non-empty string, got {data!r}")
    if choices and data not in choices:
        raise ScenarioError(where, f"must be one of {', '.join(choices)}, got {data!r}")
    return data


def _list(data: Any, where: str) -> list:
    if not isinstance(data, list):
        raise ScenarioError(where, "must be a list")
    return data


# ---- link parameters ---------------------------------------------------------

# file key -> (LinkParams field, converter)
LINK_KEYS: dict[str, tuple[str, Callable[[Any, str], Any]]] = {
    "delay_ms": ("delay_ms", lambda v, w: _num(v, w, 0, 1000)),
    "jitter_ms": ("jitter_ms", lambda v, w: _num(v, w, 0, 1000)),
    "loss_pct": ("loss", lambda v, w: _num(v, w, 0, 100) / 100),
    "rate_mbps": ("rate_mbps", lambda v, w: None if v is None else _num(v, w, 0.1, 1000)),
    "queue_packets": ("queue_packets", lambda v, w: _int(v, w, 1, 100_000)),
    "up": ("up", _bool),
    "gilbert": ("gilbert", lambda v, w: None if v is None else _gilbert(v, w)),
}
GILBERT_KEYS = {
    "p_pct": "p",
    "r_pct": "r",
    "loss_good_pct": "loss_good",
    "loss_bad_pct": "loss_bad",
}


def _gilbert(data: Any, where: str) -> GilbertElliott:
    obj = _obj(data, where, set(GILBERT_KEYS), {"p_pct", "r_pct"})
    values = {GILBERT_KEYS[k]: _num(v, f"{where}.{k}", 0, 100) / 100 for k, v in obj.items()}
    return GilbertElliott(**values)


def _link_changes(obj: Mapping[str, Any], where: str) -> dict[str, Any]:
    changes = {}
    for key, value in obj.items():
        if key not in LINK_KEYS:
            raise ScenarioError(
                f"{where}.{key}", f"unknown link parameter (allowed: {', '.join(LINK_KEYS)})"
            )
        name, conv = LINK_KEYS[key]
        changes[name] = conv(value, f"{where}.{key}")
    return changes


def _trace_converters() -> dict[str, Callable[[str], tuple[str, Any]]]:
    def conv(key: str) -> Callable[[str], tuple[str, Any]]:
        name, fn = LINK_KEYS[key]

        def parse(cell: str) -> tuple[str, Any]:
            if key == "up":
                if cell.lower() not in ("0", "1", "true", "false"):
                    raise ValueError(f"up must be 0/1/true/false, got {cell!r}")
                return name, cell.lower() in ("1", "true")
            if key == "queue_packets":
                return name, fn(int(cell), key)
            return name, fn(float(cell), key)

        return parse

    return {k: conv(k) for k in LINK_KEYS if k != "gilbert"}


DIRECTIONS = ("both", "forward", "reverse")
SEGMENT_KEYS = set(LINK_KEYS) | {"reverse", "schedule"}
PATH_KEYS = SEGMENT_KEYS | {"cross_traffic", "core"}


def _schedule(data: Any, where: str, base_dir: Path) -> list[tuple[str, Event]]:
    events: list[tuple[str, Event]] = []
    for j, item in enumerate(_list(data, where)):
        w = f"{where}[{j}]"
        if not isinstance(item, Mapping):
            raise ScenarioError(w, "must be a mapping")
        direction = _str(item.get("direction", "both"), f"{w}.direction", DIRECTIONS)
        if "at_s" in item:
            obj = _obj(item, w, {"at_s", "set", "direction"}, {"set"})
            at = _num(obj["at_s"], f"{w}.at_s", 0)
            changes = _link_changes(_obj(obj["set"], f"{w}.set", set(LINK_KEYS)), f"{w}.set")
            new = [Step(at, changes)]
        elif "ramp" in item:
            keys = {"ramp", "from_s", "to_s", "start", "end", "interval_s", "direction"}
            obj = _obj(item, w, keys, {"ramp", "from_s", "to_s", "start", "end"})
            key = _str(obj["ramp"], f"{w}.ramp", ("delay_ms", "jitter_ms", "loss_pct", "rate_mbps"))
            name, conv = LINK_KEYS[key]
            for end in ("start", "end"):
                _num(obj[end], f"{w}.{end}")  # a number, also for rate_mbps (no null here)
            start_s = _num(obj["from_s"], f"{w}.from_s", 0)
            end_s = _num(obj["to_s"], f"{w}.to_s", start_s)
            new = [
                Ramp(
                    name,
                    start_s,
                    end_s,
                    conv(obj["start"], f"{w}.start"),
                    conv(obj["end"], f"{w}.end"),
                    _num(obj.get("interval_s", 0.5), f"{w}.interval_s", 0.01),
                )
            ]
        elif "down_s" in item:
            obj = _obj(item, w, {"down_s", "up_s", "direction"}, {"down_s"})
            down = _num(obj["down_s"], f"{w}.down_s", 0)
            new = [Step(down, {"up": False})]
            if obj.get("up_s") is not None:
                up = _num(obj["up_s"], f"{w}.up_s", down)
                new.append(Step(up, {"up": True}))
        elif "trace" in item:
            obj = _obj(item, w, {"trace", "direction"})
            path = base_dir / _str(obj["trace"], f"{w}.trace")
            if not path.is_file():
                raise ScenarioError(f"{w}.trace", f"no such file: {path}")
            try:
                new = list(load_trace(path, _trace_converters()))
            except ParamError as exc:
                raise ScenarioError(f"{w}.trace", str(exc)) from None
        else:
            raise ScenarioError(w, "an event has one of at_s, ramp, down_s or trace")
        for event in new:
            try:
                check_event(event, w)
            except ParamError as exc:
                raise ScenarioError(exc.field, exc.message) from None
            events.append((direction, event))
    return events


def _params(values: dict[str, Any], where: str) -> LinkParams:
    try:
        return LinkParams(**values)
    except ParamError as exc:
        raise ScenarioError(f"{where}.{exc.field}", exc.message) from None


def _segment(obj: dict[str, Any], where: str, base_dir: Path) -> Segment:
    link = {k: v for k, v in obj.items() if k in LINK_KEYS}
    forward = _link_changes(link, where)
    reverse = dict(forward)
    if obj.get("reverse") is not None:
        rev = _obj(obj["reverse"], f"{where}.reverse", set(LINK_KEYS))
        reverse.update(_link_changes(rev, f"{where}.reverse"))
    events = _schedule(obj.get("schedule", []), f"{where}.schedule", base_dir)
    fwd_params = _params(forward, where)
    rev_params = _params(reverse, f"{where}.reverse")
    for j, (_d, event) in enumerate(events):
        moves_loss = (isinstance(event, Step) and "loss" in event.changes) or (
            isinstance(event, Ramp) and event.field == "loss"
        )
        if moves_loss and fwd_params.gilbert is not None:
            raise ScenarioError(
                f"{where}.schedule[{j}]",
                "changes loss_pct on a link with gilbert loss (the gilbert model decides)",
            )
    for direction, event in events:
        if isinstance(event, Step):
            for d, base in (("forward", fwd_params), ("reverse", rev_params)):
                if direction in ("both", d):
                    _params({**_as_dict(base), **event.changes}, f"{where}.schedule")
    return Segment(
        forward=fwd_params,
        reverse=rev_params,
        forward_events=tuple(e for d, e in events if d in ("both", "forward")),
        reverse_events=tuple(e for d, e in events if d in ("both", "reverse")),
    )


def _path(data: Any, where: str, base_dir: Path) -> PathSpec:
    obj = _obj(data, where, PATH_KEYS, {"rate_mbps"})
    seg = _segment(obj, where, base_dir)
    core = None
    if obj.get("core") is not None:
        cobj = _obj(obj["core"], f"{where}.core", SEGMENT_KEYS, {"rate_mbps"})
        core = _segment(cobj, f"{where}.core", base_dir)
    return PathSpec(
        forward=seg.forward,
        reverse=seg.reverse,
        forward_events=seg.forward_events,
        reverse_events=seg.reverse_events,
        cross_traffic=_bool(obj.get("cross_traffic", False), f"{where}.cross_traffic"),
        core=core,
    )


def _as_dict(params: LinkParams) -> dict[str, Any]:
    return {k: getattr(params, k) for k in LinkParams.__dataclass_fields__}


# ---- workloads -----------------------------------------------------------------


@dataclass(frozen=True)
class Workload:
    """One traffic source. `kind`:

    bulk: long-lived TCP (or MPTCP) streams h1 -> h2 for the whole run.
    files: transfers of the given sizes h1 -> h2, Poisson arrivals; each completion gives
        one flow completion time, counted from the flow's arrival. `concurrency` (0: none)
        bounds the flows in progress: later arrivals wait for a slot, inside their FCT.
    poisson: open-loop Poisson arrivals h1 -> h2 offering `load_pct` % of the paths' summed
        capacity (`Scenario.offered_mbps`), sizes from the published `sizes` CDF
        (websearch: DCTCP, datamining: VL2; traffic/flowsizes.py) scaled by `scale`
        and censored at `max_kb`; every flow starts at its arrival (`max_concurrent` > 0
        bounds the flows in progress, as `concurrency` does for files); no arrivals in the
        last `drain_s` seconds, so the last flows can finish.
    flows: many concurrent flows (closed loop: each of `flows` connections
        sends `size_kb`, finishes, and starts again) - for flowlet schedulers.
    vbr: cross traffic x<path> -> y<path> with Pareto on/off periods and the
        papers' packet-size mix, `tcp_pct` of packets over TCP, the rest UDP.
    cross_bulk: long-lived TCP cross traffic x<path> -> y<path>.
    """

    kind: str
    start_s: float = 0.0
    stop_s: float | None = None
    streams: int = 1
    mptcp: bool = False
    subflows: int = 2
    sizes_kb: tuple[int, ...] = ()
    count: int = 0
    concurrency: int = 0
    interarrival_ms: float = 100.0
    flows: int = 0
    size_kb: int = 0
    path: int = 0
    load_pct: float = 0.0
    pareto_shape: float = 1.5
    mean_on_ms: float = 500.0
    mean_off_ms: float = 500.0
    tcp_pct: float = 90.0
    sizes: str = "websearch"
    max_kb: float = 3000.0
    scale: float = 1.0
    max_concurrent: int = 0
    drain_s: float = 5.0


WORKLOAD_KEYS = {
    "bulk": {"streams", "mptcp", "subflows"},
    "files": {"sizes_kb", "count", "concurrency", "interarrival_ms", "mptcp", "subflows"},
    "flows": {"flows", "size_kb", "mptcp", "subflows"},
    "poisson": {
        "sizes", "load_pct", "max_kb", "scale", "max_concurrent", "drain_s", "mptcp", "subflows",
    },
    "vbr": {"path", "load_pct", "pareto_shape", "mean_on_ms", "mean_off_ms", "tcp_pct"},
    "cross_bulk": {"path", "streams"},
}


def _workload(data: Any, where: str, n_paths: int, cross: set[int]) -> Workload:
    if not isinstance(data, Mapping):
        raise ScenarioError(where, "must be a mapping")
    kind = _str(data.get("kind"), f"{where}.kind", WORKLOAD_KINDS)
    obj = _obj(data, where, {"kind", "start_s", "stop_s"} | WORKLOAD_KEYS[kind])
    kw: dict[str, Any] = {"kind": kind}
    kw["start_s"] = _num(obj.get("start_s", 0.0), f"{where}.start_s", 0)
    if obj.get("stop_s") is not None:
        kw["stop_s"] = _num(obj["stop_s"], f"{where}.stop_s", kw["start_s"])
    for key, value in obj.items():
        w = f"{where}.{key}"
        if key in ("kind", "start_s", "stop_s"):
            continue
        if key in ("streams", "count", "flows", "subflows"):
            kw[key] = _int(value, w, 1, 1024)
        elif key in ("concurrency", "max_concurrent"):
            kw[key] = _int(value, w, 0, 1024)
        elif key == "sizes":
            kw[key] = _str(value, w, SIZE_DISTRIBUTIONS)
        elif key == "max_kb":
            kw[key] = _num(value, w, 1, 10_000_000)
        elif key == "scale":
            kw[key] = _num(value, w, 0.001, 1000)
        elif key == "drain_s":
            kw[key] = _num(value, w, 0, 3600)
        elif key in ("size_kb",):
            kw[key] = _int(value, w, 1, 10_000_000)
        elif key == "sizes_kb":
            sizes = _list(value, w)
            if not sizes:
                raise ScenarioError(w, "at least one size")
            kw[key] = tuple(_int(s, f"{w}[{i}]", 1, 10_000_000) for i, s in enumerate(sizes))
        elif key == "mptcp":
            kw[key] = _bool(value, w)
        elif key == "path":
            kw[key] = _int(value, w, 1, n_paths)
            if kw[key] not in cross:
                raise ScenarioError(w, f"path {kw[key]} has no cross_traffic: true")
        elif key == "load_pct":
            kw[key] = _num(value, w, 0.1, 100)
        elif key == "tcp_pct":
            kw[key] = _num(value, w, 0, 100)
        elif key == "pareto_shape":
            kw[key] = _num(value, w, 1.01, 10)
        else:
            kw[key] = _num(value, w, 0.001)
    needed = {
        "files": ("sizes_kb", "count"),
        "flows": ("flows", "size_kb"),
        "poisson": ("sizes", "load_pct"),
    }
    for key in needed.get(kind, ()):
        if key not in kw:
            raise ScenarioError(f"{where}.{key}", f"missing (needed by kind {kind})")
    if kind in ("vbr", "cross_bulk") and "path" not in kw:
        raise ScenarioError(f"{where}.path", f"missing (needed by kind {kind})")
    return Workload(**kw)


# ---- the scenario ----------------------------------------------------------------


@dataclass(frozen=True)
class Policy:
    name: str = "ecmp"
    weights: tuple[int, ...] = ()
    flowlet_gap_us: int = DEFAULT_FLOWLET_GAP_US


@dataclass(frozen=True)
class Scenario:
    name: str
    description: str
    duration_s: float
    seed: int
    topo: TopoSpec
    workload: tuple[Workload, ...]
    policy: Policy = field(default_factory=Policy)
    compare: tuple[str, ...] = COMPARE
    warmup_s: float = 2.0
    source: Path | None = None
    params: dict = field(default_factory=dict)  # the controller's PUT /params body at start
    cpu_rule: CpuRule = field(default_factory=CpuRule)  # when a run counts as CPU-bound

    def mean_capacity_mbps(self, start: float, end: float, step: float = 0.1) -> float:
        """Time-average over [start, end] (s after traffic start) of the up paths' summed
        forward rates (`PathSpec.rate_at`)."""
        n = max(1, int((end - start) / step))
        total = 0.0
        for k in range(n):
            t = start + (k + 0.5) * (end - start) / n
            total += sum(p.rate_at(t) for p in self.topo.paths)
        return total / n

    def capacities_mbps(self) -> list[float]:
        """Configured forward rate of each path at t=0: its slowest segment (None = 0)."""
        return [p.rate_at(0.0) for p in self.topo.paths]

    def offered_mbps(self, workload: Workload) -> float:
        """The application bit rate a `poisson` workload offers: its `load_pct` of the paths'
        summed configured forward rate at t=0 (`capacities_mbps`), the healthy network's."""
        return workload.load_pct / 100 * sum(self.capacities_mbps())

    def path_baselines(self) -> list[tuple[float | None, float]]:
        """Per path at t=0: (forward rate in Mbit/s, None = unlimited; base RTT in ms = the
        one-way delays of every segment forward plus reverse, no queueing). The ideal FCT of
        the slowdown metric (`metrics.ideal_fct_s`) is computed on these."""
        out = []
        for p in self.topo.paths:
            rates = [s.forward.rate_mbps for s in p.segments() if s.forward.rate_mbps is not None]
            rtt = sum(s.forward.delay_ms + s.reverse.delay_ms for s in p.segments())
            out.append((min(rates) if rates else None, rtt))
        return out

    def policy_request(self, policy: str) -> dict:
        """The body of ``PUT /classes/0/policy`` that runs `policy` (one of POLICIES)."""
        if policy not in POLICIES:
            raise ScenarioError(
                "policy", f"unknown policy {policy!r} (known: {', '.join(POLICIES)})"
            )
        name, lm3 = policy.removesuffix("+lm3"), policy.endswith("+lm3")
        params: dict = {}
        if name == "static":
            name = "wcmp"
            weights = self.policy_weights("static")
            params["weights"] = ",".join(f"{p}:{w}" for p, w in sorted(weights.items()))
        return {
            "name": name,
            "params": params,
            "lm3": lm3,
            "flowlet_gap_us": self.policy.flowlet_gap_us,
        }

    def policy_weights(self, policy: str) -> dict[int, int]:
        """Per-path weights that realise a baseline policy with the weighted-hash data plane.

        ecmp: every path weight 1 (5-tuple hashing over all paths).
        static: the scenario's `policy.weights`, else proportional to the
            configured forward rates (WCMP), scaled so the largest is 100.
        """
        n = len(self.topo.paths)
        if policy == "ecmp":
            return dict.fromkeys(range(1, n + 1), 1)
        if policy == "static":
            if self.policy.weights:
                return dict(enumerate(self.policy.weights, start=1))
            caps = self.capacities_mbps()
            top = max(caps) or 1.0
            return {i: max(1, round(100 * c / top)) for i, c in enumerate(caps, start=1)}
        raise ScenarioError("policy", f"unknown policy {policy!r} (known: {', '.join(POLICIES)})")


TOP_KEYS = {
    "name", "description", "duration_s", "seed", "warmup_s", "paths", "host_addresses",
    "host_interfaces",
    "workload", "policy", "compare", "backend", "params", "cpu_bound",
}  # fmt: skip


def parse(data: Any, source: Path | None = None, backend: str | None = None) -> Scenario:
    """Validate a scenario document (already parsed from YAML)."""
    obj = _obj(data, "", TOP_KEYS, {"name", "duration_s", "paths", "workload"})
    base_dir = source.parent if source else Path.cwd()
    paths_data = _list(obj["paths"], "paths")
    if not 1 <= len(paths_data) <= MAX_PATHS:
        raise ScenarioError("paths", f"between 1 and {MAX_PATHS} paths, got {len(paths_data)}")
    paths = tuple(_path(p, f"paths[{i}]", base_dir) for i, p in enumerate(paths_data))
    cross = {i for i, p in enumerate(paths, start=1) if p.cross_traffic}
    duration = _num(obj["duration_s"], "duration_s", 1, 3600)
    workload = tuple(
        _workload(w, f"workload[{i}]", len(paths), cross)
        for i, w in enumerate(_list(obj["workload"], "workload"))
    )
    if not workload:
        raise ScenarioError("workload", "at least one workload")
    for i, w in enumerate(workload):
        if w.kind == "poisson":
            if not any(p.rate_at(0.0) for p in paths):
                raise ScenarioError(
                    f"workload[{i}].load_pct", "needs paths with a rate_mbps at t=0 (none has)"
                )
            span = min(duration, w.stop_s if w.stop_s is not None else duration) - w.start_s
            if w.drain_s >= span:
                raise ScenarioError(
                    f"workload[{i}].drain_s",
                    f"must be shorter than the workload's time ({span:g} s)",
                )
    policy = Policy()
    if "policy" in obj:
        pobj = _obj(obj["policy"], "policy", {"name", "weights", "flowlet_gap_us"})
        name = _str(pobj.get("name", "ecmp"), "policy.name", POLICIES)
        weights: tuple[int, ...] = ()
        if "weights" in pobj:
            wl = _list(pobj["weights"], "policy.weights")
            if len(wl) != len(paths):
                raise ScenarioError("policy.weights", f"one weight per path ({len(paths)})")
            weights = tuple(_int(x, f"policy.weights[{i}]", 0, 255) for i, x in enumerate(wl))
            if not any(weights):
                raise ScenarioError("policy.weights", "at least one weight > 0")
        gap = _int(pobj.get("flowlet_gap_us", DEFAULT_FLOWLET_GAP_US), "policy.flowlet_gap_us",
                   0, 10_000_000)
        policy = Policy(name, weights, gap)
    compare = tuple(
        _str(p, f"compare[{i}]", POLICIES)
        for i, p in enumerate(_list(obj.get("compare", list(COMPARE)), "compare"))
    )
    host_addresses = max(
        _int(obj.get("host_addresses", 1), "host_addresses", 1, 8),
        max((w.subflows for w in workload if w.mptcp), default=1),
    )
    host_interfaces = _int(obj.get("host_interfaces", 1), "host_interfaces", 1, 4)
    host_addresses = max(host_addresses, host_interfaces)
    topo = TopoSpec(
        paths=paths,
        host_interfaces=host_interfaces,
        backend=backend or _str(obj.get("backend", "auto"), "backend", ("auto", "linkem", "netem")),
        host_addresses=host_addresses,
    )
    params = _controller_params(obj.get("params", {}))
    cpu_rule = _cpu_rule(obj.get("cpu_bound", {}))
    return Scenario(
        name=_str(obj["name"], "name"),
        description=str(obj.get("description", "")).strip(),
        duration_s=duration,
        seed=_int(obj.get("seed", 1), "seed", 0, 2**31 - 1),
        topo=topo,
        workload=workload,
        policy=policy,
        compare=compare,
        warmup_s=_num(obj.get("warmup_s", 2.0), "warmup_s", 0, 60),
        source=source,
        params=params,
        cpu_rule=cpu_rule,
    )


def _cpu_rule(data: Any) -> CpuRule:
    """`cpu_bound`: the thresholds that mark a run CPU-bound (mpsched/lab/cpu.py)."""
    obj = _obj(data, "cpu_bound", {"idle_below_pct", "max_time_pct"})
    default = CpuRule()
    return CpuRule(
        idle_below_pct=_num(
            obj.get("idle_below_pct", default.idle_below_pct), "cpu_bound.idle_below_pct", 0, 100
        ),
        max_time_pct=_num(
            obj.get("max_time_pct", default.max_time_pct), "cpu_bound.max_time_pct", 0, 100
        ),
    )


def _controller_params(data: Any) -> dict:
    """The controller parameters a scenario sets (GET/PUT /params), checked here with the
    controller's own validation so a bad value fails before the testbed starts."""
    if not isinstance(data, dict):
        raise ScenarioError("params", "must be a mapping (the body of PUT /params)")
    try:
        GlobalParams().updated(data)
    except FieldError as error:
        raise ScenarioError(f"params.{error.field}", error.message) from None
    return data


def load(path: str | Path, backend: str | None = None) -> Scenario:
    """Read and validate a scenario file; errors name the file and the key."""
    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text())
    except OSError as exc:
        raise ScenarioError(str(path), exc.strerror or str(exc)) from None
    except yaml.YAMLError as exc:
        raise ScenarioError(str(path), f"not valid YAML: {exc}") from None
    return parse(data, source=path, backend=backend)
