"""Primary and backup controllers: a backup refuses operator writes (409, naming the primary),
and says so for every write of the REST API. The arbitration itself runs against real BMv2 in
test_controller_bmv2.py."""

from __future__ import annotations

import pytest

from mpsched.controller.app.core import Controller, ControllerSettings, NotPrimaryError
from mpsched.controller.northbound.rest import RestApi
from mpsched.controller.southbound.agent_model import AgentStatus
from mpsched.netcfg import NetCfg
from mpsched.p4rt.p4info import P4Info
from mpsched.p4rt.pipeline import Pipeline
from tests.fake_p4rt import synthetic_p4info
from tests.netdesc import edge_switch
from tests.unit.controller.northbound.test_rest import FakeBackend, call

WRITES = [
    ("PUT", "/paths/1/weight", {"weight": 2}),
    ("PUT", "/paths/1/admin", {"state": "down"}),
    ("PUT", "/classes", {"classes": [{"id": 0, "name": "default"}]}),
    ("PUT", "/classes/0/policy", {"name": "ecmp"}),
    ("PUT", "/params", {"control_period_ms": 100}),
]


def controller(tmp_path, peer: str | None) -> Controller:
    (tmp_path / "p.json").write_text("{}")
    paths = [{"id": 1, "port": 2}]
    net = NetCfg.from_dict({"switches": [edge_switch(1, paths=paths), edge_switch(2, paths=paths)]})
    return Controller(
        net,
        Pipeline(P4Info(synthetic_p4info())),
        str(tmp_path / "p.json"),
        ControllerSettings(peer=peer, election_id=1),
    )


def test_a_backup_on_any_switch_refuses_every_write(tmp_path):
    ctl = controller(tmp_path, peer="http://127.0.0.1:8080")  # not started: no session
    ctl.agents[1].status = AgentStatus("backup", "the primary holds election id (0, 2)")
    assert ctl.role() == "backup"
    for write in (
        lambda: ctl.set_weight(1, 2),
        lambda: ctl.set_admin(1, False),
        lambda: ctl.set_classes([]),
        lambda: ctl.set_class_policy(0, {"name": "ecmp"}),
        lambda: ctl.set_params({}),
    ):
        with pytest.raises(NotPrimaryError, match=r"s2: the primary holds .* at http://127"):
            write()
    assert ctl.weights()[1] == 1  # nothing changed
    ctl.agents[1].status = AgentStatus("ready")
    assert ctl.role() == "primary"
    ctl.require_primary()


class BackupBackend(FakeBackend):
    def __getattribute__(self, name):
        if name.startswith("set_"):

            def refuse(*_args):
                raise NotPrimaryError("this controller is a backup: send writes to the primary")

            return refuse
        return super().__getattribute__(name)


@pytest.mark.parametrize(("method", "path", "body"), WRITES)
def test_rest_answers_409_on_a_backup(method, path, body):
    status, answer = call(RestApi(BackupBackend()), method, path, body)
    assert status == 409, answer
    assert "backup" in answer["error"] and answer["field"] is None
    assert call(RestApi(BackupBackend()), "GET", "/paths")[0] == 200  # reads are served
