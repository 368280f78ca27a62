"""The fabric soak's spine restart on live switches (src/mpsched/bench/soak_fabric.py): a 2-leaf x
1-spine fabric, so that every frame between the leaves crosses the spine; the spine's BMv2
killed by its PID and started again without a program; the controller reconnects, pushes the
program and every entry again, and the leaves reach each other again. Then a short soak of
the same fabric end to end, with every kind of event."""

from __future__ import annotations

import math
import os
import subprocess
import sys
import time

import pytest

from tests.conftest import require

pytestmark = pytest.mark.integration

SECTION = {"leaf_spine": {"leaves": 2, "spines": 1, "hosts_per_leaf": 1,
                          "link": {"rate_mbps": 10, "delay_ms": 1}}}


@pytest.fixture
def prerequisites(artifacts):
    require("root", "simple_switch_grpc", "mininet", "ethtool", "linkem")
    return artifacts


def _ping(bed, a: str, b: str) -> bool:
    out = bed.host(a).cmd(f"ping -c 3 -i 0.2 -W 2 {bed.host_ip(b)}")
    return " 0% packet loss" in out


def _switch(rest, name: str) -> dict:
    return next(s for s in rest.get("/switches") if s["name"] == name)


def test_a_restarted_spine_is_programmed_again_and_carries_traffic(prerequisites, tmp_path):
    from mpsched.bench.soak_fabric import restart_switch
    from mpsched.proc.controller import start_controller, stop_controller
    from mpsched.topo.fabric_testbed import FabricSpec, FabricTestbed

    with FabricTestbed(FabricSpec(SECTION, backend="linkem", log_dir=tmp_path)) as bed:
        ctl, rest = start_controller(
            bed.netcfg_path, tmp_path / "ctl.log", bed.registry, poll=0.5,
            p4info=prerequisites.p4info, bmv2_json=prerequisites.bmv2_json, timeout=60)
        try:
            assert _ping(bed, "h1_1", "h2_1")
            old_pid = bed.host("spine1").bmv2.process.pid
            wall = restart_switch(bed, "spine1")
            assert bed.host("spine1").bmv2.process.pid != old_pid
            assert not os.path.exists(f"/proc/{old_pid}/status")
            deadline = time.monotonic() + 60
            sw = _switch(rest, "spine1")
            while time.monotonic() < deadline:
                sw = _switch(rest, "spine1")
                if sw["state"] == "ready" and (sw["programmed"] or {}).get("at", 0) > wall:
                    break
                time.sleep(0.1)
            assert sw["state"] == "ready", sw
            assert sw["programmed"]["how"] == "pushed" and sw["programmed"]["at"] > wall, sw
            # a BMv2 without the program forwards nothing: these pass through the new one
            assert _ping(bed, "h1_1", "h2_1") and _ping(bed, "h2_1", "h1_1")
            assert bed.dead_switches() == []
            assert ctl.poll() is None
        finally:
            stop_controller(ctl, bed.registry)


def test_a_short_fabric_soak_ends_with_its_keys(prerequisites, tmp_path):
    """90 s of `--fabric 2x1`: a linkem flap at 15 s, the restart at 20 s, an admin flap at
    60 s and a linkem one at 75 s (none in the restart's quiet half minute)."""
    from mpsched.proc.layout import build_dir, linkem_binary

    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "linkem").symlink_to(linkem_binary())
    (tmp_path / "p4").symlink_to(build_dir() / "p4")
    env = dict(os.environ, MPSCHED_BUILD_DIR=str(tmp_path))
    proc = subprocess.run(
        [sys.executable, "-m", "mpsched.bench.soak", "--fabric", "2x1", "--minutes", "1.5",
         "--warmup-s", "10", "--sample-every-s", "5", "--slope-after-s", "20",
         "--flap-every-s", "15", "--flap-down-s", "3", "--restart-at-s", "20"],
        capture_output=True, text=True, timeout=240, env=env,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    lines = proc.stdout.splitlines()
    keys = dict(line.split("=", 1) for line in lines if line.startswith("soak_"))
    assert list(keys)[-6:] == ["soak_rss_growth_pct", "soak_rss_slope_kb_per_min",
                               "soak_rss_ls_slope_kb_per_min", "soak_fds_growth",
                               "soak_threads_growth", "soak_loop_p99_ms"]
    assert 0 < float(keys["soak_restart_reprogrammed_s"]) < 30
    assert float(keys["soak_restart_reprogrammed_s"]) <= float(keys["soak_restart_traffic_s"])
    assert keys["soak_rest_errors"] == "0"
    assert not math.isnan(float(keys["soak_loop_p99_ms"]))
    assert "2 link failures through linkem, 1 administrative ones, 1 restart" in proc.stdout
    # every process sampled: the controller, both lives of the spine, the leaves, the links
    names = {line.split(":")[0] for line in lines if ": rss " in line}
    assert {"controller", "leaf1", "leaf2", "spine1", "spine1#2", "leaf1-spine1",
            "leaf2-spine1"} <= names, names
    csv = (tmp_path / "logs" / "soak-fabric" / "samples.csv").read_text().splitlines()
    assert csv[0] == "t_s,process,pid,rss_kb,fds,threads,loop_p99_ms" and len(csv) > 50
