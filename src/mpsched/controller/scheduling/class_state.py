"""The scheduler's state per (switch, class): its policy and LM3 instances and what it wrote.

Between periods a class keeps its policy and LM3 instances (their histories), the placement
last written (`last`) and the flow_ooo totals LM3's blocking events are counted from. A
policy or parameter change makes new instances; what a learning policy learned goes with it
(`carry`). Every written placement, and a new policy's first decision, is logged with the
policy's reason and the measurements it decided on (`log_entry`; the dashboard words the
reason from them).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from mpsched.controller.model.decision import Decision
from mpsched.controller.model.errors import FieldError
from mpsched.controller.model.paths import PathState
from mpsched.controller.model.placement import Placement
from mpsched.controller.policies.base import Policy
from mpsched.controller.policies.ca import fmt_ca
from mpsched.controller.policies.lm3 import Lm3
from mpsched.controller.scheduling.classes import TrafficClass
from mpsched.controller.scheduling.placement import ca_dict

log = logging.getLogger(__name__)


@dataclass
class ClassState:
    """One (switch, class): its policy and LM3 instances and the placement it last wrote."""

    cls: TrafficClass
    policy: Policy
    lm3: Lm3 | None
    last: Placement | None = None
    ooo: dict[int, int] = field(default_factory=dict)  # path -> flow_ooo total last period
    logged: bool = False  # a new policy's first decision is logged even if nothing changes


def carry(old: Policy, new: Policy) -> None:
    """What `old` learned goes to `new` when a change of policy or parameters replaces it by
    one of the same kind (a learning policy keeps its table across a parameter change)."""
    data = old.learned()
    if data is None or type(old) is not type(new):
        return
    try:
        new.restore_learned(data, "learned")
    except FieldError as error:
        log.warning("learned state of %s not carried over: %s", old.name, error)


def blocking(st: ClassState, totals: Mapping[int, int]) -> int:
    """LM3's buffer-blocking events this period, from the packets overtaken within their
    flow (egress flow_ooo) on the switch's paths since the last period. The egress counts
    per path, not per class: every LM3 class of a switch sees the same events."""
    delta = 0
    for p, total in totals.items():
        before = st.ooo.get(p)
        if before is not None and total >= before:
            delta += total - before
    st.ooo = dict(totals)
    return st.lm3.blocking_events(delta) if st.lm3 is not None else 0


# What a decision's `inputs` give per path (PathState field -> the entry's key): what an
# operator compares paths by; the rest of a PathState stays in GET /telemetry.
INPUT_FIELDS = (("srtt_ms", "srtt_ms"), ("owd_ms", "owd_ms"), ("loss_rate", "loss"),
                ("goodput_mbps", "goodput_mbps"), ("capacity_mbps", "capacity_mbps"))


def path_inputs(paths: Sequence[PathState]) -> dict[str, dict[str, Any]]:
    """Per path (id as a string): `alive` and the measurements of INPUT_FIELDS it has, rounded
    to 4 decimals (unmeasured ones are left out)."""
    out: dict[str, dict[str, Any]] = {}
    for p in paths:
        entry: dict[str, Any] = {"alive": p.alive}
        for attr, key in INPUT_FIELDS:
            value = getattr(p, attr)
            if value is not None:
                entry[key] = round(value, 4)
        out[str(p.path_id)] = entry
    return out


def log_entry(
    now: float, switch: str, st: ClassState, d: Decision, pl: Placement,
    paths: Sequence[PathState] = (),
) -> dict[str, Any]:
    """The decision log's entry of one (switch, class) decision and its placement; `paths`:
    what the policy decided on (the entry's `inputs`)."""
    return {
        "t": round(now, 3),
        "switch": switch,
        "class_id": st.cls.id,
        "policy": st.cls.policy.name + ("+lm3" if st.lm3 is not None else ""),
        "weights": {str(p): w for p, w in pl.weights},
        "active": sorted(p for p, w in pl.weights if w > 0),
        "mode": pl.mode,
        "scores": {str(p): round(s, 6) for p, s in sorted(d.scores.items())},
        "reason": d.reason + (f" | ca: {fmt_ca(pl.ca)}" if pl.ca is not None else ""),
        **({"ca": ca_dict(pl.ca)} if pl.ca is not None else {}),
        "inputs": path_inputs(paths),
    }
