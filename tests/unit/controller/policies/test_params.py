"""src/mpsched/controller/policies/params.py: a policy's parameters from a (partial) mapping,
checked
against their declared bounds and choices with errors naming the field, and their schema."""

from __future__ import annotations

import pytest

from mpsched.controller.model.errors import FieldError
from mpsched.controller.policies import REGISTRY, make_policy
from mpsched.controller.policies.baselines import WcmpParams
from mpsched.controller.policies.llhd import LlhdParams
from mpsched.controller.policies.lm3 import Lm3Params
from mpsched.controller.policies.params import (
    params_from_dict,
    params_schema,
    params_to_dict,
)
from mpsched.controller.policies.qos import QosParams
from tests.unit.controller.policies.helpers import NAMES


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ({"beta": -1.0}, "beta"),  # below min 0
        ({"beta": 11}, "beta"),  # above max 10
        ({"beta": True}, "beta"),  # a bool is not a number
        ({"beta": "0.1"}, "beta"),
        ({"beta": float("nan")}, "beta"),
        ({"beta": None}, "beta"),  # not nullable
        ({"weighted": "yes"}, "weighted"),
        ({"gamma": 1.0}, "gamma"),  # unknown key
    ],
)
def test_params_errors_name_the_field(data, field):
    with pytest.raises(FieldError) as err:
        params_from_dict(LlhdParams, data)
    assert err.value.field == field
    with pytest.raises(FieldError) as err:
        params_from_dict(LlhdParams, data, prefix="classes.video.params.")
    assert err.value.field == "classes.video.params." + field


def test_params_errors_from_post_init_and_choices():
    with pytest.raises(FieldError) as err:
        params_from_dict(WcmpParams, {"weights": "1:x"}, prefix="params.")
    assert err.value.field == "params.weights"
    with pytest.raises(FieldError) as err:
        params_from_dict(Lm3Params, {"window_source": "cwnd"})
    assert err.value.field == "window_source"
    with pytest.raises(FieldError) as err:
        params_from_dict(Lm3Params, {"sigma": 0.7})  # sigma + epsilon must stay 1
    assert err.value.field == "sigma"
    with pytest.raises(FieldError) as err:
        params_from_dict(QosParams, {"max_loss": 2.0})
    assert err.value.field == "max_loss"
    with pytest.raises(FieldError) as err:
        make_policy("llhd", {"beta": -1})
    assert err.value.field == "params.beta"


def test_params_partial_update_over_base_and_conversions():
    base = LlhdParams(beta=0.5)
    p = params_from_dict(LlhdParams, {"weighted": False}, base=base)
    assert (p.beta, p.weighted) == (0.5, False)
    assert params_from_dict(LlhdParams, {"beta": 1}).beta == 1.0  # int accepted for a float
    assert isinstance(params_from_dict(LlhdParams, {"beta": 1}).beta, float)
    assert params_from_dict(QosParams, {"max_loss": None}).max_loss is None
    assert params_from_dict(QosParams, {"max_loss": 0.01}).max_loss == 0.01
    assert params_from_dict(Lm3Params, {"sigma": 0.7, "epsilon": 0.3}).sigma == 0.7
    assert params_to_dict(LlhdParams()) == {"beta": 0.001, "weighted": True, "min_rtt_ms": 0.001}


def test_params_schema():
    schema = params_schema(LlhdParams)
    assert schema["beta"]["default"] == 0.001
    assert (schema["beta"]["min"], schema["beta"]["max"]) == (0.0, 10.0)
    assert schema["weighted"]["min"] is None
    assert set(schema["beta"]) == {"default", "min", "max", "doc"}
    for name in NAMES:
        for entry in params_schema(REGISTRY[name].Params).values():
            assert entry["doc"]
