"""The lab past one machine: a 2x2 leaf-spine fabric over two servers on Mininet's cluster
edition (src/mpsched/topo/cluster_testbed.py). The second server is an sshd of its own on this
machine
(tests/second_server.py: key-only, its own network stack). Switches, link emulators and hosts
are placed on both; the controller programs every switch over P4Runtime (TLS, client
certificates) at its server's address; ping and a TCP transfer cross the servers (through the
cluster edition's ssh tunnels); and once the testbed stops nothing of it is left on either
server. Every wait has a deadline and names what did not happen; on a failure or Ctrl-C
the testbed and the second server come down (the second server's end takes every process
of its sessions, tests/second_server.py)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import requests
import yaml

from mpsched import certs
from mpsched.controller.__main__ import command as controller_command
from mpsched.lab.scenario import parse
from mpsched.lab.testbeds import make_testbed
from mpsched.proc.bmv2 import free_port
from mpsched.topo.cluster_links import TAP, end_process
from tests.conftest import require, token_file
from tests.second_server import SecondServer
from tests.waiting import wait_until

pytestmark = [pytest.mark.integration, pytest.mark.usefixtures("machine_load")]

RATE_MBPS = 20  # every link's
# every link's in `mpsched run`'s scenario: its two bulk transfers through the ssh tunnels (TCP
# over TCP), four BMv2s and the link emulators must not saturate two cores themselves
RUN_RATE_MBPS = 5
TRANSFER_S = 3
STOP_S = 10  # a process's end after SIGTERM, then after SIGKILL


def certificates(out: Path, server: SecondServer) -> Path:
    """`mpsched certs` for the fabric: the switches of the second server with its address."""
    here, there = ("leaf1", "spine1"), ("leaf2", "spine2")
    args = [f"--switch={name}" for name in here]
    args += [f"--switch={name}={server.address}" for name in there]
    assert certs.main(["--out", str(out), *args]) == 0
    return out


def scenario(server: SecondServer, tls: Path, rate_mbps: float = RATE_MBPS) -> dict:
    return {
        "name": "cluster-2x2",
        "duration_s": 5,
        "fabric": {"leaf_spine": {"leaves": 2, "spines": 2, "hosts_per_leaf": 2,
                                  "link": {"rate_mbps": rate_mbps, "delay_ms": 1}}},
        "cluster": {
            "servers": [{"name": "localhost"}, {"name": "rack2", "address": server.address}],
            "user": "root",
            "ssh_config": str(server.ssh_config),
            # leaf1, spine1 here, leaf2, spine2 there; h1_2 there, behind leaf1 here
            "placement": "roundrobin",
            "nodes": {"h1_2": "rack2"},
            "tls": str(tls),  # P4Runtime over TLS, client certificates required
        },
    }


@pytest.fixture
def second_server(tmp_path):
    require("root", "simple_switch_grpc", "mininet", "linkem", "ethtool", "iperf3", "ssh",
            "sshd", "sudo", "tun")
    previous = signal.signal(signal.SIGTERM, _interrupt)  # `timeout`, a CI's end: unwind
    try:
        with SecondServer(tmp_path / "rack2") as server:
            yield server
    finally:
        signal.signal(signal.SIGTERM, previous)


def _interrupt(signum: int, _frame: object) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


def start_controller(netcfg: Path, tmp_path: Path, artifacts, switches: int):
    port = free_port()
    log_path = tmp_path / "controller.log"
    with log_path.open("wb") as log:
        proc = subprocess.Popen(
            controller_command(netcfg, port, 0.5, artifacts.p4info, artifacts.bmv2_json,
                               token_file(tmp_path)),
            stdout=log, stderr=subprocess.STDOUT, env=dict(os.environ),
        )
    base = f"http://127.0.0.1:{port}"

    def ready() -> bool:
        if proc.poll() is not None:
            pytest.fail("controller exited:\n" + log_path.read_text())
        try:
            states = requests.get(base + "/switches", timeout=2).json()
        except requests.RequestException:
            return False
        return [s["state"] for s in states] == ["ready"] * switches

    try:
        wait_until(ready, timeout=90, interval=0.5, what="every switch of the cluster ready")
    except BaseException:
        end_process(proc, STOP_S)
        print(log_path.read_text()[-5000:])
        raise
    return proc


def pings(bed, src: str, dst: str) -> bool:
    out = bed.host(src).cmd(f"ping -c 1 -W 1 {bed.host_ip(dst)}", timeout=10)
    return " 0% packet loss" in out


def reaches(bed, src: str, dst: str) -> None:
    """`src` pings `dst` within 30 s; else the failure says which switches died and how."""
    try:
        wait_until(lambda: pings(bed, src, dst), timeout=30, interval=0.5,
                   what=f"{src} reaching {dst} across servers")
    except AssertionError as err:
        raise AssertionError(f"{err}; switches dead: {bed.why_dead() or 'none'}") from None


def transfer(bed, src: str, dst: str) -> dict:
    """A TCP transfer of TRANSFER_S seconds from `src` to `dst` (iperf3): its report."""
    server = bed.host(dst)
    server.cmd("iperf3 -s -1 -D -p 5301")
    wait_until(lambda: "5301" in server.cmd("ss -ltn"), timeout=10, what="iperf3 listening")
    out = bed.host(src).cmd(f"iperf3 -c {bed.host_ip(dst)} -p 5301 -t {TRANSFER_S} -J "
                            "--connect-timeout 5000", timeout=TRANSFER_S + 30)
    assert "{" in out, f"iperf3 gave no report: {out[-1000:]}"
    return json.loads(out[out.index("{"):])


def leftovers(bed, server: SecondServer) -> dict[str, list[str]]:
    """Interfaces of the testbed (and a tunnel's tap device) still on either server,
    processes still in the second."""
    names = {*bed.plan.interfaces(), TAP}
    here = subprocess.run(["ip", "-o", "link"], capture_output=True, text=True,
                          timeout=10).stdout
    there = server.ssh("ip", "-o", "link")

    def found(listing: str) -> list[str]:
        return sorted(n for n in names if f" {n}:" in listing or f" {n}@" in listing)

    own = {server.proc.pid} if server.proc else set()
    return {"here": found(here), "there": found(there),
            "processes there": [str(p) for p in server.netns_pids() if p not in own]}


def no_traffic_left(tmp_path: Path) -> None:
    """No traffic process of the run's (its command names `tmp_path`) is left, here or on
    the second server (one machine: one process table)."""
    pattern = f"mpsched.traffic.gen .*{tmp_path}"
    try:
        wait_until(lambda: not subprocess.run(["pgrep", "-f", pattern],
                                              capture_output=True).stdout,
                   timeout=15, interval=0.5, what="no traffic process of the run left")
    except AssertionError:
        pids = subprocess.run(["pgrep", "-d,", "-f", pattern], capture_output=True,
                              text=True).stdout.strip()
        listing = subprocess.run(["ps", "-o", "pid,ppid,etime,cmd", "-p", pids or "1"],
                                 capture_output=True, text=True).stdout
        raise AssertionError(f"traffic processes left:\n{listing}") from None


def names_free(bed) -> None:
    """No interface of the layout on this machine yet: Mininet would delete another run's
    (a fabric test running outside the shared lock) and that run would delete ours."""
    here = subprocess.run(["ip", "-o", "link"], capture_output=True, text=True,
                          timeout=10).stdout
    used = sorted(n for n in set(bed.plan.interfaces()) if f" {n}:" in here or f" {n}@" in here)
    assert not used, f"interfaces of another run on this machine: {used}"


def test_a_fabric_runs_over_two_servers(second_server, tmp_path, artifacts):
    sc = parse(scenario(second_server, certificates(tmp_path / "certs", second_server)),
               fabric=True)
    bed = make_testbed(sc, 1, tmp_path / "logs")
    names_free(bed)
    placed = bed.servers_of()
    assert {"leaf2", "spine2", "h2_1", "h2_2", "h1_2"} <= set(placed["rack2"])
    assert {"leaf1", "spine1", "h1_1"} <= set(placed["localhost"])
    controller = None
    try:
        with bed:
            addresses = {s.name: s.grpc_address for s in bed.netcfg.switches}
            assert addresses["leaf2"].startswith(second_server.address + ":")
            assert addresses["leaf1"].startswith("127.0.0.1:")
            assert bed.netcfg.tls is not None  # the controller's CA and client certificate
            tunnels = [link for link in bed.net.links if getattr(link, "tunnel", None)]
            # h1_2 - leaf1, leaf1-spine2's emulator - spine2, leaf2-spine1's - spine1
            assert len(tunnels) == 3
            controller = start_controller(bed.netcfg_path, tmp_path, artifacts, 4)
            for src, dst in (("h1_1", "h2_1"), ("h2_2", "h1_1"), ("h1_2", "h1_1")):
                reaches(bed, src, dst)
            report = transfer(bed, "h1_1", "h2_1")
            received = report["end"]["sum_received"]
            # across both servers at the emulated links' rate: no faster (linkem shapes it
            # across the tunnels), not much slower
            assert RATE_MBPS / 4 < received["bits_per_second"] / 1e6 <= RATE_MBPS * 1.05
            assert not bed.dead_switches()
    finally:
        if controller is not None:
            end_process(controller, STOP_S)
    nothing = {"here": [], "there": [], "processes there": []}
    wait_until(lambda: leftovers(bed, second_server) == nothing, timeout=15, interval=0.5,
               what="nothing of the testbed left on either server")


def run_scenario(server: SecondServer, tmp_path: Path, duration_s: float) -> tuple[Path, list]:
    """The test's scenario with two bulk transfers between the servers, one each way, in a
    file; and the `mpsched run` command of one run of it."""
    doc = scenario(server, certificates(tmp_path / "certs", server), RUN_RATE_MBPS)
    doc["duration_s"], doc["warmup_s"] = duration_s, 1
    doc["workload"] = [{"kind": "bulk", "pairs": [{"src": "h1_1", "dst": "h2_1"},
                                                  {"src": "h2_2", "dst": "h1_2"}]}]
    path = tmp_path / "cluster.yaml"
    path.write_text(yaml.safe_dump(doc))
    return path, [sys.executable, "-m", "mpsched.cli", "run", str(path), "--policy", "ecmp",
                  "--runs", "1", "--out", str(tmp_path / "out")]


def interrupt(proc: subprocess.Popen) -> None:
    """Ctrl-C to a `mpsched run` (it tears its testbed down on both servers), SIGKILL only if
    it has not ended within 60 s."""
    if proc.poll() is not None:
        return
    proc.send_signal(signal.SIGINT)
    try:
        proc.wait(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=STOP_S)


def run_to_end(command: list, log: Path, timeout: float) -> tuple[int, str]:
    """Run `command` (its stderr in `log`) for at most `timeout` s; past that, or when the
    test itself is interrupted, Ctrl-C to it (it tears its testbed down). Its exit code and
    stderr."""
    with log.open("wb") as err:
        proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=err)
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        interrupt(proc)
        raise AssertionError(f"`mpsched run` did not end within {timeout:g} s:\n"
                             f"{log.read_text()[-3000:]}") from None
    finally:
        interrupt(proc)  # the test's own Ctrl-C or SIGTERM: the run's teardown first
    return proc.returncode, log.read_text()


def test_mpsched_run_runs_a_cluster_scenario(second_server, tmp_path):
    """`mpsched run` on a cluster scenario: its controller, its workload's processes on
    hosts of both servers (ended there by the runner's signals), its measurement."""
    path, command = run_scenario(second_server, tmp_path, 6)
    bed = make_testbed(parse(yaml.safe_load(path.read_text()), fabric=True), 1, tmp_path)
    names_free(bed)
    out = tmp_path / "out"
    code, err = run_to_end(command, tmp_path / "run.log", timeout=200)
    assert code == 0, err[-3000:]
    nothing = {"here": [], "there": [], "processes there": []}
    wait_until(lambda: leftovers(bed, second_server) == nothing, timeout=15, interval=0.5,
               what="nothing of the run left on either server")
    (run,) = (out / "cluster-2x2").glob("ecmp/run0/*__run000.json")
    result = json.loads(run.read_text())
    # both transfers crossed the servers (leaf1 here, leaf2 there): a pair that carried
    # nothing is named in the result's warnings
    assert result["warnings"] == [], result["warnings"]
    pairs = {name: figures["goodput_mbps"] for name, figures in result["pairs"].items()}
    print(f"goodput per pair (Mbit/s): {pairs}; CPU-bound: {result['cpu_bound']}")
    assert set(pairs) == {"leaf1->leaf2", "leaf2->leaf1"}, result["pairs"]
    # each carried traffic, no faster than the emulated links allow (linkem shapes it across
    # the tunnels); TCP through an ssh tunnel (TCP over TCP) on a busy machine does not
    # always come close to their rate, so the floor is only a tenth of it
    for pair, goodput in pairs.items():
        assert RUN_RATE_MBPS / 10 < goodput <= RUN_RATE_MBPS * 1.05, (pair, pairs)
    # the CPU sampler sees this machine's processes only
    shares = result["cpu_shares"]
    assert {"leaf1", "spine1", "controller"} <= set(shares), shares
    assert not {"leaf2", "spine2"} & set(shares), shares
    no_traffic_left(tmp_path)


def test_an_interrupted_cluster_run_leaves_nothing_on_either_server(second_server, tmp_path):
    """Ctrl-C in the middle of a run: the testbed comes down on both servers."""
    path, command = run_scenario(second_server, tmp_path, 60)
    bed = make_testbed(parse(yaml.safe_load(path.read_text()), fabric=True), 1, tmp_path)
    names_free(bed)
    log = tmp_path / "run.log"
    with log.open("wb") as err:
        proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=err)
    try:
        wait_until(lambda: proc.poll() is not None or list((tmp_path / "out").rglob(
            "send*.log")), timeout=150, interval=0.5, what="the run's workload started")
        assert proc.poll() is None, log.read_text()
        time.sleep(2)  # traffic between the servers
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            raise AssertionError("`mpsched run` did not end within 60 s of its Ctrl-C:\n"
                                 f"{log.read_text()[-3000:]}") from None
    finally:
        interrupt(proc)
    nothing = {"here": [], "there": [], "processes there": []}
    wait_until(lambda: leftovers(bed, second_server) == nothing, timeout=15, interval=0.5,
               what="nothing of the interrupted run left on either server")
    # the workload's processes, on hosts of either server (their own namespaces)
    no_traffic_left(tmp_path)
