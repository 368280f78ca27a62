"""The Mininet testbed with BMv2 switches and the controller: traffic flows over the
chosen path, and nothing is left behind, after a normal stop or after the owner is killed."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from .conftest import require

pytestmark = pytest.mark.integration


def links() -> set[str]:
    out = subprocess.run(["ip", "-o", "link", "show"], capture_output=True, text=True).stdout
    return {line.split(":")[1].strip().split("@")[0] for line in out.splitlines()}


def running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}/cmdline").exists()


@pytest.fixture
def prerequisites(artifacts):
    require("root", "simple_switch_grpc", "mininet", "ethtool")
    return artifacts


def test_ping_over_weighted_path_and_clean_stop(prerequisites, tmp_path):
    from mpsched.bmv2 import free_port
    from mpsched.controller.__main__ import command as controller_command
    from mpsched.demo import RestClient, wait_controller
    from mpsched.topo.testbed import Testbed, TopoSpec

    before = links()
    with Testbed(TopoSpec.from_rates((10.0, 5.0), log_dir=tmp_path)) as bed:
        recorded = dict(bed.registry.processes)
        port = free_port()
        ctl = subprocess.Popen(
            controller_command(bed.netcfg_path, port, 0.2, prerequisites.p4info,
                               prerequisites.bmv2_json),
            stdout=(tmp_path / "ctl.log").open("wb"), stderr=subprocess.STDOUT,
        )
        try:
            rest = RestClient(f"http://127.0.0.1:{port}")
            wait_controller(rest, ctl, timeout=30)
            rest.set_weight(2, 0)
            out = bed.host("h1").cmd("ping -c 5 -i 0.2 -W 2 10.0.2.1")
            assert " 0% packet loss" in out, out
            time.sleep(0.6)
            paths = {p["id"]: p for p in rest.get("/paths")}
            assert paths[1]["packets"] >= 10 and paths[2]["packets"] == 0, paths
        finally:
            ctl.terminate()
            ctl.wait(timeout=10)
    assert not any(running(pid) for pid in recorded), recorded
    assert links() == before


def test_killed_owner_is_swept(prerequisites, tmp_path):
    import json

    from mpsched.cleanup import STATE_DIR, sweep

    before = links()
    env = dict(os.environ, MPSCHED_BUILD_DIR=str(tmp_path))
    proc = subprocess.Popen([sys.executable, "-m", "mpsched.topo"], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        line = proc.stdout.readline()
        assert line.startswith("netcfg:"), line + proc.stdout.read()
        assert links() != before
        state = json.loads((STATE_DIR / f"{proc.pid}.json").read_text())
        pids = [int(pid) for pid in state["processes"]]
        assert len(pids) >= 4  # two BMv2s, two host shells (and the switches' shells)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    sweep()
    time.sleep(0.5)
    assert links() == before
    assert not [pid for pid in pids if running(pid)]
