"""The Mininet testbed with BMv2 switches and the controller: traffic flows over the
chosen path, and nothing is left behind, after a normal stop or after the owner is killed."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from mpsched import addressing as ap
from tests.conftest import require
from tests.waiting import WaitTimeoutError, netcfg_line, wait_until

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


def swept(made: set[str], pids: list[int]) -> None:
    """Until none of the interfaces `made` is left and none of `pids` runs (another run's
    interfaces on a shared machine come and go: only these are looked at)."""

    def left() -> dict[str, list]:
        return {"interfaces": sorted(links() & made),
                "processes": [pid for pid in pids if running(pid)]}

    try:
        wait_until(lambda: not any(left().values()), timeout=30, interval=0.1,
                   what="the sweep's end")
    except WaitTimeoutError:
        raise AssertionError(f"left 30 s after the sweep: {left()}") from None


@pytest.fixture
def prerequisites(artifacts):
    require("root", "simple_switch_grpc", "mininet", "ethtool")
    return artifacts


@contextlib.contextmanager
def controller(bed, artifacts, tmp_path: Path):
    """The controller on the testbed's netcfg, ready; stopped on exit. Yields its REST client."""
    from mpsched.proc.controller import start_controller, stop_controller

    ctl, rest = start_controller(bed.netcfg_path, tmp_path / "ctl.log", poll=0.2,
                                 p4info=artifacts.p4info, bmv2_json=artifacts.bmv2_json)
    try:
        yield rest
    finally:
        stop_controller(ctl)


def _mtu(iface: str) -> int:
    return int(Path(f"/sys/class/net/{iface}/mtu").read_text())


def test_ping_over_weighted_path_and_clean_stop(prerequisites, tmp_path):
    from mpsched.topo.testbed import Testbed, TopoSpec

    before = links()
    with Testbed(TopoSpec.from_rates((10.0, 5.0), log_dir=tmp_path)) as bed:
        recorded = dict(bed.registry.processes)
        # P4Runtime over TLS by default: the controller below reaches the switches with the
        # description's client certificate (docs/security.md, "Local users")
        assert bed.netcfg is not None and bed.netcfg.tls is not None
        assert bed.netcfg.tls.cert is not None and Path(bed.netcfg.tls.cert).is_file()
        with controller(bed, prerequisites, tmp_path) as rest:
            rest.set_weight(2, 0)
            out = bed.host("h1").cmd(f"ping -c 5 -i 0.2 -W 2 {ap.H2_IP}")
            assert " 0% packet loss" in out, out
            # Full-size (1500-byte IP, DF) packets fit with the path tag.
            out = bed.host("h1").cmd(f"ping -c 3 -i 0.2 -W 2 -M do -s 1472 {ap.H2_IP}")
            assert " 0% packet loss" in out, out
            # both paths carry the switches' probes (small frames); only path 1 the pings
            # (5 requests + 5 replies of 98 bytes), once the controller has polled the
            # counters that count them

            def counted() -> dict | None:
                paths = {p["id"]: p for p in rest.get("/paths")}
                return paths if paths[1]["bytes"] - paths[2]["bytes"] >= 10 * 98 - 200 else None

            paths = wait_until(counted, timeout=30, interval=0.2,
                               what="the pings counted on path 1")
            assert paths[2]["bytes"] <= 40 * paths[2]["packets"], paths
    assert not any(running(pid) for pid in recorded), recorded
    assert links() == before
    assert not (tmp_path / "p4rt-tls").exists(), "the keys are removed with the testbed"


def test_killed_owner_is_swept(prerequisites, tmp_path):
    import json

    from mpsched.proc.cleanup import STATE_DIR, sweep

    before = links()
    from mpsched.proc.layout import linkem_binary

    require("linkem")
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "linkem").symlink_to(linkem_binary())
    env = dict(os.environ, MPSCHED_BUILD_DIR=str(tmp_path))
    proc = subprocess.Popen([sys.executable, "-m", "mpsched.topo"], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        seen = netcfg_line(proc)
        assert seen[-1].startswith("netcfg:"), "".join(seen)
        made = links() - before
        assert made
        state = json.loads((STATE_DIR / f"{proc.pid}.json").read_text())
        pids = [int(pid) for pid in state["processes"]]
        assert len(pids) >= 4  # two BMv2s, two host shells (and the switches' shells)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    sweep()
    swept(made, pids)


def _rtt_ms(out: str) -> float:
    """Minimum RTT from ping's summary line: the emulated delay shows in every ping, while
    the host's scheduling noise (2 cores, BMv2, linkem, the controller) only adds to some."""
    for line in out.splitlines():
        if "min/avg/max" in line:
            return float(line.split("=")[1].split("/")[0])
    raise AssertionError(f"no RTT in ping output: {out}")


def test_emulated_paths_delay_failure_and_pinned_cross_hosts(prerequisites, tmp_path):
    """Each path has its own emulated delay (seen end to end through BMv2); a path set down
    carries nothing; cross-traffic hosts stay on their pinned path whatever the weights."""
    require("linkem")
    from mpsched.emu.params import LinkParams
    from mpsched.topo.testbed import PathSpec, Testbed, TopoSpec

    slow = LinkParams(delay_ms=20.0, rate_mbps=10.0)
    fast = LinkParams(delay_ms=2.0, rate_mbps=10.0)
    spec = TopoSpec(
        paths=(PathSpec(slow, slow, cross_traffic=True), PathSpec(fast, fast)),
        backend="linkem",
        host_addresses=3,
        host_interfaces=2,
        log_dir=tmp_path,
    )
    with Testbed(spec) as bed, controller(bed, prerequisites, tmp_path) as rest:
        h1 = bed.host("h1")
        rest.set_weight(2, 0)
        rtt_slow = _rtt_ms(h1.cmd(f"ping -c 5 -i 0.2 -W 2 {ap.H2_IP}"))
        # the egress edges' path reports reach the controller's estimators, per direction
        view = rest.get("/paths/1/telemetry")["directions"]
        assert view["s1->s2"]["current"]["alive"] is True, view
        assert view["s2->s1"]["current"]["alive"] is True, view
        assert view["s1->s2"]["current"]["loss"] == 0.0, view
        rest.set_weight(1, 0)
        rest.set_weight(2, 1)
        rtt_fast = _rtt_ms(h1.cmd(f"ping -c 5 -i 0.2 -W 2 {ap.H2_IP}"))
        assert 40.0 <= rtt_slow <= 50.0, rtt_slow
        assert 4.0 <= rtt_fast <= 12.0, rtt_fast
        # the pinned cross host uses path 1 although its weight is 0
        rtt_cross = _rtt_ms(bed.host("x1").cmd(f"ping -c 3 -i 0.2 -W 2 {ap.cross_host_ip(2, 1)}"))
        assert 40.0 <= rtt_cross <= 50.0, rtt_cross
        # multi-homed h1: its address 2 leaves through h1-eth1 (its own link to s1), and
        # address 3 (a second address on eth1) too; h2's addresses 2 and 3 answer
        before = int(h1.cmd("cat /sys/class/net/h1-eth1/statistics/tx_packets"))
        for src, dst in ((ap.host_ip(1, k), ap.host_ip(2, k)) for k in (2, 3)):
            out = h1.cmd(f"ping -c 3 -i 0.2 -W 2 -I {src} {dst}")
            assert " 0% packet loss" in out, out
        assert int(h1.cmd("cat /sys/class/net/h1-eth1/statistics/tx_packets")) >= before + 6
        bed.set_path(2, "ab", fast.with_changes(up=False))
        out = h1.cmd(f"ping -c 3 -i 0.2 -W 1 {ap.H2_IP}")
        assert "100% packet loss" in out, out
        bed.set_path(2, "ab", fast)
        out = h1.cmd(f"ping -c 3 -i 0.2 -W 1 {ap.H2_IP}")
        assert " 0% packet loss" in out, out
        stats = bed.link_stats()
        assert stats[2]["ab"]["drop_down"] >= 3, stats


def test_path_through_a_core_switch(prerequisites, tmp_path):
    """A path with a core segment: s1 - e1 - c1 (Linux bridge) - f1 - s2; both segments' delays
    add up end to end, and a failure of the core link stops the path."""
    require("linkem")
    from mpsched.emu.params import LinkParams
    from mpsched.emu.segment import PathSpec, Segment
    from mpsched.topo.testbed import Testbed, TopoSpec

    access = LinkParams(delay_ms=3.0, rate_mbps=10.0)
    core = LinkParams(delay_ms=7.0, rate_mbps=100.0)
    spec = TopoSpec(paths=(PathSpec(access, access, core=Segment(core, core)),),
                    backend="linkem", log_dir=tmp_path)
    before = links()
    with Testbed(spec) as bed:
        assert "c1-br" in links()
        # Path links carry the 14-byte path tag: MTU 1600 on every interface of
        # the path (switch ports, linkem ports, the bridge and its ports); hosts 1500.
        from mpsched.topo.testbed import PATH_MTU

        for name in ("s1-eth2", "e1-eth1", "e1-eth2", "c1-eth1", "c1-br", "c1-eth2",
                     "f1-eth1", "f1-eth2", "s2-eth2"):
            assert _mtu(name) == PATH_MTU, name
        assert _mtu("s1-eth1") == 1500
        assert "mtu 1500" in bed.host("h1").cmd("ip link show h1-eth0")
        with controller(bed, prerequisites, tmp_path):
            h1 = bed.host("h1")
            rtt = _rtt_ms(h1.cmd(f"ping -c 5 -i 0.2 -W 2 {ap.H2_IP}"))
            assert 20.0 <= rtt <= 28.0, rtt
            out = h1.cmd(f"ping -c 3 -i 0.2 -W 2 -M do -s 1472 {ap.H2_IP}")
            assert " 0% packet loss" in out, out
            bed.set_path(1, "ab", core.with_changes(up=False), segment=1)
            assert "100% packet loss" in h1.cmd(f"ping -c 2 -i 0.2 -W 1 {ap.H2_IP}")
            assert bed.link_stats()[1]["ab"]["drop_down"] >= 2
    assert links() == before
