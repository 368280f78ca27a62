"""src/mpsched/controller/policies/adaptive_params.py: the adaptive policy's parameters and their
checks."""

from __future__ import annotations

import pytest

from mpsched.controller.model.errors import FieldError
from mpsched.controller.policies import make_policy
from mpsched.controller.policies.adaptive_params import AdaptiveParams
from mpsched.controller.policies.base import QosTarget


def test_the_policy_discounts_with_its_parameter_and_checks_its_range():
    assert make_policy("adaptive", {}).table.discount == 1.0
    assert make_policy("adaptive", {"discount": 0.9}).table.discount == 0.9
    for bad in (0.2, 1.5, "x"):
        with pytest.raises(FieldError) as err:
            make_policy("adaptive", {"discount": bad})
        assert err.value.field == "params.discount"


def test_the_dwell_checks_name_their_field():
    with pytest.raises(FieldError) as err:
        AdaptiveParams(dwell_periods=4, settle_periods=4)
    assert (err.value.field, err.value.message) == ("settle_periods", "must be < dwell_periods")
    with pytest.raises(FieldError) as err:
        AdaptiveParams(dwell_periods=4, settle_periods=1, min_dwell_periods=5)
    assert err.value.field == "min_dwell_periods"
    p = AdaptiveParams(dwell_periods=4, settle_periods=3, min_dwell_periods=4)
    assert (p.dwell_periods, p.settle_periods, p.min_dwell_periods) == (4, 3, 4)


def test_the_arms_and_levels_are_parsed_when_made():
    with pytest.raises(FieldError) as err:
        AdaptiveParams(arms="ecmp,nope")
    assert err.value.field == "arms"
    with pytest.raises(FieldError) as err:
        AdaptiveParams(delay_levels="low:0:0")
    assert err.value.field == "delay_levels"


def test_the_default_target_is_made_of_the_target_fields():
    p = AdaptiveParams(target_min_goodput_frac=0.8, target_max_loss=0.01)
    assert p.default_target() == QosTarget(
        min_goodput_frac=0.8, max_delay_ms=p.target_max_delay_ms, max_loss=0.01,
        max_reorder=p.target_max_reorder,
    )
