"""Scenario files: topology, link parameters and schedules, workload, policy, duration.

A scenario is a YAML document (see scenarios/README.md for the reference and
scenarios/*.yaml for the papers' set-ups), declared as the pydantic model `ScenarioFile`
(paths: src/mpsched/lab/scenario_links.py, workloads: src/mpsched/lab/scenario_workload.py, a
fabric's workloads: src/mpsched/lab/scenario_fabric.py); `load` and `parse` return the validated
`Scenario` (src/mpsched/lab/scenario_spec.py), which this module exports with the names a
scenario file's keys may take.
Loading validates every key and raises `ScenarioError` whose `field` is the dotted path
of the bad key, e.g. `paths[1].schedule[0].at_s`, and whose `source` is the file.
Units are in the key names (`_ms`, `_s`, `_pct`, `_mbps`, `_kb`); loss and probabilities
are percentages in files and fractions 0..1 in `LinkParams`.

A scenario has either today's two edge switches joined by `paths` or a `fabric` (many edges,
multi-hop paths: src/mpsched/fabric/, docs/fabric.md). A fabric scenario is inspected with
`mpsched fabric FILE`, brought up by `mpsched topo --scenario` and run by `mpsched run` and
`mpsched compare` (the fabric testbed, src/mpsched/topo/fabric_testbed.py, and the fabric's
workload:
src/mpsched/lab/fabric_launch.py); `load` and `parse` refuse it unless the caller can run one
(`fabric=True`), so every other command that runs scenarios says so.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    TypeAdapter,
    ValidationInfo,
    ValidatorFunctionWrapHandler,
    field_validator,
    model_validator,
)

from mpsched import safeload
from mpsched.controller.model.errors import FieldError
from mpsched.controller.scheduling.scheduler import GlobalParams
from mpsched.emu.segment import MAX_PATHS
from mpsched.fabric.files import FabricFile
from mpsched.lab.cpu import CpuRule
from mpsched.lab.fabric_workload import edge_capacity_mbps
from mpsched.lab.scenario_cluster import ClusterFile
from mpsched.lab.scenario_cluster import check_against as check_cluster
from mpsched.lab.scenario_fabric import FabricWorkload, check_against
from mpsched.lab.scenario_links import (
    DIRECTIONS,
    MAX_DURATION_S,
    PathFile,
    absolute_traces,
    step_context,
    trace_converters,
)
from mpsched.lab.scenario_policy import (
    ADAPTIVE,
    BACKENDS,
    BASELINES,
    COMPARE,
    CONGESTION_AWARE,
    DEFAULT_FLOWLET_GAP_US,
    PACKET_MIX_PAPERS,
    PAPERS,
    POLICIES,
    Policy,
)
from mpsched.lab.scenario_spec import Scenario, ScenarioError
from mpsched.lab.scenario_telemetry import controller_args
from mpsched.lab.scenario_workload import SIZE_DISTRIBUTIONS, WORKLOAD_KINDS, Workload
from mpsched.topo.testbed import TopoSpec
from mpsched.validation import KeyCheck, fail, int_in, number, one_of, shown, validate

__all__ = [
    "ADAPTIVE", "BACKENDS", "BASELINES", "COMPARE", "CONGESTION_AWARE", "DEFAULT_FLOWLET_GAP_US",
    "DIRECTIONS", "FABRIC_NOT_RUNNABLE", "PACKET_MIX_PAPERS", "PAPERS", "POLICIES",
    "SIZE_DISTRIBUTIONS", "WORKLOAD_KINDS", "Policy", "Scenario", "ScenarioError", "ScenarioFile",
    "Workload", "load", "parse",
]  # fmt: skip

FABRIC_NOT_RUNNABLE = (
    "a fabric is inspected with `mpsched fabric FILE` and run with `mpsched run` or `mpsched "
    "compare`, not with this command: it handles two edge switches joined by `paths` only"
)


# A scenario's name names its output directory (<out>/<name>/...): one path component.
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")


def _name(value: Any) -> str:
    if not isinstance(value, str) or not NAME.fullmatch(value):
        raise ValueError("must be a letter or digit then up to 63 letters, digits, '.', '_' "
                         f"or '-' (it names the run's output directory), got {shown(value)}")
    return value


def _strip(value: Any) -> str:
    if not isinstance(value, str):
        raise ValueError(f"must be a string, got {shown(value)}")
    return value.strip()


_stripped = BeforeValidator(_strip)


# a scenario's workload list: two edges' (False) or a fabric's (True)
_WORKLOADS = {False: TypeAdapter(list[Workload]), True: TypeAdapter(list[FabricWorkload])}


class ScenarioFile(KeyCheck, BaseModel):
    """A scenario file's top level (scenarios/README.md); `scenario()` is the `Scenario`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: Annotated[str, BeforeValidator(_name)]
    description: Annotated[str, _stripped] = ""
    duration_s: Annotated[float, number(1, MAX_DURATION_S)]
    seed: Annotated[int, int_in(0, 2**31 - 1)] = 1
    warmup_s: Annotated[float, number(0, 60)] = 2.0
    paths: list[PathFile] | None = None  # required unless `fabric` is given
    fabric: FabricFile | None = None
    cluster: ClusterFile | None = None  # only with a fabric (src/mpsched/lab/scenario_cluster.py)
    host_addresses: Annotated[int, int_in(1, 8)] = 1
    host_interfaces: Annotated[int, int_in(1, 4)] = 1
    # required unless `fabric` is given; a fabric's are FabricWorkloads (scenario_fabric.py)
    workload: list[Workload] | list[FabricWorkload] | None = None
    policy: Policy = Policy()
    compare: tuple[Annotated[str, one_of(POLICIES)], ...] = COMPARE
    backend: Annotated[str, one_of(BACKENDS)] = "auto"
    params: dict = {}  # the controller's PUT /params body at start
    telemetry: dict = {}  # the controller's telemetry options (scenario_telemetry.py)
    cpu_bound: CpuRule = CpuRule()

    @field_validator("paths", mode="before")
    @classmethod
    def _path_count(cls, value: Any) -> Any:
        if isinstance(value, list) and not 1 <= len(value) <= MAX_PATHS:
            raise ValueError(f"between 1 and {MAX_PATHS} paths, got {len(value)}")
        return value

    @field_validator("fabric", mode="before")
    @classmethod
    def _fabric_given(cls, value: Any) -> Any:
        if value is None:
            raise ValueError("empty: give leaf_spine or graph (docs/fabric.md)")
        return value

    @field_validator("workload", mode="wrap")
    @classmethod
    def _workload_of_the_topology(
        cls, value: Any, handler: ValidatorFunctionWrapHandler, info: ValidationInfo
    ) -> Any:
        """Two edges' workloads (`Workload`) or a fabric's (`FabricWorkload`), by whether the
        scenario has a `fabric` (declared before `workload`, so validated first)."""
        if value is None:
            return None
        if isinstance(value, list) and not value:
            raise ValueError("at least one workload")
        if "fabric" not in info.data:  # the fabric is invalid: its error is the one reported
            return None
        return _WORKLOADS[info.data["fabric"] is not None].validate_python(
            value, context=info.context)

    @field_validator("policy", mode="before")
    @classmethod
    def _weights_given(cls, value: Any, info: ValidationInfo) -> Any:
        """An empty `weights` list is not the absent one (weights from the rates)."""
        if isinstance(value, dict) and value.get("weights") == []:
            fail("weights", f"one weight per path ({len(info.data.get('paths') or [])})", [])
        return value

    @field_validator("params", mode="before")
    @classmethod
    def _controller_params(cls, value: Any) -> Any:
        """Checked with the controller's own validation, so a bad value fails before the
        testbed starts."""
        if not isinstance(value, dict):
            raise ValueError("must be a mapping (the body of PUT /params)")
        try:
            GlobalParams().updated(value)
        except FieldError as error:
            fail(error.field, error.message)
        return value

    @field_validator("telemetry", mode="before")
    @classmethod
    def _telemetry_options(cls, value: Any) -> Any:
        controller_args(value)  # checked with the controller's parser and checks
        return value

    @model_validator(mode="after")
    def _consistent(self, info: ValidationInfo) -> ScenarioFile:
        if self.fabric is not None:
            return self._fabric_only()
        if self.cluster is not None:
            fail("cluster", "spreads a fabric over servers: needs a fabric")
        for key in ("paths", "workload"):
            if getattr(self, key) is None:
                fail(key, "missing")
        return self._two_edges()

    def _fabric_only(self) -> ScenarioFile:
        """A fabric scenario: no two-edge paths, nothing that names one of their paths."""
        if self.paths is not None:
            fail("fabric", "either paths (two edge switches) or fabric, not both")
        assert self.fabric is not None
        if self.cluster is not None:
            check_cluster(self.cluster, self.fabric.fabric())
            if self.backend == "netem":
                fail("backend", "a cluster emulates links with linkem nodes (netem is no "
                     "node a server can run)", self.backend)
        if self.workload is not None:
            assert self.fabric is not None
            fabric = self.fabric.fabric()
            workloads = [w for w in self.workload if isinstance(w, FabricWorkload)]
            check_against(workloads, fabric, self.duration_s, edge_capacity_mbps(fabric))
        if self.policy.weights:
            fail(("policy", "weights"), "static weights are per path of two edge switches; "
                 "a fabric has paths per pair of edges")
        return self

    def _two_edges(self) -> ScenarioFile:
        assert self.paths is not None and self.workload is not None
        specs = [p.spec() for p in self.paths]
        cross = {i for i, p in enumerate(specs, start=1) if p.cross_traffic}
        for i, w in enumerate(self.workload):
            assert isinstance(w, Workload)
            if w.kind in ("vbr", "cross_bulk"):
                if w.path > len(specs):
                    fail(("workload", i, "path"),
                         f"must be an integer 1..{len(specs)}, got {w.path!r}", w.path)
                if w.path not in cross:
                    fail(("workload", i, "path"), f"path {w.path} has no cross_traffic: true")
            if w.kind == "poisson":
                if not any(p.rate_at(0.0) for p in specs):
                    fail(("workload", i, "load_pct"),
                         "needs paths with a rate_mbps at t=0 (none has)")
                stop = w.stop_s if w.stop_s is not None else self.duration_s
                span = min(self.duration_s, stop) - w.start_s
                if w.drain_s >= span:
                    fail(("workload", i, "drain_s"),
                         f"must be shorter than the workload's time ({span:g} s)", w.drain_s)
        if self.policy.weights:
            if len(self.policy.weights) != len(specs):
                fail(("policy", "weights"), f"one weight per path ({len(specs)})")
            if not any(self.policy.weights):
                fail(("policy", "weights"), "at least one weight > 0")
        return self

    def scenario(self, source: Path | None = None, backend: str | None = None) -> Scenario:
        workload = [w for w in self.workload or [] if isinstance(w, Workload)]
        fabric_workload = [w for w in self.workload or [] if isinstance(w, FabricWorkload)]
        host_addresses = max(
            self.host_addresses,
            max((w.subflows for w in workload if w.mptcp), default=1),
            self.host_interfaces,
        )
        topo = TopoSpec(
            paths=tuple(p.spec() for p in self.paths or []),
            host_interfaces=self.host_interfaces,
            backend=backend or self.backend,
            host_addresses=host_addresses,
        )
        return Scenario(
            name=self.name,
            description=self.description,
            duration_s=self.duration_s,
            seed=self.seed,
            topo=topo,
            workload=tuple(workload),
            policy=self.policy,
            compare=self.compare,
            warmup_s=self.warmup_s,
            source=source,
            params=self.params,
            controller_args=controller_args(self.telemetry),
            cpu_rule=self.cpu_bound,
            fabric=self.fabric.fabric() if self.fabric else None,
            fabric_section=absolute_traces(self.fabric.model_dump(exclude_unset=True),
                                           source.parent if source else Path.cwd())
            if self.fabric else None,
            fabric_workload=tuple(fabric_workload),
            cluster=self.cluster.spec() if self.cluster else None,
        )


def parse(data: Any, source: Path | None = None, backend: str | None = None, *,
          fabric: bool = False) -> Scenario:
    """Validate a scenario document (already parsed from YAML); a `trace` is read relative
    to the file's directory (`source`), else the working directory. A fabric scenario is
    refused (FABRIC_NOT_RUNNABLE) unless `fabric`."""
    base_dir = source.parent if source else Path.cwd()
    where = None if source is None else str(source)
    model = validate(ScenarioFile, data, error=ScenarioError, source=where,
                     context=step_context({"base_dir": base_dir}))
    if model.fabric is not None and not fabric:
        raise ScenarioError("fabric", FABRIC_NOT_RUNNABLE, where)
    return model.scenario(source, backend)


def load(path: str | Path, backend: str | None = None, *, fabric: bool = False) -> Scenario:
    """Read (within `safeload`'s bounds) and validate a scenario file; errors name the file
    and the key. A fabric scenario is refused unless `fabric` (`parse`)."""
    path = Path(path)
    return safeload.load(path, lambda data: parse(data, source=path, backend=backend,
                                                  fabric=fabric), ScenarioError)


_trace_converters = trace_converters  # the CSV trace parsers (tests/test_schedule.py)
