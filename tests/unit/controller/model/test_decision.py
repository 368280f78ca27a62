"""src/mpsched/controller/model/decision.py: the modes by the names the REST API and the data
plane's tables use, and a decision's defaults."""

from __future__ import annotations

import pytest

from mpsched.controller.model.decision import CaCost, CaPath, Decision, Mode


def test_modes_by_name():
    assert [m.value for m in Mode] == ["hash", "flowlet", "rr", "vq", "ca"]
    assert Mode("ca") is Mode.CA
    with pytest.raises(ValueError):
        Mode("wcmp")


def test_a_decision_without_mode_parameters():
    d = Decision({1: 1.0, 2: 0.0}, Mode.HASH, {1: 0.5, 2: 0.1}, "why")
    assert (d.vq, d.ca, d.syn_copy) == ({}, None, False)
    other = Decision({1: 1.0}, Mode.HASH, {}, "why")
    assert d.vq is not other.vq  # each decision its own mapping


def test_ca_cost_defaults_and_paths():
    cost = CaCost(paths={1: CaPath(offset_us=0.0, capacity_mbps=10.0)})
    assert (cost.qdelay_coef, cost.loss_coef_us, cost.util_coef_us) == (1.0, 20000.0, 10000.0)
    assert (cost.epsilon_us, cost.max_age_ms) == (2000.0, 500.0)
    assert cost.paths[1].capacity_mbps == 10.0
    assert CaCost().paths == {}
