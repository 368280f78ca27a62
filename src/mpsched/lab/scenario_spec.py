"""The scenario a run uses: what a scenario file (src/mpsched/lab/scenario.py) describes once
validated, with the capacities, offered loads and policy requests computed from it."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from mpsched.fabric.model import Fabric
from mpsched.lab.cpu import CpuRule
from mpsched.lab.scenario_cluster import ClusterSpec
from mpsched.lab.scenario_fabric import FabricWorkload
from mpsched.lab.scenario_policy import COMPARE, POLICIES, Policy
from mpsched.lab.scenario_workload import Workload
from mpsched.topo.testbed import TopoSpec
from mpsched.validation import InputError


class ScenarioError(InputError):
    """An invalid scenario: `field` the path of the bad key, `source` the file."""


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
    # the controller's command-line options from the file's `telemetry` (scenario_telemetry.py)
    controller_args: tuple[str, ...] = ()
    cpu_rule: CpuRule = field(default_factory=CpuRule)  # when a run counts as CPU-bound
    fabric: Fabric | None = None  # a fabric scenario (then `topo` has no paths, no workload)
    # the scenario's fabric section as written: the network description's `fabric`
    fabric_section: dict | None = None
    fabric_workload: tuple[FabricWorkload, ...] = ()  # a fabric scenario's workload (kinds of
    # its own, between the hosts behind its edges: src/mpsched/lab/scenario_fabric.py)
    cluster: ClusterSpec | None = None  # a fabric spread over servers (scenario_cluster.py)

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
