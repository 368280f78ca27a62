"""mastership.py: primary or backup from the agents' states; promotion takes over the
intent of the shared state file."""

from __future__ import annotations

import pytest

from mpsched.controller.intent.intent import IntentKeeper
from mpsched.controller.intent.mastership import Mastership
from mpsched.controller.intent.state import StateStore
from mpsched.controller.model.errors import NotPrimaryError
from tests.unit.controller.fakes import FakeAgent, two_edges
from tests.unit.controller.helpers import scheduler


def mastership(s2: str, store: StateStore | None = None, peer: str | None = None):
    net = two_edges()
    agents = [FakeAgent(net.switches[0]), FakeAgent(net.switches[1], s2, "primary holds 9")]
    applied: list = []
    keeper = IntentKeeper(scheduler(), {1: 1, 2: 1}, store)
    return Mastership(agents, keeper, applied.append, peer), applied


def test_primary_unless_a_switch_has_another_primary():
    assert mastership("ready")[0].role() == "primary"
    assert mastership("down")[0].role() == "primary"
    assert mastership("backup")[0].role() == "backup"


def test_a_backup_refuses_writes_naming_the_primary_and_the_peer():
    mastership("ready")[0].require_primary()
    m, _ = mastership("backup", peer="http://10.0.0.2:8080")
    with pytest.raises(NotPrimaryError) as raised:
        m.require_primary()
    assert str(raised.value) == (
        "this controller is a backup (s2: primary holds 9): send writes to the primary "
        "at http://10.0.0.2:8080"
    )


def test_promotion_takes_over_the_saved_intent(tmp_path):
    store = StateStore(tmp_path / "state.json")
    m, applied = mastership("ready", store)
    m.on_promoted("s1")  # no file yet: nothing to take over
    assert applied == []
    store.save(m.keeper.snapshot())
    m.on_promoted("s1")
    assert [i.paths for i in applied] == [m.keeper.snapshot().paths]


def test_an_unusable_file_keeps_this_controllers_intent(tmp_path, caplog):
    path = tmp_path / "state.json"
    path.write_text("{not json")
    m, applied = mastership("ready", StateStore(path))
    m.on_promoted("s2")
    assert applied == [] and "cannot be taken over" in caplog.text
