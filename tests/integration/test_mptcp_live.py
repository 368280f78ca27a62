"""MPTCP-aware mode on a live testbed: a real kernel-MPTCP connection (three subflows from
three addresses of h1) across BMv2 edge switches gets each subflow pinned to its own path,
the per-path counters of s1 show all three paths carrying it, a path failure re-pins the
subflow that used it, and the connection's end unpins everything; on four paths, the fastest
path failing and returning gets a subflow back (re-placement by live cost, docs/mptcp.md)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mpsched import addressing as ap
from tests.conftest import require
from tests.sockets import wait_listening

# a failure on a deadline says whether the machine was saturated (tests/integration/conftest.py)
pytestmark = [pytest.mark.integration, pytest.mark.usefixtures("machine_load")]

PORT = 5401
RATES = (6.0, 4.0, 2.0)  # as scenarios/mptcp-*.yaml: within what this host forwards
SECONDS = 16.0


@pytest.fixture
def prerequisites(artifacts):
    require("root", "simple_switch_grpc", "mininet", "ethtool", "linkem")
    return artifacts


def wait_for(fn, timeout: float, interval: float = 0.2):
    """fn() until it returns something truthy, or the last answer after `timeout`."""
    end = time.monotonic() + timeout
    while True:
        answer = fn()
        if answer or time.monotonic() > end:
            return answer
        time.sleep(interval)


def tx_bytes(rest) -> dict[int, int]:
    """Bytes s1 placed onto each path so far (its path_tx counters)."""
    return {p["id"]: p["by_switch"]["s1"]["tx_bytes"] for p in rest.get("/paths")}


def test_subflows_pinned_apart_repinned_on_failure_unpinned_at_the_end(
    prerequisites, tmp_path: Path
):
    from mpsched.emu.params import LinkParams
    from mpsched.proc.controller import start_controller, stop_controller
    from mpsched.topo.testbed import Testbed, TopoSpec

    spec = TopoSpec.from_rates(RATES, queue_packets=50, host_addresses=3, log_dir=tmp_path)
    with Testbed(spec) as bed:
        ctl, rest = start_controller(bed.netcfg_path, tmp_path / "ctl.log", poll=0.2,
                                     p4info=prerequisites.p4info,
                                     bmv2_json=prerequisites.bmv2_json)
        try:
            assert rest.get("/params")["mptcp"]["steering"] is True
            bed.enable_mptcp(3)
            gen = [sys.executable, "-m", "mpsched.traffic.gen"]
            sink = bed.host("h2").popen([*gen, "sink", "--port", str(PORT), "--out",
                                         str(tmp_path / "sink.json"), "--seconds", "40"])
            bed.registry.add_process(sink.pid, "sink")
            wait_listening(sink, PORT)
            sender = bed.host("h1").popen([*gen, "bulk", "--mptcp", "--dst", ap.H2_IP,
                                           "--port", str(PORT), "--seconds", f"{SECONDS:g}",
                                           "--streams", "1", "--out",
                                           str(tmp_path / "bulk.json")])
            bed.registry.add_process(sender.pid, "bulk")

            def three_subflows():
                conns = rest.get("/mptcp/connections")["connections"]
                return conns if conns and len(conns[0]["subflows"]) == 3 else None

            conns = wait_for(three_subflows, timeout=8)
            assert conns, rest.get("/mptcp/connections")
            (conn,) = conns
            subflows = conn["subflows"]
            assert [s["initial"] for s in subflows] == [True, False, False], subflows
            assert {s["src"] for s in subflows} == {ap.host_ip(1, k) for k in (1, 2, 3)}
            # each subflow on its own path; the initial one on the best (ecmp: path 1)
            assert sorted(s["path_id"] for s in subflows) == [1, 2, 3], subflows
            assert subflows[0]["path_id"] == 1
            # the kernel agrees on the tokens (ss shows each end's local token)
            for host, key in (("h2", "server_token"), ("h1", "client_token")):
                ss = bed.host(host).cmd("ss -Mni")
                tokens = {int(t, 16) for t in re.findall(r"token:([0-9a-f]+)", ss)}
                assert int(conn[key], 16) in tokens, (host, conn[key], ss)
            # the per-path counters: every path carries a share of the connection
            before = tx_bytes(rest)
            time.sleep(3.0)
            after = tx_bytes(rest)
            carried = {p: after[p] - before[p] for p in before}
            print("bytes per path in 3 s:", carried)
            for p, rate in zip((1, 2, 3), RATES, strict=True):
                assert carried[p] > 0.3 * rate * 1e6 / 8 * 3, (p, carried)

            # path 2 fails: its subflow is re-pinned onto a surviving path
            down = LinkParams(rate_mbps=RATES[1], queue_packets=50, up=False)
            for direction in ("ab", "ba"):
                bed.set_path(2, direction, down)
            moved_from = next(s for s in subflows if s["path_id"] == 2)

            def repinned():
                c = rest.get(f"/mptcp/connections/{conn['id']}")
                paths = {(s["src"], s["sport"]): s["path_id"] for s in c["subflows"]}
                key = (moved_from["src"], moved_from["sport"])
                return c if key in paths and paths[key] in (1, 3) else None

            c = wait_for(repinned, timeout=5)
            assert c, rest.get(f"/mptcp/connections/{conn['id']}")
            assert 2 not in {s["path_id"] for s in c["subflows"]}
            before = tx_bytes(rest)
            time.sleep(2.0)
            after = tx_bytes(rest)
            assert after[1] - before[1] > 0.3 * RATES[0] * 1e6 / 8 * 2, (before, after)
            assert after[2] - before[2] < 20_000, (before, after)  # only probes left

            # the sender ends: the connection's subflows close and are unpinned
            assert sender.wait(timeout=SECONDS + 20) == 0
            gone = wait_for(lambda: rest.get("/mptcp/connections")["connections"] == [],
                            timeout=10)
            assert gone, rest.get("/mptcp/connections")
            got = json.loads((tmp_path / "bulk.json").read_text())
            assert got["streams"][0]["bytes"] > 0, got
        finally:
            stop_controller(ctl)
            for proc in ("sink", "sender"):
                p = locals().get(proc)
                if isinstance(p, subprocess.Popen) and p.poll() is None:
                    p.kill()


RATES_4 = (6.0, 3.0, 2.0, 1.0)  # the set-up: 4 paths, 3 subflows, the fastest fails
DWELL_S = 2.0  # mptcp.min_dwell_s for this test (default 5): keeps it short


def test_the_fastest_path_fails_and_returns_and_gets_a_subflow_back(
    prerequisites, tmp_path: Path
):
    from mpsched.emu.params import LinkParams
    from mpsched.proc.controller import start_controller, stop_controller
    from mpsched.topo.testbed import Testbed, TopoSpec

    spec = TopoSpec.from_rates(RATES_4, queue_packets=50, host_addresses=3, log_dir=tmp_path)
    with Testbed(spec) as bed:
        ctl, rest = start_controller(bed.netcfg_path, tmp_path / "ctl.log", poll=0.2,
                                     p4info=prerequisites.p4info,
                                     bmv2_json=prerequisites.bmv2_json)
        try:
            rest.put("/params", {"mptcp": {"min_dwell_s": DWELL_S}})
            bed.enable_mptcp(3)
            gen = [sys.executable, "-m", "mpsched.traffic.gen"]
            sink = bed.host("h2").popen([*gen, "sink", "--port", str(PORT), "--out",
                                         str(tmp_path / "sink.json"), "--seconds", "50"])
            bed.registry.add_process(sink.pid, "sink")
            wait_listening(sink, PORT)
            sender = bed.host("h1").popen([*gen, "bulk", "--mptcp", "--dst", ap.H2_IP,
                                           "--port", str(PORT), "--seconds", "30",
                                           "--streams", "1", "--out",
                                           str(tmp_path / "bulk.json")])
            bed.registry.add_process(sender.pid, "bulk")

            def pinned() -> dict[tuple[str, int], int | None]:
                conns = rest.get("/mptcp/connections")["connections"]
                if not conns:
                    return {}
                return {(s["src"], s["sport"]): s["path_id"] for s in conns[0]["subflows"]}

            # three subflows on distinct paths; path 1 (fastest, cheapest when loaded) holds
            # one: at once, or by re-placement within a dwell
            assert wait_for(lambda: len(set(pinned().values()) - {None}) == 3, timeout=8), (
                rest.get("/mptcp/connections"))
            assert wait_for(lambda: 1 in pinned().values(), timeout=3 * DWELL_S + 4), pinned()
            on_1 = next(k for k, p in pinned().items() if p == 1)

            # path 1 fails: its subflow is re-pinned onto a surviving path at once
            down = LinkParams(rate_mbps=RATES_4[0], queue_packets=50, up=False)
            for direction in ("ab", "ba"):
                bed.set_path(1, direction, down)
            assert wait_for(lambda: pinned().get(on_1) in (2, 3, 4), timeout=5), pinned()
            print("at the failure:", pinned())
            time.sleep(3.0)

            # path 1 returns: a subflow goes back to it within the dwell, the loss window
            # of the failure (5 s) and a few periods
            up = LinkParams(rate_mbps=RATES_4[0], queue_packets=50)
            for direction in ("ab", "ba"):
                bed.set_path(1, direction, up)
            back_at = time.monotonic()
            assert wait_for(lambda: 1 in pinned().values(), timeout=DWELL_S + 8), pinned()
            print(f"back on path 1 after {time.monotonic() - back_at:.1f} s:", pinned())
            before = tx_bytes(rest)
            time.sleep(2.0)
            after = tx_bytes(rest)
            # it carries data again, not only probes
            assert after[1] - before[1] > 0.3 * RATES_4[0] * 1e6 / 8 * 2, (before, after)
            assert sender.wait(timeout=40) == 0
            log = (tmp_path / "ctl.log").read_text(errors="replace").splitlines()
            print("\n".join(line for line in log if "pinned to path" in line))
        finally:
            stop_controller(ctl)
            for proc in ("sink", "sender"):
                p = locals().get(proc)
                if isinstance(p, subprocess.Popen) and p.poll() is None:
                    p.kill()
