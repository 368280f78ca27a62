"""A rich intent and its state-file document, shared by the tests of the state file's model
(test_intent_file.py) and of the state store (test_state.py)."""

from __future__ import annotations

import copy

from mpsched import addressing as ap
from mpsched.controller.intent.state import (
    Intent,
    PathIntent,
)
from mpsched.controller.scheduling.classes import classes_from_list
from mpsched.controller.scheduling.scheduler import GlobalParams

CLASSES = [
    {"id": 0, "name": "default"},
    {
        "id": 1,
        "name": "video",
        "priority": 10,
        "match": {"dscp": 34, "dst": ap.subnet(2), "proto": "udp", "dst_port": [5000, 5010]},
        "policy": {"name": "llhd", "params": {"beta": 0.01}, "lm3": True, "flowlet_gap_us": 2000},
    },
    {"id": 7, "name": "bulk", "priority": 5, "match": {"src_port": 80}},
]
PARAMS = {
    "control_period_ms": 50,
    "step_budget_pct": 10,
    "lm3": {"sigma": 0.3, "epsilon": 0.7},
    "policies": {"llhd": {"beta": 0.002}, "qos": {"max_delay_ms": 40}},
    "mptcp": {"steering": False, "idle_timeout_s": 30},
}


def rich_intent() -> Intent:
    return Intent(
        tuple(classes_from_list(CLASSES)),
        GlobalParams().updated(PARAMS),
        {1: PathIntent(3, True), 2: PathIntent(0, False)},
    )


def valid_doc() -> dict:
    return rich_intent().to_json()


def set_at(doc: dict, dotted: str, value) -> dict:
    """`doc` with the value at `dotted` (list indices as numbers) replaced; `...` deletes."""
    doc = copy.deepcopy(doc)
    *parents, last = dotted.split(".")
    node = doc
    for part in parents:
        node = node[int(part)] if isinstance(node, list) else node[part]
    key = int(last) if isinstance(node, list) else last
    if value is ...:
        del node[key]
    else:
        node[key] = value
    return doc
