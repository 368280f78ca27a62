"""The answers of the operator's writes (src/mpsched/controller/northbound/answers.py): the
resource's view
and what the write meant beyond it."""

from __future__ import annotations

import pydantic
import pytest

from mpsched.controller.northbound.answers import PolicyChangeView


def test_a_policy_change_names_the_parameters_it_dropped():
    view = PolicyChangeView(name="ecmp", params={}, lm3=False, flowlet_gap_us=0,
                            dropped_params=["beta"])
    assert view.model_dump()["dropped_params"] == ["beta"]


def test_a_policy_change_without_its_dropped_parameters_is_no_answer():
    with pytest.raises(pydantic.ValidationError, match="dropped_params"):
        PolicyChangeView(name="ecmp", params={}, lm3=False, flowlet_gap_us=0)
