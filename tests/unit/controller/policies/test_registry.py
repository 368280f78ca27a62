"""controller/policies/registry.py: every policy registered under its name, lookups of unknown
names, a name registered twice."""

from __future__ import annotations

import pytest

from mpsched.controller.errors import FieldError
from mpsched.controller.policies import REGISTRY, make_policy
from tests.unit.controller.policies.helpers import NAMES


def test_registry_has_every_policy():
    make_policy("ecmp")
    assert set(REGISTRY) == NAMES
    for name in NAMES:
        assert make_policy(name).name == name


def test_unknown_policy_names_the_field():
    with pytest.raises(FieldError) as err:
        make_policy("nope")
    assert err.value.field == "policy"
