"""Controller objects for the managers' unit tests: a scheduler and pipeline of the fake
two-edge network (tests/unit/controller/fakes.py) and the synthetic P4Info."""

from __future__ import annotations

from mpsched import addressing as ap
from mpsched.controller.scheduling.classes import DEFAULT_CLASS_ID, ClassPolicy, TrafficClass
from mpsched.controller.scheduling.scheduler import GlobalParams, Scheduler
from mpsched.p4rt.p4info import P4Info
from mpsched.p4rt.pipeline import Pipeline
from tests.fake_p4rt import synthetic_p4info

JOIN_SRC = ap.host_ip(ap.SENDER_EDGE, 2)  # h1's second address: an MPTCP join's source


def pipeline() -> Pipeline:
    return Pipeline(P4Info(synthetic_p4info()))


def scheduler(policy: str = "ecmp") -> Scheduler:
    default = TrafficClass(DEFAULT_CLASS_ID, "default", policy=ClassPolicy(policy))
    return Scheduler(["s1", "s2"], [1, 2], [default], GlobalParams())
