"""Deadlines on every wait of a cluster node's shell (src/mpsched/topo/cluster_nodes.py).

Mininet's `Node` waits on its shell without a deadline: `cmd()` reads the shell's pty until
the prompt comes back, `startShell()` until the first prompt, and the cluster edition's
`rcmd()` until its ssh command ends. The pty's other end stays open in this process, so a
shell whose ssh session ended (its server gone, its sshd stopped, the session killed) never
gives end-of-file: a wait on it blocks for good, and so would a test or a run's teardown.

`Deadlines` bounds each of them: a command fails with `ShellError` naming the node, its
server and the command once it has run `CMD_TIMEOUT_S` (or the `timeout` given to `cmd`),
at once when the shell ends under it, and starting a shell fails after
`SHELL_START_TIMEOUT_S`. A shell that failed is ended (its ssh client here: the remote shell
and its jobs get SIGHUP) and the node is marked failed: its later commands are skipped with
a warning and return "" (as Mininet does for a node whose shell exited), so that stopping
the network goes on over the other nodes.
"""

from __future__ import annotations

import itertools
import logging
import os
import select
import signal
import subprocess
import time
from typing import Any

from mininet.util import decode

log = logging.getLogger(__name__)
_MARKERS = itertools.count(1)  # the output of the commands that see a shell settled

CMD_TIMEOUT_S = 60.0  # any one command of a node's shell
SHELL_START_TIMEOUT_S = 45.0  # an ssh login, sudo and the first prompt
RCMD_TIMEOUT_S = 60.0  # a command over ssh on the node's server (rcmd)
SETTLE_S = 5.0  # a command interrupted by Ctrl-C: the shell back at its prompt
SETTLE_RETRY_S = 1.0  # one more Ctrl-C while the shell gives no answer
POLL_MS = 200  # how often a wait looks whether the shell still runs
END_WAIT_S = 3.0  # a failed shell's ssh client: SIGHUP, then SIGKILL after this
PROMPT = chr(127)  # Mininet's PS1: the end of every command's output


class ShellError(RuntimeError):
    """A cluster node's shell or ssh command did not answer in time, or ended."""


class Deadlines:
    """The mix-in (module docstring); before `RemoteMixin` in a node class's bases."""

    _deadline: float | None = None
    _doing: str = ""
    shell_failed: str | None = None  # why the shell was given up, once it was

    def where(self) -> str:
        name = getattr(self, "name", "?")
        return f"{name} on {getattr(self, 'server', None) or 'localhost'}"

    # ---- the bounded waits --------------------------------------------------

    def startShell(self, *args: Any, **kwargs: Any) -> None:  # noqa: N802 (Mininet's name)
        with self._bounded(SHELL_START_TIMEOUT_S, "its shell starting (ssh, sudo, bash)"):
            super().startShell(*args, **kwargs)  # type: ignore[misc]

    def cmd(self, *args: Any, timeout: float | None = None, **kwargs: Any) -> str:
        if self.shell_failed is not None:
            log.warning("%s: not run, its shell failed (%s): %s", self.where(),
                        self.shell_failed, " ".join(str(a) for a in args))
            return ""
        if getattr(self, "waiting", False):  # a command cut short by Ctrl-C
            self._settle()
            if self.shell_failed is not None:
                return ""
        line = " ".join(str(a) for a in args)
        with self._bounded(timeout or CMD_TIMEOUT_S, f"`{line}`"):
            return super().cmd(*args, **kwargs)  # type: ignore[misc]

    def _settle(self) -> None:
        """Interrupt the command still running and see the shell back at its prompt: Ctrl-C,
        then a marker command whose answer must come, within SETTLE_S; else the shell is
        given up. The prompt alone does not tell: bash reads a terminal byte by byte and a
        Ctrl-C can come while it forks, so after that prompt the rest of a cut line may run
        (the pty's flush on Ctrl-C can drop a byte or a line) or the shell may still wait
        for its child. The marker goes once the Ctrl-C's prompt came (or SETTLE_RETRY_S
        passed); without its answer within SETTLE_RETRY_S, one more Ctrl-C and a new marker
        go. Only the last marker's answer counts: the shell answers in order."""
        seen, answer = "", ""
        try:
            with self._bounded(SETTLE_S, "the end of an interrupted command"):
                deadline = self._deadline or time.monotonic() + SETTLE_S
                while not answer or answer not in seen:
                    self.sendInt()  # type: ignore[attr-defined]
                    # Its prompt first: the pty flushes its input on the Ctrl-C, so a marker
                    # written before that may be lost whole, or its first byte (seen: `cho:
                    # command not found`, hence the leading space).
                    seen += self._read_for(SETTLE_RETRY_S, PROMPT, deadline)
                    marker = f"mpsched-settled-{next(_MARKERS)}"
                    answer = f"{marker}\r\n{PROMPT}"  # its output, then the prompt
                    self.write(f" echo {marker}\n")  # type: ignore[attr-defined]
                    seen += self._read_for(SETTLE_RETRY_S, answer, deadline)
        except ShellError as err:
            log.warning("%s", err)
            return
        self.readbuf = seen.split(answer, 1)[1] + self.readbuf  # type: ignore[attr-defined]
        self.waiting = False

    def _read_for(self, wait_s: float, until: str, deadline: float) -> str:
        """The shell's output for at most `wait_s`, or until `until` is in it (in what this
        call read)."""
        out, end = "", time.monotonic() + wait_s
        while until not in out and time.monotonic() < end:
            if self._readable(POLL_MS / 1000):
                out += self.read(1024)
            else:
                self._check(deadline, self._doing)
        return out

    def terminate(self) -> None:
        """Node.terminate, its shell's end bounded (SIGHUP, then SIGKILL)."""
        self.end_shell()
        super().terminate()  # type: ignore[misc]

    def waitOutput(self, verbose: bool = False, findPid: bool = True) -> str:  # noqa: N802,N803
        deadline = self._deadline or time.monotonic() + CMD_TIMEOUT_S
        doing = self._doing or f"`{getattr(self, 'lastCmd', '')}`"
        output = ""
        while self.waiting:  # type: ignore[attr-defined]
            while not self._readable(POLL_MS / 1000):
                self._check(deadline, doing)
            output += self.monitor(timeoutms=0, findPid=findPid)  # type: ignore[attr-defined]
        return output

    def monitor(self, timeoutms: float | None = None, findPid: bool = True) -> str:  # noqa: N803
        """Node.monitor, whose `timeoutms` bounds a wait for output (Mininet's does not: its
        poll also reports the pty writable)."""
        if timeoutms is not None and not self._readable(timeoutms / 1000):
            return ""
        return super().monitor(timeoutms, findPid)  # type: ignore[misc]

    def read(self, size: int = 1024) -> str:
        """Node.read, which blocks on the pty: only once it has something to read, and not
        past the current deadline (or CMD_TIMEOUT_S from now)."""
        if not self.readbuf:  # type: ignore[attr-defined]
            deadline = self._deadline or time.monotonic() + CMD_TIMEOUT_S
            while not self._readable(POLL_MS / 1000):
                self._check(deadline, self._doing or "a read of its output")
        return super().read(size)  # type: ignore[misc]

    def rcmd(self, *cmd: Any, timeout: float = RCMD_TIMEOUT_S, **opts: Any) -> str:
        """A command on the node's server (the cluster edition's rcmd), within `timeout`."""
        popen = self.rpopen(*cmd, **opts)  # type: ignore[attr-defined]
        try:
            out, _ = popen.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            popen.kill()
            try:
                popen.communicate(timeout=END_WAIT_S)
            except subprocess.TimeoutExpired:
                log.warning("%s: an ssh client did not end on SIGKILL", self.where())
            raise ShellError(f"{self.where()}: `{' '.join(map(str, cmd))}` did not end within "
                             f"{timeout:g} s") from None
        return decode(out) if out else ""

    # ---- failing ------------------------------------------------------------

    def _bounded(self, timeout: float, doing: str) -> _Bound:
        return _Bound(self, timeout, doing)

    def _check(self, deadline: float, doing: str) -> None:
        ended = self.shell_ended()
        if ended is not None and not self._readable():
            self._give_up(f"its shell ended ({ended}) during {doing}")
        if time.monotonic() >= deadline:
            self._give_up(f"no answer within the deadline during {doing}")

    def _local_shell_pid(self) -> int | None:
        """On this machine the shell's PID is the one it echoed (`pid`), not its Popen's:
        `mnexec -d` of a process-group leader (RemoteMixin makes every node's one) forks
        and exits at once. None while unknown, and for a node on another server (there
        the Popen is the ssh client, which lives as long as the session)."""
        shell = getattr(self, "shell", None)
        pid = getattr(self, "pid", None)
        if getattr(self, "isRemote", True) or shell is None or pid in (None, shell.pid):
            return None
        return int(pid)

    def shell_ended(self) -> str | None:
        """None while the shell runs (or cannot be told), else how it ended."""
        shell = getattr(self, "shell", None)
        if shell is None:
            return "no shell"
        pid = self._local_shell_pid()
        if pid is not None:
            return None if running(pid) else "gone"
        if getattr(self, "isRemote", True) and shell.poll() is not None:
            return f"exit {shell.returncode}"
        return None

    def _readable(self, wait_s: float = 0.0) -> bool:
        """Output to read (Mininet's `pollOut` also reports the pty writable: not that)."""
        if self.readbuf:  # type: ignore[attr-defined]
            return True
        ready, _, _ = select.select([self.stdout], [], [], wait_s)  # type: ignore[attr-defined]
        return bool(ready)

    def _give_up(self, why: str) -> None:
        self.shell_failed = why
        self.waiting = False
        self.end_shell()
        raise ShellError(f"{self.where()}: {why}")

    def end_shell(self) -> None:
        """End the shell: SIGHUP, then SIGKILL after END_WAIT_S. Here to the shell's own
        PID; on another server to the ssh client's process group (its end HUPs the shell
        there and the shell's jobs)."""
        pid = self._local_shell_pid()
        if pid is not None:
            for sig in (signal.SIGHUP, signal.SIGKILL):
                try:
                    os.kill(pid, sig)
                except ProcessLookupError:
                    return
                deadline = time.monotonic() + END_WAIT_S
                while running(pid) and time.monotonic() < deadline:
                    time.sleep(0.05)
                if not running(pid):
                    return
            return
        shell = getattr(self, "shell", None)
        if shell is None or shell.poll() is not None:
            return
        for sig in (signal.SIGHUP, signal.SIGKILL):
            try:
                os.killpg(shell.pid, sig)
            except ProcessLookupError:
                return
            try:
                shell.wait(timeout=END_WAIT_S)
                return
            except subprocess.TimeoutExpired:
                continue


def running(pid: int) -> bool:
    """Whether `pid` names a live process (not a zombie)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


class _Bound:
    """The deadline of one wait (the earlier of the enclosing one's and its own)."""

    def __init__(self, node: Deadlines, timeout: float, doing: str) -> None:
        self.node, self.timeout, self.doing = node, timeout, doing
        self.saved: tuple[float | None, str] = (None, "")

    def __enter__(self) -> None:
        node = self.node
        self.saved = (node._deadline, node._doing)
        deadline = time.monotonic() + self.timeout
        if node._deadline is not None and node._deadline < deadline:
            return  # within an enclosing wait: its deadline and description stand
        node._deadline = deadline
        node._doing = f"{self.doing} ({self.timeout:g} s)"

    def __exit__(self, *exc: object) -> None:
        self.node._deadline, self.node._doing = self.saved
