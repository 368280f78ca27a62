"""The deadlines on a cluster node's shell (src/mpsched/topo/cluster_shell.py), on Mininet's own
Node code
with a plain bash on a pty (no root, no mnexec, no ssh): a command that does not answer and
a shell that ends fail at once with the node, its server and the command named, and the
node's later commands are skipped instead of blocking."""

from __future__ import annotations

import signal
import subprocess
import time

import pytest
from mininet.node import Node

from mpsched.topo.cluster_shell import Deadlines, ShellError, running

# Every command that would block here is a `sleep 30`: a call that returns within a third of
# that did not wait for it (a bound a loaded machine does not break, as a 1 s one did).
NOT_BLOCKED_S = 10


def default_signals() -> None:
    """Ctrl-C reaches the shell's commands however pytest was started: a shell started in
    the background (`pytest &`) hands on SIGINT and SIGQUIT ignored, as a login's do not."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGQUIT, signal.SIG_DFL)


class ShellNode(Deadlines, Node):
    """Mininet's Node with the deadlines; its shell without mnexec (`mnexec -cd env ...`)."""

    server = "rack9"

    def _popen(self, cmd, **params):
        return subprocess.Popen(cmd[2:], start_new_session=True, preexec_fn=default_signals,
                                **params)


@pytest.fixture
def node():
    n = ShellNode("n1", inNamespace=False)
    yield n
    n.end_shell()
    n.cleanup()


def test_a_command_answers_within_its_deadline(node) -> None:
    assert node.cmd("echo hi", timeout=5).strip() == "hi"
    assert node.shell_failed is None


def test_a_command_past_its_deadline_fails_naming_it_and_ends_the_shell(node) -> None:
    t0 = time.monotonic()
    with pytest.raises(ShellError, match=r"n1 on rack9: .*`sleep 30` \(1 s\)"):
        node.cmd("sleep 30", timeout=1)
    assert time.monotonic() - t0 < NOT_BLOCKED_S
    assert node.shell.poll() is not None  # ended: its remote side would get SIGHUP
    t0 = time.monotonic()
    assert node.cmd("echo again") == ""  # skipped, not blocked
    assert time.monotonic() - t0 < NOT_BLOCKED_S


def test_a_shell_that_ends_under_a_command_fails_it_at_once(node) -> None:
    t0 = time.monotonic()
    with pytest.raises(ShellError, match=r"its shell ended \(exit 3\) during `exit 3`"):
        node.cmd("exit 3")
    assert time.monotonic() - t0 < NOT_BLOCKED_S
    assert "exit 3" in node.shell_failed


def test_monitor_waits_no_longer_than_told(node) -> None:
    node.sendCmd("sleep 30")
    t0 = time.monotonic()
    assert node.monitor(timeoutms=300) == ""
    assert time.monotonic() - t0 < NOT_BLOCKED_S


def test_rcmd_has_a_deadline(node, monkeypatch) -> None:
    def rpopen(*cmd, **opts):
        return subprocess.Popen(["sleep", "30"], stdout=subprocess.PIPE, stdin=subprocess.PIPE)

    monkeypatch.setattr(node, "rpopen", rpopen, raising=False)
    with pytest.raises(ShellError, match=r"n1 on rack9: `ip link` did not end within 0.5 s"):
        node.rcmd("ip link", timeout=0.5)


@pytest.mark.parametrize("started", [True, False], ids=["running", "line-not-yet-read"])
def test_a_command_cut_short_is_interrupted_before_the_next(node, started) -> None:
    """As a cmd() that Ctrl-C left waiting: once its command runs, and at once, when bash may
    not have read its line whole or be forking (a Ctrl-C after `s` once ran `leep 30`)."""
    node.sendCmd("echo started; sleep 30")
    seen, deadline = "", time.monotonic() + NOT_BLOCKED_S
    while started and "started" not in seen and time.monotonic() < deadline:
        seen += node.monitor(timeoutms=200)
    t0 = time.monotonic()
    assert node.cmd("echo next", timeout=5).strip() == "next"
    assert node.cmd("echo after", timeout=5).strip() == "after"
    assert time.monotonic() - t0 < NOT_BLOCKED_S


def test_terminate_ends_the_shell_within_bounds(node) -> None:
    shell = node.shell
    node.terminate()
    assert shell.poll() is not None


class LocalShellNode(ShellNode):
    """A node on this machine whose shell's Popen ends at once, as `mnexec -d` of a
    process-group leader does (it forks); the shell's PID is the one it echoes."""

    isRemote = False  # noqa: N815 (RemoteMixin's name)

    def _popen(self, cmd, **params):
        return subprocess.Popen(["setsid", "-f", *cmd[2:]], **params)


def test_a_local_shell_is_watched_by_its_own_pid() -> None:
    node = LocalShellNode("n2", inNamespace=False)
    node.pid = int(node.cmd("echo $$").strip())  # as RemoteMixin.finishInit does
    assert node.shell.wait(timeout=5) == 0  # the Popen ended; the shell did not
    assert node.cmd("sleep 1; echo done", timeout=10).strip() == "done"
    assert node.shell_ended() is None
    shell_pid = node.pid
    node.terminate()
    assert not running(shell_pid)
