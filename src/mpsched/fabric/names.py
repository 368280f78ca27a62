"""The names the fabric testbed gives its own nodes, and which names a fabric may not use.

Host k behind edge e is the Mininet node `h<e>_<k>` (`host_name`), and with linkem the
emulator of the fabric's i-th link the node `lk<i>` (`emulator_name`,
src/mpsched/topo/fabric_plan.py);
both live in one namespace with the switches, and a cluster's `nodes` map names of all
three (src/mpsched/lab/scenario_cluster.py). A switch or link named like one of them is refused
by the validator (`reserved`), before anything starts.
"""

from __future__ import annotations

import re

EMULATOR_PREFIX = "lk"
RESERVED = re.compile(rf"h[0-9]+_[0-9]+|{EMULATOR_PREFIX}[0-9]+")


def host_name(edge_id: int, k: int) -> str:
    """The name of host k behind edge `edge_id` (a Mininet node)."""
    return f"h{edge_id}_{k}"


def emulator_name(index: int) -> str:
    """The name of the linkem node of the fabric's `index`-th link (from 1)."""
    return f"{EMULATOR_PREFIX}{index}"


def reserved(name: str) -> str | None:
    """Why the testbed keeps `name` for itself (a message), None if it does not."""
    if not RESERVED.fullmatch(name):
        return None
    if name.startswith(EMULATOR_PREFIX):
        return f"{name!r} is the testbed's name of a link emulator ({EMULATOR_PREFIX}<i>)"
    return f"{name!r} is the testbed's name of a host (h<edge>_<k>)"
