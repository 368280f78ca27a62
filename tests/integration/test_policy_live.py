"""The control loop on a live testbed: policies and parameters switched at run time over
REST while TCP streams run, without resetting a flow; classes, admin state and the
decision log on the real switches."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pytest

from mpsched import addressing as ap
from tests.conftest import require
from tests.sockets import wait_listening

pytestmark = pytest.mark.integration

PORT = 5301
POLICIES = ["llhd", "rr", "fdmvqs", "cmtla", "qos", "minrtt", "letflow", "ecmp"]


@pytest.fixture
def prerequisites(artifacts):
    require("root", "simple_switch_grpc", "mininet", "ethtool", "linkem")
    return artifacts


def test_policies_switch_at_run_time_without_resetting_flows(prerequisites, tmp_path: Path):
    from mpsched.client.rest import ControllerError
    from mpsched.proc.controller import start_controller, stop_controller
    from mpsched.topo.testbed import Testbed, TopoSpec

    spec = TopoSpec.from_rates((10.0, 5.0), log_dir=tmp_path)
    with Testbed(spec) as bed:
        ctl, rest = start_controller(bed.netcfg_path, tmp_path / "ctl.log", poll=0.2,
                                     p4info=prerequisites.p4info,
                                     bmv2_json=prerequisites.bmv2_json)
        try:
            gen = [sys.executable, "-m", "mpsched.traffic.gen"]
            sink = bed.host("h2").popen([*gen, "sink", "--port", str(PORT), "--out",
                                         str(tmp_path / "sink.json"), "--seconds", "30"])
            bed.registry.add_process(sink.pid, "sink")
            wait_listening(sink, PORT)
            seconds = 2.0 * len(POLICIES) + 5
            sender = bed.host("h1").popen([*gen, "bulk", "--dst", ap.H2_IP, "--port",
                                           str(PORT), "--seconds", f"{seconds:g}", "--streams",
                                           "4", "--out", str(tmp_path / "bulk.json")])
            bed.registry.add_process(sender.pid, "bulk")
            time.sleep(1.0)
            for name in POLICIES:
                answer = rest.put("/classes/0/policy", {"name": name, "lm3": name == "fdmvqs"})
                assert answer["name"] == name
                time.sleep(2.0)
                placement = rest.get("/classes/0")["placement"]["s1"]
                expected = {"rr": "rr", "fdmvqs": "vq", "ecmp": "hash"}.get(name, "flowlet")
                assert placement["mode"] == expected, (name, placement)
            # a traffic class for the streams' port, with its own policy, added and removed
            # at run time (placements first, classifier after: no gap for the flows)
            classes = [{"id": 0, "name": "default"},
                       {"id": 1, "name": "bulk", "priority": 10,
                        "match": {"proto": "tcp", "dst_port": PORT},
                        "policy": {"name": "rr"}}]
            listed = rest.put("/classes", {"classes": classes})
            assert [c["id"] for c in listed] == [0, 1]
            assert rest.get("/classes/1")["placement"]["s1"]["mode"] == "rr"
            time.sleep(1.5)
            rest.put("/classes", {"classes": classes[:1]})
            with pytest.raises(ControllerError) as info:
                rest.get("/classes/1")
            assert info.value.status == 404
            # a parameter change at run time, then a bad one: 400 naming the field
            assert rest.put("/params", {"policies": {"llhd": {"beta": 0.01}}})
            with pytest.raises(ControllerError) as info:
                rest.put("/params", {"policies": {"llhd": {"beta": -1}}})
            assert info.value.status == 400 and info.value.field == "policies.llhd.beta"
            # an administratively down path gets weight 0 on both edges
            rest.put("/paths/2/admin", {"state": "down"})
            placements = rest.get("/classes/0")["placement"]
            assert {sw: p["weights"]["2"] for sw, p in placements.items()} == {"s1": 0, "s2": 0}
            assert rest.get("/paths/2")["admin"] == "down"
            rest.put("/paths/2/admin", {"state": "up"})
            sender.wait(timeout=seconds + 30)
            time.sleep(1.0)
            decisions = rest.get("/decisions", {"since": 0, "limit": 1000})
        finally:
            stop_controller(ctl)
        sink.terminate()
        sink.wait(timeout=10)
    report = json.loads((tmp_path / "bulk.json").read_text())
    streams = report["streams"]
    assert len(streams) == 4 and not any("error" in s for s in streams), report
    # every stream kept going through every policy switch: none was reset or starved
    assert all(s["bytes"] > 200_000 for s in streams), [s["bytes"] for s in streams]
    applied = {d["policy"] for d in decisions["decisions"] if d["switch"] == "s1"}
    assert {"llhd", "rr", "fdmvqs+lm3", "cmtla", "qos", "minrtt", "letflow", "ecmp"} <= applied
    assert decisions["loop"]["iterations"] > 10
