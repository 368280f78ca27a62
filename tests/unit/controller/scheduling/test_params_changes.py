"""src/mpsched/controller/scheduling/params_changes.py: the model of a partial update of the global
parameters (``PUT /params``): what it accepts, the errors naming the field, and the JSON schema
the REST description serves from it. (Changes applied to a running scheduler:
test_scheduler.py.)"""

from __future__ import annotations

import pytest

from mpsched.controller.model.errors import FieldError, checked
from mpsched.controller.policies import REGISTRY
from mpsched.controller.scheduling.params_changes import (
    MAX_CONTROL_PERIOD_MS,
    MAX_STEP_BUDGET_PCT,
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
        ({"step_budget_pct": 0}, "step_budget_pct", "must be a number > 0 and <= 100, got 0"),
        ({"step_budget_pct": -1}, "step_budget_pct", "got -1"),
        ({"step_budget_pct": 101}, "step_budget_pct", "got 101"),
        ({"step_budget_pct": 100.5}, "step_budget_pct", "got 100.5"),
        ({"step_budget_pct": "25"}, "step_budget_pct", "got '25'"),
        ({"step_budget_pct": True}, "step_budget_pct", "got True"),
        ({"step_budget_pct": float("nan")}, "step_budget_pct", "got nan"),
        ({"step_budget_pct": None}, "step_budget_pct", "got None"),
    ],
)
def test_errors_name_the_field(changes, field, message):
    with pytest.raises(FieldError) as err:
        checked(params_changes_model(), changes)
    assert err.value.field == field
    assert message in err.value.message


def test_the_step_budget_takes_a_share_of_the_period_up_to_all_of_it():
    """> 0 and <= 100 (percent); an int becomes a float, as the period's."""
    for value in (0.5, 25, 100):
        pct = checked(params_changes_model(), {"step_budget_pct": value}).step_budget_pct
        assert pct == float(value) and isinstance(pct, float)


def test_the_schema_lists_every_policy_and_the_periods_bounds():
    schema = params_changes_model().model_json_schema()
    assert set(schema["properties"]) == set(TOP_KEYS)
    assert "step_budget_pct" in TOP_KEYS
    period = schema["properties"]["control_period_ms"]
    assert (period["minimum"], period["maximum"]) == (MIN_CONTROL_PERIOD_MS,
                                                     MAX_CONTROL_PERIOD_MS)
    budget = schema["properties"]["step_budget_pct"]
    assert (budget["exclusiveMinimum"], budget["maximum"]) == (0, MAX_STEP_BUDGET_PCT)
    assert budget["default"] == 25.0 and "control period" in budget["description"]
    policies = schema["$defs"]["PolicyParams"]["properties"]
    assert set(policies) == set(REGISTRY)
