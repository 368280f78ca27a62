"""The operator's intent survives `kill -9` of the controller process, on a real BMv2.

simple_switch_grpc on veths, `python -m mpsched.controller --state FILE` as a process: an
operator sets a class, a policy, a parameter, an admin state and a weight over REST; the
controller is killed with SIGKILL and started again with the same state file; every item is
back (GET /classes, /params, /paths), and the switch, read by an independent P4Runtime
client, still holds the classes the restarted controller found it with (its first
programming already carried the intent: nothing was deleted).
"""

from __future__ import annotations

import json
import re
import signal

import pytest
import requests

from mpsched.p4rt.client import P4RuntimeClient
from mpsched.p4rt.p4info import P4Info
from mpsched.p4rt.pipeline import TABLE_TRAFFIC_CLASS, TABLE_WEIGHTS
from mpsched.proc.bmv2 import Bmv2Switch, free_port
from tests.conftest import AUTH
from tests.controllers import ControllerProcess, first_in, start_controller
from tests.netdesc import edge_switch

pytestmark = pytest.mark.integration

CLASSES = [
    {"id": 0, "name": "default"},
    {"id": 1, "name": "video", "priority": 10, "match": {"proto": "udp", "dst_port": 5004}},
]


def netcfg(sw: Bmv2Switch) -> dict:
    paths = [{"id": 1, "port": 2, "rate_mbps": 10}, {"id": 2, "port": 3, "rate_mbps": 5}]
    return {"switches": [edge_switch(1, sw.grpc_address, paths, with_host=True)]}


def start(tmp_path, artifacts, port: int, state, n: int) -> ControllerProcess:
    """Controller number `n` on `port` with the state file `state`, once its switch is ready."""
    return start_controller(tmp_path, artifacts, tmp_path / "netcfg.json", name=f"controller-{n}",
                            port=port, state=state, ready=first_in("ready"))


def put(base: str, path: str, body: dict) -> dict:
    r = requests.put(base + path, json=body, headers=AUTH, timeout=15)
    assert r.status_code == 200, f"PUT {path}: {r.status_code} {r.text}"
    return r.json()


def intent_seen(base: str) -> tuple:
    """What GET /classes, /params and /paths say about the operator's intent."""
    classes = [
        {k: v for k, v in c.items() if k != "placement"}
        for c in requests.get(base + "/classes", timeout=5).json()
    ]
    params = requests.get(base + "/params", timeout=5).json()
    paths = [(p["id"], p["weight"], p["admin"])
             for p in requests.get(base + "/paths", timeout=5).json()]
    return classes, params, paths


def test_the_intent_survives_kill_9_of_the_controller(switch, tmp_path, artifacts):
    sw, _ = switch
    (tmp_path / "netcfg.json").write_text(json.dumps(netcfg(sw)))
    state = tmp_path / "state" / "state-x.json"
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    p4info = P4Info.from_file(artifacts.p4info)
    reader = P4RuntimeClient(sw.grpc_address, 1, p4info)
    reader.connect(primary=False)
    ctl = start(tmp_path, artifacts, port, state, 1)
    try:
        assert requests.get(base + "/state", timeout=5).json()["intent"] is None
        put(base, "/classes", {"classes": CLASSES})
        put(base, "/classes/1/policy",
            {"name": "llhd", "params": {"beta": 0.01}, "lm3": True, "flowlet_gap_us": 2000})
        put(base, "/params", {"policies": {"llhd": {"beta": 0.002}}, "control_period_ms": 50})
        put(base, "/paths/2/admin", {"state": "down"})
        put(base, "/paths/1/weight", {"weight": 3})
        saved = requests.get(base + "/state", timeout=5).json()
        assert saved["path"] == str(state) and saved["saves"] == 5 and saved["error"] is None
        assert oct(state.stat().st_mode & 0o777) == oct(0o600)
        before = intent_seen(base)
        classifier = len(reader.read_table(TABLE_TRAFFIC_CLASS))
        placements = len(reader.read_table(TABLE_WEIGHTS))

        ctl.kill()
        assert ctl.proc.returncode == -signal.SIGKILL
        ctl = start(tmp_path, artifacts, port, state, 2)

        after = intent_seen(base)
        assert after == before
        classes, params, paths = after
        assert [c["policy"] for c in classes] == [
            {"name": "wcmp", "params": {"weights": "1:3,2:1"}, "lm3": False, "flowlet_gap_us": 0},
            {"name": "llhd", "params": {"beta": 0.01}, "lm3": True, "flowlet_gap_us": 2000},
        ]
        assert classes[1]["match"] == {"proto": 17, "dst_port": [5004, 5004]}
        assert params["control_period_ms"] == 50
        assert params["policies"]["llhd"]["beta"] == 0.002
        assert paths == [(1, 3, "up"), (2, 1, "down")]
        restored = requests.get(base + "/state", timeout=5).json()
        assert restored["restored"] is True and restored["intent"] == saved["intent"]
        # the restarted controller kept the switch and its classes: the first programming
        # already had them, so the reconciliation deleted nothing
        programmed = requests.get(base + "/switches", timeout=5).json()[0]["programmed"]
        assert re.match(r"0 inserted, \d+ modified, 0 deleted", programmed["detail"]), programmed
        assert len(reader.read_table(TABLE_TRAFFIC_CLASS)) == classifier == 1
        assert len(reader.read_table(TABLE_WEIGHTS)) == placements == 2
    finally:
        reader.close()
        ctl.stop()
