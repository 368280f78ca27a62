"""src/mpsched/controller/policies/adaptive_arms.py: the arms' parsing, with parameters; errors name
the arm."""

from __future__ import annotations

import pytest

from mpsched.controller.model.errors import FieldError
from mpsched.controller.policies import make_policy
from mpsched.controller.policies.adaptive_arms import (
    parse_arms,
)


def test_arms_parse_with_parameters_and_errors_name_the_arm():
    arms = parse_arms("ecmp, llhd+lm3:beta=0.01;weighted=false, qos-ca:max_loss=0.02")
    assert [a.label for a in arms] == [
        "ecmp", "llhd+lm3:beta=0.01;weighted=false", "qos-ca:max_loss=0.02"
    ]
    assert arms[1].lm3 and dict(arms[1].params) == {"beta": 0.01, "weighted": False}
    policy, lm3 = arms[1].make()
    assert policy.params.beta == 0.01 and lm3 is not None
    for spec, piece in [
        ("nope", "no policy 'nope'"),
        ("adaptive", "no policy 'adaptive'"),
        ("llhd:beta=-1", "arm 'llhd:beta=-1': beta: must be >= 0"),
        ("llhd:beta", "is not key=value"),
        ("ecmp,ecmp", "given twice"),
    ]:
        with pytest.raises(FieldError) as err:
            make_policy("adaptive", {"arms": spec})
        assert err.value.field == "params.arms" and piece in err.value.message
    with pytest.raises(FieldError) as err:
        make_policy("adaptive", {"dwell_periods": 3, "settle_periods": 3})
    assert err.value.field == "params.settle_periods"
    with pytest.raises(FieldError) as err:
        make_policy("adaptive", {"exploration": "greedy"})
    assert err.value.field == "params.exploration"
