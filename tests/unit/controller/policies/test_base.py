"""controller.policy: parameter handling, the registry, quantise and the shared rules."""

from __future__ import annotations

import pytest

from mpsched.controller.errors import FieldError
from mpsched.controller.policies import REGISTRY, make_policy
from mpsched.controller.policies.base import (
    Mode,
    PathState,
    jitter_indicator,
    params_from_dict,
    params_schema,
    params_to_dict,
    quantise,
)
from mpsched.controller.policies.baselines import WcmpParams
from mpsched.controller.policies.llhd import LlhdParams
from mpsched.controller.policies.lm3 import Lm3Params
from mpsched.controller.policies.qos import QosParams

NAMES = {"ecmp", "rr", "letflow", "minrtt", "wcmp", "llhd", "cmtla", "fdmvqs", "qos", "ca"}
NAMES |= {"llhd-ca", "cmtla-ca", "fdmvqs-ca", "qos-ca", "adaptive"}


def test_registry_has_every_policy():
    make_policy("ecmp")
    assert set(REGISTRY) == NAMES
    for name in NAMES:
        assert make_policy(name).name == name


def test_unknown_policy_names_the_field():
    with pytest.raises(FieldError) as err:
        make_policy("nope")
    assert err.value.field == "policy"


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


def test_quantise():
    # largest -> 255; 5/10 * 255 = 127.5 -> 128; 0.01/10 * 255 = 0.255 -> 0 -> raised to 1
    assert quantise({1: 10.0, 2: 5.0, 3: 0.01, 4: 0.0}) == {1: 255, 2: 128, 3: 1, 4: 0}
    assert quantise({1: 0.0, 2: 0.0}) == {1: 0, 2: 0}
    assert quantise({1: 3.0, 2: 1.0}, max_weight=100) == {1: 100, 2: 33}
    with pytest.raises(ValueError):
        quantise({1: -1.0})


def test_jitter_indicator():
    # [1, 2, 3, 6]: avg 3, range 5 -> (6 - 3) / 5 = 0.6
    assert jitter_indicator([1, 2, 3, 6]) == pytest.approx(0.6)
    # [4, 2, 0]: avg 2, range 4 -> (0 - 2) / 4 = -0.5
    assert jitter_indicator([4, 2, 0]) == pytest.approx(-0.5)
    assert jitter_indicator([2, 2, 2]) == 0.0  # range 0
    assert jitter_indicator([5]) == 0.0


def test_bdp():
    # 10 Mbit/s * 20 ms = 1.25e6 B/s * 0.02 s = 25000 bytes
    assert PathState(1, True, srtt_ms=20, capacity_mbps=10).bdp_bytes() == pytest.approx(25000)
    assert PathState(1, True, srtt_ms=20).bdp_bytes() is None


@pytest.mark.parametrize("name", sorted(NAMES))
def test_every_policy_rules(name):
    # nothing measured: never crashes, dead paths get 0
    paths = [PathState(1, True), PathState(2, False), PathState(3, True)]
    decision = make_policy(name).decide(paths, 0.0)
    assert decision.weights[2] == 0
    assert any(decision.weights.values())
    assert all(w >= 0 for w in decision.weights.values())
    # no path alive: equal weights over all paths, not all zeros
    dead = [PathState(1, False, srtt_ms=10), PathState(2, False)]
    decision = make_policy(name).decide(dead, 0.0)
    assert decision.weights == {1: 1.0, 2: 1.0}
    assert "no path alive" in decision.reason
    assert isinstance(decision.mode, Mode)
