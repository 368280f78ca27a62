"""The tests' own helpers: tests/waiting.py, tests/sockets.py, tests/machine.py,
tests/controllers.py."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from types import SimpleNamespace

import pytest

from mpsched.lab.cpu import CpuSample, CpuTimes
from tests import controllers, machine, sockets
from tests.waiting import WaitTimeoutError, wait_until


def test_wait_until_returns_the_value_and_names_what_timed_out():
    start = time.monotonic()
    assert wait_until(lambda: time.monotonic() - start > 0.05 and "done", timeout=5) == "done"
    with pytest.raises(WaitTimeoutError, match=r"after 0.1s waiting for the moon \(last: 0\)"):
        wait_until(lambda: 0, timeout=0.1, interval=0.01, what="the moon")


def test_socket_tables_show_a_listener_and_a_bound_udp_socket():
    with socket.create_server(("127.0.0.1", 0)) as srv, \
            socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp:
        port = srv.getsockname()[1]
        assert sockets.tcp_listeners(port) == {"127.0.0.1"}
        udp.bind(("127.0.0.1", 0))
        uport = udp.getsockname()[1]
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as tx:
            tx.sendto(b"x" * 100, ("127.0.0.1", uport))
        (row,) = wait_until(lambda: [r for r in sockets.udp_bound(uport) if r.rx_queue > 0])
        assert row.address == "127.0.0.1" and row.drops == 0
        assert row.inode in sockets.socket_inodes(os.getpid())
    assert sockets.tcp_listeners(port) == set()


def test_a_process_socket_table_and_the_wait_for_its_server_to_listen():
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # free for TCP as far as this test can tell
    code = ("import socket, sys, time; sys.stdin.readline(); "
            f"s = socket.create_server(('127.0.0.1', {port})); "
            f"u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); u.bind(('127.0.0.1', {port})); "
            "time.sleep(30)")
    server = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE)
    try:
        assert sockets.tcp_listeners(port, server.pid) == set()  # not yet: it waits for a line
        assert server.stdin is not None
        server.stdin.write(b"go\n")
        server.stdin.close()
        sockets.wait_listening(server, port, udp=True, timeout=30)
        assert sockets.tcp_listeners(port, server.pid) == {"127.0.0.1"}
        assert [r.address for r in sockets.udp_bound(port, server.pid)] == ["127.0.0.1"]
    finally:
        server.kill()
        server.wait()
    with pytest.raises(AssertionError, match=f"server for port {port} exited"):
        sockets.wait_listening(server, port)
    quiet = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        with pytest.raises(WaitTimeoutError, match=f"listening on port {port} "):
            sockets.wait_listening(quiet, port, udp=True, timeout=0.2)
    finally:
        quiet.kill()
        quiet.wait()


def _samples(idle_per_interval: list[int]) -> list[CpuSample]:
    """Samples 1 s apart, 100 ticks per interval, `idle` of them idle."""
    out, idle, total = [CpuSample(0.0, CpuTimes(0, 0))], 0, 0
    for k, i in enumerate(idle_per_interval, start=1):
        idle, total = idle + i, total + 100
        out.append(CpuSample(float(k), CpuTimes(idle, total)))
    return out


def test_machine_record_uses_the_runners_rule():
    busy = machine.record(_samples([2, 3, 50, 1, 4]))  # idle < 10 % for 80 % of the time
    assert busy.cpu_bound is True and busy.low_idle_pct == pytest.approx(80.0)
    assert busy.mean_idle_pct == pytest.approx(12.0)
    assert "SATURATED" in busy.describe() and "80 % of the time" in busy.describe()
    calm = machine.record(_samples([60, 70, 5, 80, 90]))  # 20 %: not more than 20 %
    assert calm.cpu_bound is False and "not saturated" in calm.describe()
    assert machine.record(_samples([])).cpu_bound is None


def test_addresses_as_the_kernel_prints_them():
    assert sockets._address("0100007F") == "127.0.0.1"
    assert sockets._address("0000000000000000FFFF00000100007F") == "127.0.0.1"  # v4-mapped
    assert sockets._address("00000000000000000000000001000000") == "::1"
    assert sockets._address("00000000") == "0.0.0.0"


def _fake_controller(monkeypatch, code: str) -> list[subprocess.Popen]:
    """start_controller runs `python -c code` instead of the controller; the processes started."""
    started: list[subprocess.Popen] = []
    real = subprocess.Popen

    def popen(argv, **kw):
        started.append(real(argv, **kw))
        return started[-1]

    monkeypatch.setattr(controllers, "command", lambda *a: [sys.executable, "-c", code])
    monkeypatch.setattr(controllers.subprocess, "Popen", popen)
    return started


ARTIFACTS = SimpleNamespace(p4info="main.p4info.txt", bmv2_json="main.json")


def test_a_controller_that_never_gets_ready_is_stopped_before_the_test_fails(tmp_path,
                                                                            monkeypatch):
    started = _fake_controller(monkeypatch, "import time; time.sleep(60)")
    with pytest.raises(pytest.fail.Exception, match=r"switches: not there after 0.3s"):
        controllers.start_controller(tmp_path, ARTIFACTS, {"switches": []}, timeout=0.3,
                                     interval=0.05)
    (proc,) = started
    assert proc.returncode == -signal.SIGTERM
    assert (tmp_path / "netcfg.json").read_text() == '{"switches": []}'


def test_a_controller_that_exits_fails_the_test_with_its_log(tmp_path, monkeypatch):
    started = _fake_controller(monkeypatch, "print('no netcfg'); raise SystemExit(3)")
    with pytest.raises(pytest.fail.Exception, match=r"(?s)exited \(3\).*no netcfg"):
        controllers.start_controller(tmp_path, ARTIFACTS, tmp_path / "n.json", name="c1")
    assert started[0].returncode == 3 and (tmp_path / "c1.log").read_text() == "no netcfg\n"
