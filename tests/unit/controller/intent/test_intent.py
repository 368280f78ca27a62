"""intent.py: the intent as a snapshot, replaced by a restored one, and saved."""

from __future__ import annotations

import dataclasses
import logging

import pytest

from mpsched.controller.intent.intent import IntentKeeper
from mpsched.controller.intent.state import PathIntent, StateError, StateStore, load
from tests.unit.controller.helpers import scheduler


def keeper(tmp_path=None) -> IntentKeeper:
    store = None if tmp_path is None else StateStore(tmp_path / "state.json")
    return IntentKeeper(scheduler(), {1: 1, 2: 1}, store)


def test_the_snapshot_holds_classes_params_weights_and_admin_states():
    k = keeper()
    k.scheduler.admin_down.add(2)
    k.weights[1] = 7
    intent = k.snapshot()
    assert [c.name for c in intent.classes] == ["default"]
    assert intent.paths == {1: PathIntent(7, True), 2: PathIntent(1, False)}
    assert intent.params.control_period_ms == k.scheduler.params.control_period_ms


def test_an_intent_of_another_network_is_refused_and_changes_nothing():
    k = keeper()
    intent = k.snapshot()
    with pytest.raises(StateError, match="no path 9"):
        k.build(dataclasses.replace(intent, paths={**intent.paths, 9: PathIntent(1, True)}))
    assert sorted(k.weights) == [1, 2]


def test_install_replaces_the_scheduler_and_the_weights(caplog):
    k, other = keeper(), keeper()
    other.weights[2] = 5
    other.scheduler.admin_down.add(1)
    other.scheduler.set_class_policy(0, {"name": "minrtt"})
    intent = other.snapshot()
    before = k.scheduler
    with caplog.at_level(logging.WARNING):
        k.install(intent, k.build(intent))
    assert k.scheduler is not before and k.scheduler.admin_down == {1}
    assert k.weights == {1: 1, 2: 5}
    assert "replaces the start values: default class policy minrtt" in caplog.text


def test_the_step_budget_is_saved_and_restored_and_a_change_is_logged(tmp_path, caplog):
    """As the control period: kept in the state file, restored over the start value."""
    saved = keeper(tmp_path)
    saved.scheduler.set_params({"step_budget_pct": 12.5})
    saved.persist(saved.snapshot)
    intent = load(tmp_path / "state.json")
    assert intent.params.step_budget_pct == 12.5
    k = keeper()
    with caplog.at_level(logging.WARNING):
        k.install(intent, k.build(intent))
    assert k.scheduler.params.step_budget_pct == 12.5
    assert "control period 100 ms, step budget 12.5 %" in caplog.text


def test_persist_saves_the_snapshot_and_without_a_store_does_nothing(tmp_path):
    k = keeper(tmp_path)
    k.weights[1] = 3
    k.persist(k.snapshot)
    assert load(tmp_path / "state.json").paths[1].weight == 3
    assert k.view()["saves"] == 1
    keeper().persist(pytest.fail)  # no store: no snapshot taken
    assert keeper().view()["persistent"] is False


def test_learned_state_is_saved_only_when_it_changed(tmp_path):
    k = keeper(tmp_path)
    k.save_learned({}, k.snapshot)  # nothing learned: nothing saved
    assert k.view()["saves"] == 0
    k.save_learned({"0": {"s1": {"x": 1}}}, k.snapshot)
    k.save_learned({"0": {"s1": {"x": 1}}}, k.snapshot)
    assert k.view()["saves"] == 1
    k.save_learned({"0": {"s1": {"x": 2}}}, k.snapshot)
    assert k.view()["saves"] == 2


def test_a_fabrics_links_taken_down_are_intent():
    from mpsched.controller.fabric.routes import Routes
    from tests.unit.controller.fakes import fabric

    routes = Routes(fabric())
    k = IntentKeeper(scheduler(), {1: 1, 2: 1}, None, routes)
    assert k.snapshot().links_down == frozenset()
    routes.set_link("leaf1-spine2", up=False)
    intent = k.snapshot()
    assert intent.links_down == {"leaf1-spine2"}
    routes.set_link("leaf1-spine2", up=True)
    k.install(intent, k.build(intent))  # restored: re-routed without the link
    assert routes.links_down == {"leaf1-spine2"}
    assert routes.path_ids(routes.unit("leaf1->leaf2")) == [1]
    with pytest.raises(StateError) as caught:
        k.build(dataclasses.replace(intent, links_down=frozenset({"leaf1-leaf2"})))
    assert caught.value.field == "links.leaf1-leaf2"
    with pytest.raises(StateError, match="no link leaf1-spine2"):  # two edges have no links
        keeper().build(intent)
