"""Fakes of the controller's collaborators for the unit tests of its managers: a two-edge
network, switch agents that run their jobs on a fake client, a P4Runtime client that
records writes, clocks the test moves."""

from __future__ import annotations

from concurrent.futures import Future

from mpsched.controller.southbound.agent_model import AgentStatus
from mpsched.netcfg import NetCfg, SwitchCfg
from mpsched.p4rt.client import P4RuntimeError


def two_edges() -> NetCfg:
    """s1 (10.0.1.0/24) and s2 (10.0.2.0/24), joined by paths 1 (10 Mb/s) and 2."""

    def edge(n: int) -> dict:
        return {
            "name": f"s{n}",
            "device_id": n,
            "grpc_address": "127.0.0.1:1",
            "mac": f"00:00:0a:00:0{n}:fe",
            "subnets": [f"10.0.{n}.0/24"],
            "hosts": [],
            "paths": [{"id": 1, "port": 2, "rate_mbps": 10}, {"id": 2, "port": 3}],
        }

    return NetCfg.from_dict({"switches": [edge(1), edge(2)]})


class FakeClient:
    """Records the writes of jobs (table entries in `calls`, clone sessions in `sessions`);
    `fail` makes every write raise it."""

    def __init__(self, fail: Exception | None = None) -> None:
        self.fail = fail
        self.calls: list[tuple] = []
        self.sessions: list = []

    def _write(self, op: str, *entries) -> None:
        if self.fail is not None:
            raise self.fail
        self.calls.append((op, *entries))

    def modify(self, *entries) -> None:
        self._write("modify", *entries)

    def insert(self, *entries) -> None:
        self._write("insert", *entries)

    def delete(self, *entries) -> None:
        self._write("delete", *entries)

    def replace_entries(self, old, new) -> None:
        self._write("replace", tuple(old), tuple(new))

    def insert_clone_sessions(self, *sessions) -> None:
        if self.fail is not None:
            raise self.fail
        self.sessions += sessions

    modify_clone_sessions = insert_clone_sessions


class FakeAgent:
    """A switch's agent: `submit` runs the job at once on its FakeClient (or fails it while
    `down`)."""

    def __init__(self, sw: SwitchCfg, state: str = "ready", error: str | None = None) -> None:
        self.sw = sw
        self.status = AgentStatus(state, error)
        self.client = FakeClient()
        self.jobs = 0

    def submit(self, job) -> Future:
        future: Future = Future()
        self.jobs += 1
        if self.status.state == "down":
            future.set_exception(P4RuntimeError(f"{self.sw.name} is down"))
            return future
        try:
            future.set_result(job(self.client))
        except Exception as error:  # handed to the caller, as the agent does
            future.set_exception(error)
        return future


# A leaf-spine of 3 leaves (edges 1..3, one host each) and 2 spines (docs/fabric.md).
LEAF_SPINE = {
    "leaf_spine": {"leaves": 3, "spines": 2, "hosts_per_leaf": 1,
                   "link": {"rate_mbps": 10, "delay_ms": 1}},
}
# Edges a - b - c in a line and a transit switch t joining a and c: a -> c's path 1 crosses
# the edge b (an edge as another pair's transit hop, as in a WAN), path 2 crosses t.
LINE = {
    "graph": {
        "paths_per_pair": 2,
        "switches": [{"name": "a", "role": "edge"}, {"name": "b", "role": "edge"},
                     {"name": "c", "role": "edge"}, {"name": "t", "role": "transit"}],
        "link": {"rate_mbps": 10, "delay_ms": 1},
        "links": [{"a": "a", "b": "b"}, {"a": "b", "b": "c", "rate_mbps": 5},
                  {"a": "a", "b": "t"}, {"a": "t", "b": "c"}],
    },
}

# Edges a and c joined by three paths: a t3 c alone, and a x t1 c, a x t2 c, which share the
# link a-x (20 Mbit/s, twice their 10 Mbit/s bottleneck: overlap 0.5, docs/mptcp.md).
SHARED = {
    "graph": {
        "paths_per_pair": 3,
        "switches": [{"name": "a", "role": "edge"}, {"name": "c", "role": "edge"},
                     *({"name": n, "role": "transit"} for n in ("x", "t1", "t2", "t3"))],
        "link": {"rate_mbps": 10, "delay_ms": 1},
        "links": [{"a": "a", "b": "x", "rate_mbps": 20}, {"a": "x", "b": "t1"},
                  {"a": "x", "b": "t2"}, {"a": "t1", "b": "c"}, {"a": "t2", "b": "c"},
                  {"a": "a", "b": "t3"}, {"a": "t3", "b": "c"}],
    },
}


def fabric(section: dict | None = None) -> NetCfg:
    """The network description of a fabric (src/mpsched/fabric/netdesc.py); LEAF_SPINE unless
    given."""
    from mpsched.fabric.files import parse_fabric
    from mpsched.fabric.netdesc import describe

    section = section or LEAF_SPINE
    return describe(section, parse_fabric(section), lambda i: f"127.0.0.1:{i}")


class Clocks:
    """A wall clock and a process CPU clock the test moves
    (src/mpsched/controller/runtime/governor.py)."""

    def __init__(self) -> None:
        self.wall = self.cpu = 0.0

    def run(self, seconds: float, cpu_share: float) -> None:
        """`seconds` of wall time in which the process used `cpu_share` of a core."""
        self.wall += seconds
        self.cpu += seconds * cpu_share
