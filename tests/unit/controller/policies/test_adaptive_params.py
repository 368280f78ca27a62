"""controller/policies/adaptive_params.py: the adaptive policy's parameters and their checks."""

from __future__ import annotations

import pytest

from mpsched.controller.errors import FieldError
from mpsched.controller.policies import make_policy


def test_the_policy_discounts_with_its_parameter_and_checks_its_range():
    assert make_policy("adaptive", {}).table.discount == 1.0
    assert make_policy("adaptive", {"discount": 0.9}).table.discount == 0.9
    for bad in (0.2, 1.5, "x"):
        with pytest.raises(FieldError) as err:
            make_policy("adaptive", {"discount": bad})
        assert err.value.field == "params.discount"
