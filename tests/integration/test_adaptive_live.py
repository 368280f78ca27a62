"""The `adaptive` policy on a live testbed (docs/adaptive-policy.md, "Adaptive policy selection"):
BMv2 edges, linkem paths, UDP flows from h1 to h2; path 2 turns lossy mid-run and the class switches
from the loss-blind arm to the loss-aware one, in the new context, for the reason the learned table
shows."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

from mpsched import addressing as ap
from tests.conftest import require
from tests.sockets import wait_listening

# a failure on a deadline says whether the machine was saturated (tests/integration/conftest.py)
pytestmark = [pytest.mark.integration, pytest.mark.usefixtures("machine_load")]

PORT = 5311
QOS_ARM = "qos:max_loss=0.01"
# the context keyed on loss only (one level for delay, jitter and load), no exploration, no
# pooling, the flat prior (an arm that failed gives way to an untried one): the switch must
# come from the context change and the outcomes alone
PARAMS = {
    "prior": "flat",
    "arms": f"ecmp,{QOS_ARM}",
    "exploration": "epsilon",
    "epsilon": 0.0,
    "pool": 0.0,
    "dwell_periods": 10,
    "settle_periods": 2,
    "min_dwell_periods": 3,
    "context_hold_periods": 3,
    "outcome": "met",
    "delay_levels": "any:0:1",
    "jitter_levels": "any:0:1",
    "load_levels": "any:0:1",
}


@pytest.fixture
def prerequisites(artifacts):
    require("root", "simple_switch_grpc", "mininet", "ethtool", "linkem")
    return artifacts


def _view(rest) -> dict:
    return rest.get("/classes/0/adaptive")["switches"]["s1"]


def test_the_class_switches_policy_when_a_path_turns_lossy(prerequisites, tmp_path: Path):
    from mpsched.proc.controller import start_controller, stop_controller
    from mpsched.topo.testbed import Testbed, TopoSpec

    spec = TopoSpec.from_rates((5.0, 5.0), log_dir=tmp_path)
    with Testbed(spec) as bed:
        ctl, rest = start_controller(bed.netcfg_path, tmp_path / "ctl.log", poll=0.2,
                                     p4info=prerequisites.p4info,
                                     bmv2_json=prerequisites.bmv2_json)
        try:
            classes = [{"id": 0, "name": "default",
                        "policy": {"name": "adaptive", "params": PARAMS},
                        "qos_target": {"max_loss": 0.02}}]
            listed = rest.put("/classes", {"classes": classes})
            assert listed[0]["qos_target"]["max_loss"] == 0.02
            gen = [sys.executable, "-m", "mpsched.traffic.gen"]
            sink = bed.host("h2").popen([*gen, "sink", "--port", str(PORT), "--udp-port",
                                         str(PORT), "--out", str(tmp_path / "sink.json")])
            bed.registry.add_process(sink.pid, "sink")
            wait_listening(sink, PORT, udp=True)
            # 8 UDP flows, 4 Mbit/s in all: no queue fills on two 5 Mbit/s paths
            cbr = bed.host("h1").popen([*gen, "cbr", "--dst", ap.H2_IP, "--port", str(PORT),
                                        "--udp-port", str(PORT), "--flows", "8",
                                        "--rate-mbps", "4", "--seconds", "30",
                                        "--out", str(tmp_path / "cbr.json")])
            bed.registry.add_process(cbr.pid, "cbr")
            time.sleep(8.0)
            before = _view(rest)
            clean = before["stable_context"]
            assert clean.startswith("loss=low"), before["context"]
            assert before["arm"] == "ecmp", before["history"]
            ecmp_clean = before["table"][clean]["arms"]["ecmp"]
            assert ecmp_clean["n"] >= 3 and ecmp_clean["mean"] > 0.75, before["table"]
            params = bed.spec.paths[1].forward
            bed.set_path(2, "ab", params.with_changes(loss=0.2))
            deadline = time.monotonic() + 15.0
            after = _view(rest)
            while time.monotonic() < deadline and after["arm"] != QOS_ARM:
                time.sleep(0.5)
                after = _view(rest)
            time.sleep(2.0)
            final = _view(rest)
            decisions = rest.get("/decisions", {"since": 0, "limit": 1000})["decisions"]
        finally:
            stop_controller(ctl)
        cbr.wait(timeout=40)
        sink.terminate()
        sink.wait(timeout=10)
    lossy = final["stable_context"]
    assert after["arm"] == QOS_ARM, after["history"]
    assert lossy.startswith("loss=high") and lossy != clean, final["context"]
    # the loss-blind arm failed the class's loss target in the lossy context, the loss-aware
    # one met it there and kept the class; the clean context's evidence is untouched
    table = final["table"]
    assert table[lossy]["arms"]["ecmp"]["n"] >= 1 and table[lossy]["arms"]["ecmp"]["last"] == 0
    assert table[lossy]["arms"][QOS_ARM]["mean"] > table[lossy]["arms"]["ecmp"]["mean"]
    assert final["arm"] == QOS_ARM and final["switches"] >= 1
    scored = [h for h in final["history"] if h["scored"] and h["context"] == lossy]
    assert any(h["arm"] == "ecmp" and (h["measured"]["loss"] or 0) > 0.02 for h in scored), scored
    # the switch shows in the decision log: the weights of s1 moved off path 2
    s1 = [d for d in decisions if d["switch"] == "s1" and d["policy"] == "adaptive"]
    assert any(f"arm {QOS_ARM}" in d["reason"] and d["weights"]["2"] == 0 for d in s1), [
        d["reason"][:160] for d in s1[-5:]
    ]
