"""controller/scheduling/params_changes.py: the model of a partial update of the global
parameters (``PUT /params``): what it accepts, the errors naming the field, and the JSON schema
the REST description serves from it. (Changes applied to a running scheduler:
test_scheduler.py.)"""

from __future__ import annotations

import pytest

from mpsched.controller.errors import FieldError, checked
from mpsched.controller.policies import REGISTRY
from mpsched.controller.scheduling.params_changes import (
    MAX_CONTROL_PERIOD_MS,
    MIN_CONTROL_PERIOD_MS,
    TOP_KEYS,
    params_changes_model,
)


def test_one_model_and_every_key_optional():
    model = params_changes_model()
    assert params_changes_model() is model
    empty = checked(model, {})
    assert empty.policies is None and empty.lm3 is None and empty.mptcp is None
    some = checked(model, {"control_period_ms": 20, "policies": {"llhd": {"beta": 2}}})
    assert some.control_period_ms == 20.0 and isinstance(some.control_period_ms, float)
    assert some.policies.llhd.beta == 2.0
    assert some.policies.ecmp is None


@pytest.mark.parametrize(
    ("changes", "field", "message"),
    [
        ({"bogus": 1}, "bogus", "unknown parameter; known: " + ", ".join(TOP_KEYS)),
        ({"policies": {"nope": {}}}, "policies.nope", "no such policy; known: "),
        ({"policies": {"llhd": {"beta": -1}}}, "policies.llhd.beta", ""),
        ({"policies": 3}, "policies", "must be an object"),
        ({"lm3": []}, "lm3", "must be an object"),
        ({"mptcp": {"idle_timeout_s": 0}}, "mptcp.idle_timeout_s", ""),
        ({"control_period_ms": True}, "control_period_ms", "must be a number 10..10000"),
        ({"control_period_ms": 9.5}, "control_period_ms", "got 9.5"),
    ],
)
def test_errors_name_the_field(changes, field, message):
    with pytest.raises(FieldError) as err:
        checked(params_changes_model(), changes)
    assert err.value.field == field
    assert message in err.value.message


def test_the_schema_lists_every_policy_and_the_periods_bounds():
    schema = params_changes_model().model_json_schema()
    assert set(schema["properties"]) == set(TOP_KEYS)
    period = schema["properties"]["control_period_ms"]
    assert (period["minimum"], period["maximum"]) == (MIN_CONTROL_PERIOD_MS,
                                                     MAX_CONTROL_PERIOD_MS)
    policies = schema["$defs"]["PolicyParams"]["properties"]
    assert set(policies) == set(REGISTRY)
