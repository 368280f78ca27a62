"""src/mpsched/controller/model/switch.py: one switch's inputs for a period, as values."""

from __future__ import annotations

import dataclasses

import pytest

from mpsched.controller.model.paths import PathState
from mpsched.controller.model.switch import SwitchView


def test_a_switch_view():
    paths = (PathState(1, True), PathState(2, False))
    view = SwitchView("s1", paths, {1: 4})
    assert [p.path_id for p in view.paths] == [1, 2]
    assert view.flow_ooo[1] == 4
    with pytest.raises(dataclasses.FrozenInstanceError):
        view.switch = "s2"  # type: ignore[misc]
