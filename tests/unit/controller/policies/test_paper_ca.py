"""src/mpsched/controller/policies/paper_ca.py: the pieces the papers' CA variants share: the
decision of
mode CA (weights, the controller's cost estimates, the reason), the fallback without an alive
path, relative offsets and the parameter metadata taken from the weight-based policy."""

from __future__ import annotations

import pytest

from mpsched.controller.model.decision import CaCost, CaPath, Mode
from mpsched.controller.model.paths import PathState
from mpsched.controller.policies.llhd import LlhdParams
from mpsched.controller.policies.paper_ca import ca_decision, meta, no_alive, relative_offsets


def test_ca_decision_weighs_the_chosen_paths_and_scores_the_alive_ones():
    cost = CaCost(util_coef_us=0.0, paths={1: CaPath(100.0, None), 2: CaPath(0.0, None)})
    paths = [
        PathState(1, True, owd_ms=2.0),  # 100 + 2000
        PathState(2, True, owd_ms=0.5),  # 500
        PathState(3, False, owd_ms=9.0),  # dead: score 0, weight 0
    ]
    d = ca_decision("llhd-ca", paths, [2], cost, "gamma 1.0")
    assert d.mode == Mode.CA and d.ca is cost
    assert d.weights == {1: 0.0, 2: 1.0, 3: 0.0}
    assert d.scores == pytest.approx({1: 2100.0, 2: 500.0, 3: 0.0})
    assert d.reason.startswith("llhd-ca: least cost in the switch over [2]; gamma 1.0; cost ")
    assert "est_cost_us" in d.reason


def test_no_alive_keeps_equal_weights_and_the_cost():
    cost = CaCost()
    d = no_alive([PathState(1, False), PathState(2, False)], cost)
    assert d.weights == {1: 1.0, 2: 1.0}
    assert d.mode == Mode.CA and d.ca is cost
    assert "no path alive" in d.reason


def test_relative_offsets_scale_by_the_best_score():
    # best 4: offset = 1000 * (4 - s) / 4
    assert relative_offsets({1: 4.0, 2: 3.0, 3: 0.0}, 1000.0) == pytest.approx(
        {1: 0.0, 2: 250.0, 3: 1000.0}
    )
    # near-equal scores stay near-equal (a min-max scaling would give 0 and the whole span)
    near = relative_offsets({1: 1.0, 2: 0.999}, 1000.0)
    assert near[2] == pytest.approx(1.0)
    assert relative_offsets({1: 0.0, 2: -1.0}, 1000.0) == {1: 0.0, 2: 0.0}
    assert relative_offsets({}, 1000.0) == {}


def test_meta_is_the_fields_metadata():
    beta = meta(LlhdParams, "beta")
    assert (beta["min"], beta["max"]) == (0.0, 10.0)
    assert beta["doc"]
    with pytest.raises(KeyError):
        meta(LlhdParams, "nope")
