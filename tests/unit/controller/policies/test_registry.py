"""src/mpsched/controller/policies/registry.py: every policy registered under its name, lookups of
unknown
names, a name registered twice."""

from __future__ import annotations

import pytest

from mpsched.controller.model.errors import FieldError
from mpsched.controller.policies import REGISTRY, make_policy, policy_names, register
from tests.unit.controller.policies.helpers import NAMES


def test_registry_has_every_policy():
    make_policy("ecmp")
    assert set(REGISTRY) == NAMES
    for name in NAMES:
        assert make_policy(name).name == name


def test_unknown_policy_names_the_field():
    with pytest.raises(FieldError) as err:
        make_policy("nope")
    assert err.value.field == "policy"


def test_policy_names_are_sorted_and_a_name_registers_once():
    assert policy_names() == sorted(NAMES)
    ecmp = REGISTRY["ecmp"]
    assert register(ecmp) is ecmp  # the same class again: no change
    other = type("OtherEcmp", (ecmp,), {})
    with pytest.raises(ValueError, match="'ecmp' registered twice"):
        register(other)
    assert REGISTRY["ecmp"] is ecmp


def test_make_policy_names_parameters_below_the_prefix():
    assert make_policy("llhd", {"beta": 0.5}).params.beta == 0.5
    with pytest.raises(FieldError) as err:
        make_policy("llhd", {"beta": -1}, prefix="classes[1].policy.params.")
    assert err.value.field == "classes[1].policy.params.beta"


@pytest.mark.parametrize("name", sorted(n for n, cls in REGISTRY.items() if cls.repeats))
def test_a_policy_that_says_it_repeats_decides_alike_on_equal_paths(name):
    from mpsched.controller.model.paths import PathState

    paths = [
        PathState(1, True, srtt_ms=20.0, rtt_min_ms=10.0, loss_rate=0.01, goodput_mbps=40.0,
                  capacity_mbps=100.0, inflight_bytes=50_000),
        PathState(2, True, srtt_ms=35.0, rtt_min_ms=30.0, loss_rate=0.0, goodput_mbps=10.0,
                  capacity_mbps=50.0, inflight_bytes=1_000),
    ]
    policy = make_policy(name)
    first = policy.decide(paths, 1.0)
    again = policy.decide(paths, 2.0)
    assert (again.weights, again.mode, again.scores) == (first.weights, first.mode, first.scores)


def test_the_stateful_policies_do_not_say_they_repeat():
    for name in ("adaptive", "cmtla", "fdmvqs", "qos"):
        assert REGISTRY[name].repeats is False
