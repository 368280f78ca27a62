"""Per (switch, class) state: LM3's blocking events, learned state carried over, the decision
log's entries (src/mpsched/controller/scheduling/class_state.py)."""

from __future__ import annotations

import logging

from mpsched.controller.model.decision import CaCost, CaPath, Decision, Mode
from mpsched.controller.model.errors import FieldError
from mpsched.controller.model.placement import Placement
from mpsched.controller.policies import make_policy
from mpsched.controller.policies.lm3 import Lm3
from mpsched.controller.scheduling.class_state import ClassState, blocking, carry, log_entry
from mpsched.controller.scheduling.classes import ClassPolicy, TrafficClass

CLASS = TrafficClass(3, "bulk", policy=ClassPolicy("ecmp", lm3=True))


def state(lm3: bool = True) -> ClassState:
    return ClassState(CLASS, make_policy("ecmp"), Lm3(Lm3.Params(blocking_threshold=4)) if lm3
                      else None)


def test_blocking_counts_the_increase_since_the_last_period():
    st = state()
    assert blocking(st, {1: 100, 2: 50}) == 0  # first period: nothing to compare with
    # +6 on path 1, +3 on path 2: 9 overtaken packets, 4 per event -> 2
    assert blocking(st, {1: 106, 2: 53}) == 2
    assert st.ooo == {1: 106, 2: 53}


def test_blocking_ignores_a_counter_that_restarted_or_a_new_path():
    st = state()
    blocking(st, {1: 100})
    assert blocking(st, {1: 10, 2: 40}) == 0  # path 1 went back (egress restart), 2 is new
    assert blocking(st, {1: 18, 2: 40}) == 2


def test_blocking_without_lm3_is_zero_but_keeps_the_totals():
    st = state(lm3=False)
    blocking(st, {1: 0})
    assert blocking(st, {1: 1000}) == 0
    assert st.ooo == {1: 1000}


class Learner:
    """A stand-in learning policy: what it learned, and what it was handed."""

    name = "learner"

    def __init__(self, data=None, fail: bool = False) -> None:
        self.data, self.fail, self.got = data, fail, None

    def learned(self):
        return self.data

    def restore_learned(self, data, where):
        if self.fail:
            raise FieldError(where, "malformed")
        self.got = data


class OtherLearner(Learner):
    name = "other"


def test_carry_hands_what_was_learned_to_a_policy_of_the_same_kind():
    new = Learner()
    carry(Learner({"table": 1}), new)
    assert new.got == {"table": 1}


def test_carry_skips_another_kind_or_nothing_learned():
    other = OtherLearner()
    carry(Learner({"table": 1}), other)
    assert other.got is None
    fresh = Learner()
    carry(Learner(None), fresh)
    assert fresh.got is None


def test_carry_logs_instead_of_raising_when_the_new_policy_rejects_it(caplog):
    with caplog.at_level(logging.WARNING):
        carry(Learner({"table": 1}), Learner(fail=True))
    assert "not carried over" in caplog.text


def test_log_entry_names_the_policy_its_active_paths_and_the_cost():
    cost = CaCost(paths={2: CaPath(offset_us=500.0, capacity_mbps=10.0)})
    pl = Placement(((1, 0), (2, 255)), "ca", 1000, ca=cost)
    d = Decision({2: 1.0}, Mode.CA, {1: 0.25, 2: 0.1234567}, "least cost")
    entry = log_entry(12.34567, "s1", state(), d, pl)
    assert entry["t"] == 12.346 and entry["switch"] == "s1" and entry["class_id"] == 3
    assert entry["policy"] == "ecmp+lm3"
    assert entry["weights"] == {"1": 0, "2": 255} and entry["active"] == [2]
    assert entry["scores"] == {"1": 0.25, "2": 0.123457}
    assert entry["reason"].startswith("least cost | ca: ")
    assert entry["ca"]["paths"] == {"2": {"offset_us": 500.0, "capacity_mbps": 10.0}}
    plain = log_entry(0.0, "s1", state(lm3=False), d, Placement(((2, 255),), "hash", 0))
    assert plain["policy"] == "ecmp" and "ca" not in plain and plain["reason"] == "least cost"


def test_log_entry_keeps_the_measurements_the_policy_decided_on():
    """What the dashboard words a reason from: per path alive and its measurements, rounded;
    unmeasured ones left out."""
    from mpsched.controller.model.paths import PathState

    d = Decision({1: 1.0, 2: 0.0}, Mode.FLOWLET, {}, "lower delay")
    paths = [PathState(1, True, srtt_ms=12.345678, owd_ms=2.0, loss_rate=0.00012,
                       goodput_mbps=9.5, capacity_mbps=10.0),
             PathState(2, False)]
    entry = log_entry(0.0, "s1", state(lm3=False), d, Placement(((1, 255), (2, 0)), "flowlet", 0),
                      paths)
    assert entry["inputs"] == {
        "1": {"alive": True, "srtt_ms": 12.3457, "owd_ms": 2.0, "loss": 0.0001,
              "goodput_mbps": 9.5, "capacity_mbps": 10.0},
        "2": {"alive": False},
    }
    assert log_entry(0.0, "s1", state(lm3=False), d, Placement(((1, 255),), "hash", 0))[
        "inputs"] == {}
