"""Starting a fabric's traffic in a run: sinks, receiver-side captures and senders on hosts.

The runner (src/mpsched/lab/runner.py) hands its `Run` and the testbed's hosts (edge id -> host
names, `hosts_from_names`; or the addressing plan's, `fabric_workload.plan_hosts`) to
`FabricTraffic`, which uses the run's own machinery (processes in hosts with their logs and
JSON reports, timers that start senders at their time, the run's seed):

- a sink on every host some workload sends to, one per workload: ``sink<i>_<host>`` on
  port ``BASE_PORT + i``;
- a capture (tcpdump) of the TCP traffic towards every receiving host, ``<host>.pcap``
  (reordering per pair of edges, src/mpsched/lab/fabric_analysis.py);
- per `SenderPlan` one traffic generator on its source host at the workload's start:
  ``send<i>_<host>`` (role ``plan``: the flows, written to ``<name>.flows.json``, each to
  its destination) or ``send<i>_<j>_<host>`` (role ``bulk``: pair j of a bulk workload).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from mpsched import addressing as ap
from mpsched.lab.fabric_workload import FabricHost, Hosts, SenderPlan, receivers, sender_plans
from mpsched.lab.scenario_fabric import HOST_NAME


def hosts_from_names(names: Mapping[int, Sequence[str]]) -> dict[int, tuple[FabricHost, ...]]:
    """The testbed's hosts (edge id -> host names ``h<e>_<k>``) with their addresses from the
    addressing plan (host k of edge e at ``10.0.e.k``, src/mpsched/addressing.py)."""
    out = {}
    for edge, hosts in names.items():
        found = []
        for name in hosts:
            match = HOST_NAME.fullmatch(name)
            if not match or int(match[1]) != edge:
                raise ValueError(f"host {name!r} of edge {edge}: not named h{edge}_<k>")
            k = int(match[2])
            found.append(FabricHost(name, edge, k, ap.host_ip(edge, k)))
        out[edge] = tuple(sorted(found, key=lambda h: h.k))
    return out


def sink_args(index: int, base_port: int) -> list[str]:
    return ["sink", "--port", str(base_port + index), "--peers"]


def sender_args(plan: SenderPlan, base_port: int, seed: int, flows_file: Path) -> list[str]:
    """The `mpsched.traffic.gen` role arguments of `plan` (its seed: the run's, per workload,
    as the two-edge runner's ``seed * 100 + index``)."""
    common = ["--port", str(base_port + plan.index), "--seconds", f"{plan.seconds:g}",
              "--seed", str(seed * 100 + plan.index)]
    if plan.kind == "bulk":
        assert plan.dst is not None
        mptcp = ["--mptcp"] if plan.mptcp else []
        return ["bulk", "--dst", plan.dst.address, *common, "--streams", str(plan.streams),
                *mptcp]
    # --dst is required by every client role; each flow of the plan names its own
    return ["plan", "--dst", plan.flows[0].dst if plan.flows else "0.0.0.0", *common,
            "--flows", str(flows_file)]


def flows_document(plan: SenderPlan) -> dict[str, Any]:
    """The `plan` role's schedule file (src/mpsched/traffic/gen/openloop.py `read_flows`)."""
    return {"host": plan.host.name, "flows": [[f.at, f.dst, f.size] for f in plan.flows]}


def capture_args(host: FabricHost, interface: str, path: Path) -> list[str]:
    """tcpdump of the TCP packets towards `host`, buffered as the two-edge capture is
    (runner.py `_capture`: no per-packet wake-up)."""
    return ["tcpdump", "-i", interface, "-s", "96", "-B", "8192", "-n", "-w", str(path),
            f"tcp and dst host {host.address}"]


class FabricTraffic:
    """A run's fabric workloads: `start_receivers` before the measured time, `schedule` at
    its start (t0, time.monotonic()). `run` is the runner's `Run` (its `_gen`, `_popen`,
    `_fail`, `lock`, `closing`, `failure`, `bed`, `raw`, `seed`)."""

    def __init__(self, run: Any, hosts: Hosts, base_port: int) -> None:
        sc = run.scenario
        self.run = run
        self.hosts = hosts
        self.base_port = base_port
        self.plans = sender_plans(sc.fabric_workload, sc.fabric, sc.duration_s, run.seed, hosts)

    def start_receivers(self) -> None:
        """A sink per (workload, receiving host), a capture per receiving host."""
        wanted = receivers(self.plans, self.hosts)
        for index, host in wanted:
            self.run._gen(host.name, sink_args(index, self.base_port), f"sink{index}_{host.name}")
        for host in dict.fromkeys(h for _, h in wanted):
            path = self.run.raw.dir / f"{host.name}.pcap"
            interface = self.run.bed.host(host.name).defaultIntf().name
            self.run._popen(host.name, capture_args(host, interface, path),
                            f"tcpdump_{host.name}")
            self.run.raw.captures[host.name] = path

    def schedule(self, t0: float) -> list[threading.Timer]:
        """One timer per plan, starting its sender at the workload's start."""
        timers = []
        for plan in self.plans:
            flows = self.run.raw.dir / f"{plan.name}.flows.json"
            if plan.kind != "bulk":
                flows.write_text(json.dumps(flows_document(plan)))
            args = sender_args(plan, self.base_port, self.run.seed, flows)
            timer = threading.Timer(max(0.0, t0 + plan.start_s - time.monotonic()),
                                    self._launch, (plan, args))
            timer.daemon = True
            timer.start()
            timers.append(timer)
        return timers

    def _launch(self, plan: SenderPlan, args: list[str]) -> None:
        run = self.run
        try:
            with run.lock:  # no sender starts once the run is closing
                if run.closing or run.failure is not None or run.bed is None:
                    return
                run._gen(plan.host.name, args, plan.name)
        except Exception as exc:
            run._fail(f"workload {plan.index} on {plan.host.name}: {exc}")
