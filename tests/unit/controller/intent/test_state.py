"""The persisted intent (src/mpsched/controller/intent/state.py): its file format and atomic writes
(pure; the
file's field checks: test_intent_file.py), and the controller restoring it, against fake
P4Runtime switches."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest
from google.protobuf import text_format
from webob import Request

from mpsched.client import ctl
from mpsched.controller.__main__ import command as controller_command
from mpsched.controller.app.core import (
    Controller,
    ControllerSettings,
    NotFoundError,
    UnavailableError,
)
from mpsched.controller.intent.state import (
    VERSION,
    Intent,
    StateError,
    StateStore,
    default_state_path,
    intent_matches,
    load,
    save_atomic,
)
from mpsched.controller.northbound.rest import RestApi
from mpsched.controller.scheduling.classes import classes_from_list
from mpsched.netcfg import NetCfg
from mpsched.p4rt.client import param_value
from mpsched.p4rt.p4info import decode_uint
from mpsched.p4rt.pipeline import (
    ACTION_SET_WEIGHTS,
    TABLE_TRAFFIC_CLASS,
    TABLE_WEIGHTS,
    Pipeline,
)
from tests.netdesc import edge_switch
from tests.unit.controller.intent_doc import CLASSES, PARAMS, rich_intent, set_at, valid_doc
from tests.wsgi_server import ServedApp

# -- the format ------------------------------------------------------------------


def test_round_trip_through_json_text_and_file(tmp_path):
    intent = rich_intent()
    doc = intent.to_json()
    assert doc["version"] == VERSION
    assert doc["paths"] == {"1": {"weight": 3, "admin": "up"}, "2": {"weight": 0, "admin": "down"}}
    again = Intent.from_json(json.loads(json.dumps(doc)))
    assert again == intent
    assert intent_matches(intent, again) == []
    save_atomic(tmp_path / "state.json", intent)
    loaded = load(tmp_path / "state.json")
    assert loaded == intent
    assert loaded.classes[1].policy.params == {"beta": 0.01}
    assert loaded.params.lm3.sigma == 0.3 and loaded.params.mptcp.steering is False


def test_a_fabrics_links_taken_down_are_kept_and_only_then_written():
    import dataclasses

    assert "links" not in rich_intent().to_json()  # a two-edge file is as it always was
    intent = dataclasses.replace(rich_intent(), links_down=frozenset({"leaf1-spine2"}))
    doc = intent.to_json()
    assert doc["links"] == {"leaf1-spine2": {"admin": "down"}}
    assert Intent.from_json(json.loads(json.dumps(doc))) == intent
    assert intent_matches(intent, rich_intent()) == ["links: only in the first"]
    with pytest.raises(StateError) as caught:
        Intent.from_json(set_at(valid_doc(), "links", {"leaf1-spine2": {"admin": "off"}}))
    assert caught.value.field == "links.leaf1-spine2.admin"


def test_a_version_1_file_without_learned_tables_still_loads(tmp_path):
    """Files written before the learned tables (version 1: no "learned") load as they were."""
    doc = set_at(set_at(valid_doc(), "learned", ...), "version", 1)
    for c in doc["classes"]:
        del c["qos_target"]  # version 1 files had no qos_target either
    (tmp_path / "state.json").write_text(json.dumps(doc))
    loaded = load(tmp_path / "state.json")
    assert loaded.version == 1 and loaded.learned == {}
    assert intent_matches(loaded, rich_intent()) == []
    assert loaded.to_json()["version"] == VERSION  # saved again as the current version
    with pytest.raises(StateError) as caught:
        Intent.from_json(set_at(set_at(valid_doc(), "version", 1), "learned", {}))
    assert caught.value.field == "learned"


def test_no_file_is_no_intent(tmp_path):
    assert load(tmp_path / "absent.json") is None


def _snapshot(path: Path) -> tuple[bytes, int, int]:
    st = path.stat()
    return path.read_bytes(), st.st_mtime_ns, st.st_mode


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", "not valid JSON"),
        (b'{"version": 1, "classes": [', "not valid JSON"),
        (b"\xff\xfe garbage", "not valid JSON"),
        (b'{"version": NaN}', "not valid JSON"),
        (b"[1, 2]", "must be a JSON object"),
        (json.dumps(set_at(valid_doc(), "paths.1.weight", 999)).encode(), "paths.1.weight"),
        (json.dumps(set_at(valid_doc(), "version", 3)).encode(),
         "version: unsupported version 3 (this controller reads versions 1, 2)"),
    ],
    ids=["empty", "truncated", "binary", "nan", "array", "bad-field", "version"],
)
def test_a_corrupt_file_is_refused_named_and_left_untouched(tmp_path, content, message):
    path = tmp_path / "state.json"
    path.write_bytes(content)
    before = _snapshot(path)
    with pytest.raises(StateError) as caught:
        load(path)
    assert str(caught.value).startswith(f"state file {path}: ")
    assert message in str(caught.value)
    assert _snapshot(path) == before
    assert sorted(os.listdir(tmp_path)) == ["state.json"]


def test_an_unreadable_file_is_refused(tmp_path):
    (tmp_path / "state.json").mkdir()
    with pytest.raises(StateError, match=r"state\.json is not a regular file"):
        load(tmp_path / "state.json")


def test_atomic_write_replaces_the_file_and_leaves_no_temporary(tmp_path):
    directory = tmp_path / "run" / "sub"
    path = directory / "state.json"
    save_atomic(path, Intent(tuple(classes_from_list([{"id": 0, "name": "default"}]))))
    assert oct(directory.stat().st_mode & 0o777) == oct(0o700)
    save_atomic(path, rich_intent())
    assert os.listdir(directory) == ["state.json"]
    assert oct(path.stat().st_mode & 0o777) == oct(0o600)
    assert load(path) == rich_intent()


def test_a_failed_write_keeps_the_old_file_and_removes_its_temporary(tmp_path, monkeypatch):
    path = tmp_path / "state.json"
    save_atomic(path, rich_intent())
    before = path.read_bytes()

    def no_rename(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", no_rename)
    with pytest.raises(OSError, match="No space"):
        save_atomic(path, Intent(tuple(classes_from_list([{"id": 0, "name": "default"}]))))
    assert path.read_bytes() == before
    assert os.listdir(tmp_path) == ["state.json"]


def test_intent_matches_names_every_difference():
    a = rich_intent()
    doc = valid_doc()
    doc = set_at(doc, "paths.2.admin", "up")
    doc = set_at(doc, "paths.1.weight", 4)
    doc = set_at(doc, "classes.1.policy.lm3", False)
    doc = set_at(doc, "params.lm3.sigma", 0.5)
    doc = set_at(doc, "params.lm3.epsilon", 0.5)
    doc = set_at(doc, "classes.2", ...)
    b = Intent.from_json(doc)
    assert intent_matches(a, b) == [
        "classes.1.policy.lm3: true != false",
        "classes.7: only in the first",
        "params.lm3.epsilon: 0.7 != 0.5",
        "params.lm3.sigma: 0.3 != 0.5",
        "paths.1.weight: 3 != 4",
        'paths.2.admin: "down" != "up"',
    ]
    assert intent_matches(b, a)[1] == "classes.7: only in the second"


def test_default_state_path_follows_the_token_convention(monkeypatch, tmp_path):
    monkeypatch.delenv("MPSCHED_RUN_DIR", raising=False)
    assert default_state_path(8080) == Path("/run/mpsched/state-8080.json")
    monkeypatch.setenv("MPSCHED_RUN_DIR", str(tmp_path))
    assert default_state_path(9000) == tmp_path / "state-9000.json"


def test_store_reports_a_failed_save_and_recovers(tmp_path):
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("")
    store = StateStore(blocker / "state.json")
    assert store.save(rich_intent()) is False
    view = store.view()
    assert view["failures"] == 1 and view["saves"] == 0 and view["intent"] is None
    assert str(blocker) in view["error"] and view["error_at"] is not None
    store.path = tmp_path / "state.json"
    assert store.save(rich_intent()) is True
    view = store.view()
    assert view["error"] is None and view["saves"] == 1 and view["failures"] == 1
    assert view["intent"] == rich_intent().to_json()


def test_controller_command_runs_without_state_unless_given_a_file():
    assert controller_command("n.json", 8080)[-1] == "--no-state"
    assert controller_command("n.json", 8080, state_file="s.json")[-2:] == ["--state", "s.json"]


# -- the controller, on fake P4Runtime switches ------------------------------------


def _controller(tmp_path, p4info, address, store=None, unreachable_peer=False) -> Controller:
    (tmp_path / "p.json").write_text("{}")
    switches = [
        edge_switch(1, address, [{"id": 1, "port": 2}, {"id": 2, "port": 3}])
    ]
    if unreachable_peer:
        switches.append(edge_switch(2))
    return Controller(
        NetCfg.from_dict({"switches": switches}),
        Pipeline(p4info),
        str(tmp_path / "p.json"),
        ControllerSettings(poll_interval=0.05, write_timeout=2),
        store=store,
    )


def _operator_writes(ctl: Controller) -> None:
    """A class table, a class's policy, parameters, an admin state and a weight."""
    ctl.set_classes(classes_from_list(CLASSES))
    ctl.set_class_policy(7, {"name": "minrtt", "lm3": True, "flowlet_gap_us": 3000})
    ctl.set_params(PARAMS)
    ctl.set_admin(2, False)
    ctl.set_weight(1, 3)


def _classes(ctl: Controller) -> list[dict]:
    return [c.model_dump(exclude={"placement"}) for c in ctl.classes()]


def _paths(ctl: Controller) -> list[tuple]:
    return [(p.id, p.weight, p.admin) for p in ctl.paths()]


def _weighted(server, p4info) -> dict[int, int]:
    """class id -> mask of the paths with a weight, from the fake switch's path_weights."""
    params = {p.name: p.id for p in p4info.action_params(ACTION_SET_WEIGHTS)}
    out = {}
    for (tid, _), e in server.servicer.entries.items():
        if tid == p4info.table_id(TABLE_WEIGHTS):
            # keys: dst_edge, class_id
            out[decode_uint(e.match[1].exact.value)] = param_value(e, params["weighted_paths"])
    return out


def _classifier(server, p4info) -> int:
    table = p4info.table_id(TABLE_TRAFFIC_CLASS)
    return sum(1 for tid, _ in server.servicer.entries if tid == table)


def test_a_second_controller_restores_what_the_first_was_told(server, p4info, tmp_path):
    """Every acknowledged write is saved; a new Controller on the same file has the same
    classes, policies, params, admin states and weights, and programs a fresh switch with
    them from its first programming on."""
    path = tmp_path / "run" / "state.json"
    first = _controller(tmp_path, p4info, server.address, StateStore(path))
    first.start()
    try:
        assert first.wait_ready(5)
        assert first.state().intent is None and not path.exists()
        _operator_writes(first)
        view = first.state().model_dump()
        assert view["path"] == str(path) and view["saves"] == 5 and view["error"] is None
        assert view["intent"] == first.intent().to_json()
        assert intent_matches(load(path), first.intent()) == []
        expected = (_classes(first), first.params(), _paths(first))
    finally:
        first.stop()
    assert expected[2] == [(1, 3, "up"), (2, 1, "down")]
    assert expected[1].control_period_ms == 50 and expected[1].mptcp["steering"] is False
    assert expected[1].step_budget_pct == 10
    assert [c["policy"]["name"] for c in expected[0]] == ["wcmp", "llhd", "minrtt"]

    server.stop()
    server.servicer.restart()  # a switch that lost everything too
    server.start()
    store = StateStore(path)
    second = _controller(tmp_path, p4info, server.address, store)
    assert intent_matches(first.intent(), second.intent()) == []
    assert (_classes(second), second.params(), _paths(second)) == expected
    assert second.step_budget_s() == pytest.approx(0.005)  # 10 % of 50 ms, as the first's
    assert second.state().restored is True and second.state().intent == view["intent"]
    second.start()
    try:
        assert second.wait_ready(5)
        # the first programming carried the intent: both classifier entries, and every
        # class's placement without the admin-down path 2 (bit 1)
        assert _classifier(server, p4info) == 2
        assert _weighted(server, p4info) == {0: 0b01, 1: 0b01, 7: 0b01}
    finally:
        second.stop()


def test_an_unacknowledged_write_is_not_saved(server, p4info, tmp_path):
    path = tmp_path / "state.json"
    ctl = _controller(tmp_path, p4info, server.address, StateStore(path), unreachable_peer=True)
    ctl.start()
    try:
        assert ctl.agents[0].wait_ready(5)
        with pytest.raises(UnavailableError):
            ctl.set_admin(2, False)
        assert not path.exists() and ctl.state().saves == 0
    finally:
        ctl.stop()


def test_a_failed_save_does_not_fail_the_write(server, p4info, tmp_path):
    blocker = tmp_path / "run"
    ctl = _controller(tmp_path, p4info, server.address, StateStore(blocker / "state.json"))
    blocker.write_text("")  # its directory cannot be made: every save fails
    api = RestApi(ctl)
    ctl.start()
    try:
        assert ctl.wait_ready(5)
        request = Request.blank("/paths/2/admin", method="PUT", body=b'{"state": "down"}')
        response = request.get_response(api)
        assert response.status_code == 200, response.text
        assert response.json["admin"] == "down"
        state = Request.blank("/state").get_response(api).json
        assert state["failures"] == 1 and state["saves"] == 0
        assert "cannot write" in state["error"] and state["path"].endswith("state.json")
    finally:
        ctl.stop()


def test_without_a_store_nothing_is_persisted(server, p4info, tmp_path):
    ctl = _controller(tmp_path, p4info, server.address)
    state = Request.blank("/state").get_response(RestApi(ctl)).json
    assert state["persistent"] is False and state["path"] is None and state["intent"] is None


def test_a_corrupt_or_foreign_file_stops_the_controller_and_is_kept(server, p4info, tmp_path):
    path = tmp_path / "state.json"
    path.write_text('{"version": 1, "classes": [}')
    before = _snapshot(path)
    with pytest.raises(StateError, match=f"state file {path}: not valid JSON"):
        _controller(tmp_path, p4info, server.address, StateStore(path))
    assert _snapshot(path) == before
    # a valid intent for another network: path 3 is not in this one
    doc = set_at(valid_doc(), "paths.3", {"weight": 1, "admin": "up"})
    path.write_text(json.dumps(doc))
    before = _snapshot(path)
    with pytest.raises(StateError, match=r"paths\.3: no path 3 in the network description"):
        _controller(tmp_path, p4info, server.address, StateStore(path))
    assert _snapshot(path) == before


def test_the_controller_process_exits_2_on_a_corrupt_state_file(p4info, tmp_path):
    (tmp_path / "p4info.txt").write_text(text_format.MessageToString(p4info.message))
    (tmp_path / "p.json").write_text("{}")
    net = {"switches": [edge_switch(1, paths=[{"id": 1, "port": 2}])]}
    (tmp_path / "net.json").write_text(json.dumps(net))
    (tmp_path / "token").write_text("t\n")
    state = tmp_path / "state.json"
    state.write_bytes(b"\x00\x01 not json")
    before = _snapshot(state)
    argv = controller_command(tmp_path / "net.json", 1, 1.0, tmp_path / "p4info.txt",
                              tmp_path / "p.json", tmp_path / "token", state)
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2, done.stdout + done.stderr
    assert f"state file {state}: not valid JSON" in done.stderr
    assert "--no-state" in done.stderr
    assert _snapshot(state) == before


# -- mpsched ctl state ---------------------------------------------------------------


def test_ctl_state_shows_the_saved_intent(server, p4info, tmp_path, capsys):
    path = tmp_path / "state.json"
    save_atomic(path, rich_intent())
    ctl_ = _controller(tmp_path, p4info, server.address, StateStore(path))
    with ServedApp(RestApi(ctl_)) as http:
        assert ctl.main(["--url", http.url, "--token", "x", "state"]) == 0
        shown = json.loads(capsys.readouterr().out)
        assert shown["path"] == str(path) and shown["restored"] is True
        assert shown["intent"] == rich_intent().to_json()
        assert abs(shown["saved_at"] - time.time()) < 60


def test_ctl_state_help(capsys):
    assert ctl.main(["state", "--help"]) == 0
    assert "intent saved" in capsys.readouterr().out


def test_learned_tables_are_saved_and_restored_with_the_intent(server, p4info, tmp_path):
    """What the adaptive policy learned goes into the state file (version 2, "learned") and a
    controller started on that file decides with it; the intent comparison ignores it."""
    path = tmp_path / "run" / "state.json"
    first = _controller(tmp_path, p4info, server.address, StateStore(path))
    first.start()
    try:
        assert first.wait_ready(5)
        first.set_class_policy(0, {"name": "adaptive", "params": {"arms": "ecmp,letflow"}})
        policy = first.scheduler.policy_of("s1", 0)
        policy.table.update("loss=high", "letflow", 0.75)
        first.save_learned()
        saved = json.loads(path.read_text())
        assert saved["version"] == VERSION
        cell = saved["learned"]["0"]["s1"]["table"]["contexts"]["loss=high"]["arms"]["letflow"]
        assert cell == {"s": 0.75, "f": 0.25, "n": 1, "last": 0.75}
        view = first.adaptive(0).switches["s1"]
        # the context's prior is centred on its mean outcome, 0.75: (1.5 + 0.75) / 3
        assert view["table"]["loss=high"]["arms"]["letflow"]["mean"] == pytest.approx(0.75)
        assert view["table"]["loss=high"]["arms"]["ecmp"]["mean"] == pytest.approx(0.75)
        with pytest.raises(NotFoundError):
            first.adaptive(7)
    finally:
        first.stop()
    second = _controller(tmp_path, p4info, server.address, StateStore(path))
    table = second.scheduler.policy_of("s1", 0).table
    assert table.posterior("loss=high", "letflow") == pytest.approx((2.25, 0.75))
    assert intent_matches(first.intent(), second.intent()) == []
    broken = json.loads(path.read_text())
    broken["learned"]["0"]["s1"]["table"]["contexts"]["loss=high"]["arms"]["letflow"]["n"] = -1
    path.write_text(json.dumps(broken))
    with pytest.raises(StateError) as caught:
        _controller(tmp_path, p4info, server.address, StateStore(path))
    assert caught.value.field == "learned.0.s1.table.contexts.loss=high.arms.letflow.n"
