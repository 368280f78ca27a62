"""The operator's side of `make bench-reliability`'s controller sections
(src/mpsched/bench/reliability.py): the intent written before a controller restart, read back
and compared after it, and the write a backup controller accepts once it took over."""

from __future__ import annotations

import time
from typing import Any

from mpsched.client.rest import ControllerError, RestClient

WRITE_EVERY_S = 0.01

# What the operator writes before the controller restart (each a kind of intent).
INTENT_CLASSES = {
    "classes": [
        {"id": 0, "name": "default"},
        {
            "id": 1,
            "name": "voice",
            "priority": 10,
            "match": {"dscp": 46},
            "policy": {"name": "llhd", "params": {"beta": 0.01}, "lm3": True},
        },
    ]
}
INTENT_PARAMS = {"control_period_ms": 50, "policies": {"cmtla": {"mss_bytes": 1400}}}


def intent_view(rest: RestClient) -> dict[str, Any]:
    """What an operator wrote, as the REST API shows it: classes with their policies (not
    their placements), parameters (not their schema), admin states and weights."""
    classes = [
        {k: v for k, v in c.items() if k != "placement"} for c in rest.get("/classes")
    ]
    params = {k: v for k, v in rest.get("/params").items() if k != "schema"}
    paths = {p["id"]: {"admin": p["admin"], "weight": p["weight"]} for p in rest.get("/paths")}
    return {"classes": classes, "params": params, "paths": paths}


def differences(before: Any, after: Any, where: str = "") -> list[str]:
    """Where two JSON values differ (dotted paths), empty when equal."""
    if isinstance(before, dict) and isinstance(after, dict):
        out = []
        for key in sorted(set(before) | set(after), key=str):
            out += differences(before.get(key), after.get(key), f"{where}.{key}".lstrip("."))
        return out
    if isinstance(before, list) and isinstance(after, list) and len(before) == len(after):
        return [d for i, (a, b) in enumerate(zip(before, after, strict=True))
                for d in differences(a, b, f"{where}[{i}]")]  # fmt: skip
    return [] if before == after else [f"{where}: {before!r} -> {after!r}"]


def set_intent(rest: RestClient) -> None:
    rest.put("/paths/2/weight", {"weight": 3})
    rest.put("/classes", INTENT_CLASSES)
    rest.put("/params", INTENT_PARAMS)
    rest.put("/paths/3/admin", {"state": "down"})


def write_until_accepted(rest: RestClient, limit_s: float) -> float | None:
    """Seconds until a harmless write (the default class's policy, unchanged) is
    acknowledged, trying every WRITE_EVERY_S; None if not within `limit_s`."""
    start = time.monotonic()
    body = {"name": rest.get("/classes/0/policy")["name"]}
    while time.monotonic() - start < limit_s:
        try:
            rest.put("/classes/0/policy", body)
            return time.monotonic() - start
        except ControllerError as error:
            if error.status not in (409, 503, None):
                raise
        except OSError:
            pass
        time.sleep(WRITE_EVERY_S)
    return None
