"""Which testbed a run of a scenario brings up: the two-edge `Testbed` (h1 - s1 =(paths)= s2 -
h2, src/mpsched/topo/testbed.py) for `paths`, the `FabricTestbed`
(src/mpsched/topo/fabric_testbed.py) for a
`fabric`, over servers (src/mpsched/topo/cluster_testbed.py) when the scenario has a `cluster`. The
runner (runner.py) starts the controller on the testbed's network description and launches
workloads on its hosts by name (`bed.host(name)`; by edge: `bed.hosts()`, edge id -> host
names; addresses: `bed.host_ip(name)`), whichever it is.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mpsched.lab.fabric_workload import mptcp_subflows
from mpsched.lab.scenario import Scenario

if TYPE_CHECKING:
    from mpsched.topo.fabric_testbed import FabricTestbed
    from mpsched.topo.testbed import Testbed


def make_testbed(sc: Scenario, seed: int, log_dir: Path,
                 p4rt_plaintext: bool = False) -> Testbed | FabricTestbed:
    """The testbed of a run of `sc` with emulators seeded by `seed`, logs in `log_dir`
    (not started: it is a context manager); its switches serve P4Runtime over TLS unless
    `p4rt_plaintext` (src/mpsched/topo/bed.py)."""
    if sc.fabric is None:
        from mpsched.topo.testbed import Testbed

        return Testbed(replace(sc.topo, seed=seed, log_dir=log_dir), p4rt_plaintext)
    from mpsched.topo.fabric_testbed import FabricSpec, FabricTestbed

    assert sc.fabric_section is not None, "a fabric scenario keeps its section"
    spec = FabricSpec(sc.fabric_section, sc.fabric, backend=sc.topo.backend, seed=seed,
                      log_dir=log_dir,
                      host_addresses=max(1, mptcp_subflows(sc.fabric_workload)))
    if sc.cluster is not None:
        from mpsched.topo.cluster_testbed import ClusterFabricTestbed

        return ClusterFabricTestbed(spec, sc.cluster)
    return FabricTestbed(spec, p4rt_plaintext)


def delivered_bytes(link_stats: dict[Any, dict]) -> dict[str, int]:
    """Bytes each emulated link delivered so far, per direction: {"<link>:ab": bytes, ...}
    from the testbed's `link_stats()` (a fabric's by link name)."""
    return {
        f"{name}:{direction}": int(counters.get("tx_bytes", 0))
        for name, stats in sorted(link_stats.items(), key=lambda kv: str(kv[0]))
        for direction, counters in sorted(stats.items())
        if isinstance(counters, dict)
    }
