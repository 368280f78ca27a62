"""src/mpsched/controller/scheduling/params.py: the global parameters (their dictionary, schema and
checked
updates) and a class's policy made with the class's parameters over the global ones."""

from __future__ import annotations

import json

import pytest

from mpsched.controller.model.errors import FieldError
from mpsched.controller.policies import REGISTRY
from mpsched.controller.policies.lm3 import Lm3Params
from mpsched.controller.runtime.governor import CPU_BUDGET_PCT
from mpsched.controller.scheduling.classes import ClassPolicy
from mpsched.controller.scheduling.params import (
    GlobalParams,
    make_class_policy,
)
from mpsched.controller.scheduling.params_changes import STEP_BUDGET


def test_make_class_policy_merges_class_over_global():
    params = GlobalParams().updated({"policies": {"llhd": {"beta": 2.0}}})
    p = make_class_policy(ClassPolicy("llhd", params={"weighted": False}), params)
    assert p.name == "llhd"
    assert p.params.beta == 2.0
    assert p.params.weighted is False
    p = make_class_policy(ClassPolicy("llhd", params={"beta": 0.5}), params)
    assert p.params.beta == 0.5
    with pytest.raises(FieldError) as err:
        make_class_policy(ClassPolicy("nope"), params, "x")
    assert err.value.field == "x.name"


def test_global_params_to_dict_shape():
    p = GlobalParams()
    d = p.to_dict()
    assert set(d) == {"control_period_ms", "step_budget_pct", "cpu_budget_pct", "lm3",
                      "policies", "mptcp"}
    assert d["cpu_budget_pct"] == CPU_BUDGET_PCT == 50.0
    assert d["control_period_ms"] == 100.0
    assert d["step_budget_pct"] == STEP_BUDGET * 100 == 25.0
    assert d["mptcp"] == {
        "steering": True,
        "idle_timeout_s": 120.0,
        "replace_margin": 0.25,
        "replace_margin_us": 2000.0,
        "min_dwell_s": 5.0,
        "cost_memory_s": 120.0,
    }
    assert d["lm3"] == {
        "sigma": 0.5,
        "epsilon": 0.5,
        "blocking_threshold": 16,
        "window_source": "bdp",
    }
    assert list(d["policies"]) == sorted(REGISTRY)
    assert {"ecmp", "rr", "letflow", "minrtt", "wcmp", "llhd", "fdmvqs", "cmtla", "qos"} <= set(
        d["policies"]
    )
    assert d["policies"]["ecmp"] == {}
    assert d["policies"]["llhd"] == {"beta": 0.001, "weighted": True, "min_rtt_ms": 0.001}
    assert json.loads(json.dumps(d)) == d


def test_global_params_updated_is_a_copy():
    p = GlobalParams()
    q = p.updated({"control_period_ms": 20, "step_budget_pct": 10,
                   "lm3": {"sigma": 0.25, "epsilon": 0.75}})
    assert q is not p
    assert p.control_period_ms == 100.0 and p.lm3 == Lm3Params()
    assert p.step_budget_pct == 25.0
    assert q.control_period_ms == 20.0 and q.step_budget_pct == 10.0
    assert q.updated({"control_period_ms": 50}).step_budget_pct == 10.0  # kept when not given
    assert (q.lm3.sigma, q.lm3.epsilon) == (0.25, 0.75)
    assert q.policies == p.policies
    assert p.updated({}).to_dict() == p.to_dict()


def test_global_params_mptcp_section_is_checked():
    q = GlobalParams().updated({"mptcp": {"steering": False, "idle_timeout_s": 30}})
    assert (q.mptcp.steering, q.mptcp.idle_timeout_s) == (False, 30.0)
    with pytest.raises(FieldError) as err:
        GlobalParams().updated({"mptcp": {"idle_timeout_s": 0}})
    assert err.value.field == "mptcp.idle_timeout_s"
    with pytest.raises(FieldError) as err:
        GlobalParams().updated({"mptcp": {"steering": "yes"}})
    assert err.value.field == "mptcp.steering"


def test_global_params_schema_shape():
    schema = GlobalParams().schema()
    assert set(schema) == {"lm3", "policies", "mptcp"}
    assert schema["mptcp"]["idle_timeout_s"]["min"] == 1.0
    assert list(schema["policies"]) == sorted(REGISTRY)
    assert schema["policies"]["ecmp"] == {}
    beta = schema["policies"]["llhd"]["beta"]
    assert set(beta) == {"default", "min", "max", "doc"}
    assert (beta["default"], beta["min"], beta["max"]) == (0.001, 0.0, 10.0)
    assert set(schema["lm3"]) == {"sigma", "epsilon", "blocking_threshold", "window_source"}
    assert "one of: bdp, inflight" in schema["lm3"]["window_source"]["doc"]
    assert schema["lm3"]["blocking_threshold"]["min"] == 1
    for fields in [schema["lm3"], schema["mptcp"], *schema["policies"].values()]:
        for entry in fields.values():
            assert set(entry) == {"default", "min", "max", "doc"}
    json.dumps(schema)
