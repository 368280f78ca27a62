"""The cluster's ssh tunnel with deadlines (src/mpsched/topo/cluster_links.py), without servers: the
tunnel's "@" is waited for no longer than told, a tunnel that does not come up fails naming
both servers, its ssh client is ended and the tap devices it made are removed."""

from __future__ import annotations

import subprocess
import time

import pytest

from mpsched.topo import cluster_links
from mpsched.topo.cluster_links import TAP, ClusterLink, end_process, wait_for_marker
from mpsched.topo.cluster_shell import ShellError


def sh(script: str) -> subprocess.Popen:
    return subprocess.Popen(["sh", "-c", script], stdout=subprocess.PIPE)


def test_the_marker_within_the_deadline() -> None:
    proc = sh("echo @; sleep 30")
    assert wait_for_marker(proc, 5) == "@"
    end_process(proc, 1)
    assert proc.returncode is not None


def test_no_marker_in_time_or_an_error_instead() -> None:
    proc = sh("sleep 30")
    t0 = time.monotonic()
    assert wait_for_marker(proc, 0.3) == ""
    assert time.monotonic() - t0 < 10  # not the 30 s sleep (loose: a loaded machine)
    end_process(proc, 1)
    failed = sh("echo 'channel 0: open failed'; exit 255")
    assert wait_for_marker(failed, 5).startswith("channel 0: open failed")
    failed.wait(timeout=5)


class FakeNode:
    def __init__(self, name: str, server: str) -> None:
        self.name, self.server, self.user, self.serverIP = name, server, "root", "10.9.0.1"
        self.rcmds: list[str] = []
        self.tunnel: subprocess.Popen | None = None

    def rcmd(self, cmd: str, **_opts) -> str:
        self.rcmds.append(cmd)
        return ""

    def rpopen(self, cmd, **_opts) -> subprocess.Popen:
        self.tunnel = sh("sleep 30")  # an ssh that never says "@"
        return self.tunnel


def test_a_tunnel_that_does_not_come_up_is_undone(monkeypatch) -> None:
    monkeypatch.setattr(cluster_links, "TUNNEL_START_TIMEOUT_S", 0.3)
    here, there = FakeNode("leaf1", "localhost"), FakeNode("h1_2", "rack2")
    link = ClusterLink.__new__(ClusterLink)
    with pytest.raises(ShellError, match="leaf1 on localhost - h1_2 on rack2: the ssh tunnel "
                                         "did not come up within 0.3 s"):
        link.makeTunnel(there, here, "h1_2-eth0", "leaf1-eth2")  # swapped: ssh from here
    assert here.tunnel is not None and here.tunnel.poll() is not None  # ended, reaped
    for node in (here, there):
        assert node.rcmds[-1] == f"ip link del {TAP}"  # the tap it made, removed
        assert any(c.startswith(f"ip tuntap add dev {TAP}") for c in node.rcmds)
