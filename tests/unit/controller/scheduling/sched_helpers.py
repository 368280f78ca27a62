"""What the scheduler's tests share (test_scheduler.py, test_scheduler_changes.py): the
switches and paths, the path states of the LM3 and LLHD cases, and small builders."""

from __future__ import annotations

from mpsched.controller.model.paths import PathState
from mpsched.controller.model.placement import Change, Placement
from mpsched.controller.model.switch import SwitchView
from mpsched.controller.scheduling.classes import DEFAULT_CLASS_ID, ClassPolicy, TrafficClass
from mpsched.controller.scheduling.scheduler import Scheduler

SWITCHES = ("s1", "s2")
PATH_IDS = [1, 2, 3]
ALL_UP = [PathState(1, True), PathState(2, True), PathState(3, True)]
ALL_255 = ((1, 255), (2, 255), (3, 255))

# LM3's R over these (see test_policies_lm3.py): R_1 = 7/12, R_2 = 5/6, R_3 = 0,
# so halving keeps {1, 2}, then {2}.
LM3_PATHS = [
    PathState(1, True, srtt_ms=10.0, capacity_mbps=10.0),
    PathState(2, True, srtt_ms=20.0, capacity_mbps=10.0),
    PathState(3, True, srtt_ms=40.0, capacity_mbps=2.0),
]

# LLHD gamma_p = GP_p / GP_max + beta * RTT_max / RTT_p:
#   beta 0.001: 1 + 0.004 = 1.004 and 0.5 + 0.001 = 0.501 -> 255, round(127.24) = 127
#   beta 2:     1 + 8 = 9         and 0.5 + 2 = 2.5       -> 255, round(70.83) = 71
LLHD_PATHS = [
    PathState(1, True, srtt_ms=10.0, goodput_mbps=10.0),
    PathState(2, True, srtt_ms=40.0, goodput_mbps=5.0),
]
LLHD_DEFAULT = ((1, 255), (2, 127))
LLHD_BETA2 = ((1, 255), (2, 71))


def default_class(policy: ClassPolicy | None = None) -> TrafficClass:
    return TrafficClass(DEFAULT_CLASS_ID, "default", policy=policy or ClassPolicy())


def view(paths, switch: str = "s1", ooo=None) -> SwitchView:
    return SwitchView(switch, list(paths), dict(ooo or {}))


def sched(classes=None, path_ids=PATH_IDS, **kw) -> Scheduler:
    return Scheduler(SWITCHES, path_ids, classes, **kw)


def only(changes: list[Change]) -> Placement:
    assert len(changes) == 1
    return changes[0].placement
