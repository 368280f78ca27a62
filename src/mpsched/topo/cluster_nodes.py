"""The fabric testbed's nodes as remote nodes of Mininet's cluster edition
(mininet.examples.cluster, docs/scaling.md "Mininet cluster edition").

Each class is the cluster edition's `RemoteMixin` on the local node class: on server
`localhost` it is that class unchanged; on another server its shell runs there over ssh
(`ssh -tt user@server sudo -E mnexec ...`), so `cmd()` runs there, and so does what it starts:

- `ClusterHost`: a host (the cluster edition's RemoteHost);
- `ClusterBmv2Switch`: simple_switch_grpc started from the node's shell on its server, as
  Mininet starts its own user-space switches, P4Runtime on the server's address, the Thrift
  port guarded by the same nftables table as here (src/mpsched/proc/firewall.py), no probe port
  (the controller is not beside it: probes go as PacketOuts, docs/scaling.md);
- `ClusterLinkem`: linkem started through `popen()`, i.e. an ssh session whose stdin and
  stdout are linkem's control channel (src/mpsched/emu/linkem.py): linkem ends when the
  session does, whatever ends it.

`ssh_options` (e.g. ``-F <file>``) go into every ssh command the cluster edition builds for
the node: its shell, its `popen`, `rcmd`, and the tunnel `RemoteSSHLink` opens from it.
A remote shell's background jobs get SIGHUP when its ssh session ends, so a BMv2 switch whose
owner died goes with the session's end.
"""

from __future__ import annotations

import itertools
import logging
import os
import shlex
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from mininet.examples.cluster import RemoteMixin
from mininet.node import Host

from mpsched.emu.linkem import Linkem, command_line
from mpsched.p4rt.pipeline import program_cpu_port
from mpsched.proc import firewall
from mpsched.proc.bmv2 import Bmv2Error, Bmv2Switch, switch_environment
from mpsched.proc.layout import p4_artifacts

from .bmv2_switch import Bmv2MininetSwitch
from .cluster_shell import Deadlines, ShellError
from .cluster_sweep import pidfile
from .emulink import LinkemNode

log = logging.getLogger(__name__)
_serial = itertools.count(1)

REMOTE_START_TIMEOUT_S = 20.0  # an ssh login, then the process's own start
STOP_WAIT_S = 5.0
# two TCP ports free on every address of the server (gRPC, Thrift), from its own python3
FREE_PORTS = ("python3 -c 'import socket; ss = [socket.socket() for _ in range(2)]; "
              "[s.bind((\"\", 0)) for s in ss]; print(*[s.getsockname()[1] for s in ss])'")


# every ssh client of a node: a login that does not answer fails, and a session whose server
# stopped answering ends (its shell's waits then fail at once: src/mpsched/topo/cluster_shell.py)
KEEPALIVE = ("-o", "ConnectTimeout=15", "-o", "ServerAliveInterval=5",
             "-o", "ServerAliveCountMax=4")


class SshOptions(Deadlines, RemoteMixin):
    """RemoteMixin with extra ssh client options (module docstring) and deadlines on every
    wait of its shell (src/mpsched/topo/cluster_shell.py)."""

    def __init__(self, name: str, ssh_options: tuple[str, ...] = (), **params: Any) -> None:
        self.ssh_options = [*KEEPALIVE, *ssh_options]
        self.sshbase = [*RemoteMixin.sshbase, *self.ssh_options]
        super().__init__(name, **params)

    def _popen(self, cmd: Any, sudo: bool = True, tt: bool = True, **params: Any) -> Any:
        if isinstance(cmd, list) and cmd[:1] == ["ssh"]:  # RemoteSSHLink's tunnel
            cmd = ["ssh", *self.ssh_options, *cmd[1:]]
        return super()._popen(cmd, sudo=sudo, tt=tt, **params)

    def local_processes(self) -> list[tuple[int, str]]:
        """(PID, command line) of the processes here that hold the node: its shell, or on
        another server the ssh client of its shell (the remote PID means nothing here)."""
        shell = getattr(self, "shell", None)
        if shell is None:
            return []
        if not self.isRemote:
            return [(self.pid, "")]
        return [(shell.pid, " ".join(str(a) for a in shell.args))]


class ClusterHost(SshOptions, Host):
    """A host on a server of the cluster (the cluster edition's RemoteHost). On another
    server `popen` returns a `RemoteProcess`: the lab's runner ends workloads with
    terminate(), which must reach the process there, not only its ssh client here."""

    def popen(self, *args: Any, **kwargs: Any) -> Any:
        if not self.isRemote:
            # RemoteMixin starts every process here in a process group of its own, and
            # `mnexec -d` of such a group leader forks and exits at once: the Popen would end
            # while the command runs on, out of the runner's reach. Attach without -d.
            kwargs.setdefault("mncmd", ["mnexec", "-a", str(self.pid)])
            return super().popen(*args, **kwargs)
        cmd = list(args[0]) if len(args) == 1 and isinstance(args[0], list) else list(args)
        path = pidfile(self.name, next(_serial), os.getpid())
        line = f"echo $$ > {path}; exec {shlex.join(str(a) for a in cmd)}"
        proc = super().popen(["sh", "-c", shlex.quote(line)], **kwargs)
        return RemoteProcess(proc, self, path)


class RemoteProcess:
    """A process a remote host started through ssh (`proc`, the ssh client here): waiting,
    polling and the exit status are the client's (ssh exits with the command's status),
    signals go to the process on its server by the PID it wrote to `pidfile`."""

    def __init__(self, proc: subprocess.Popen, node: Any, pidfile: str) -> None:
        self.proc = proc
        self.node = node
        self.pidfile = pidfile
        self.pid = proc.pid  # what the registry knows here
        self.args = proc.args

    @property
    def returncode(self) -> int | None:
        return self.proc.returncode

    def poll(self) -> int | None:
        return self.proc.poll()

    def wait(self, timeout: float | None = None) -> int:
        code = self.proc.wait(timeout)
        if self.pidfile:
            try:
                self.node.rcmd(f"rm -f {self.pidfile}")
            except ShellError as err:  # the server's sweep removes it (cluster_sweep.py)
                log.warning("%s", err)
            self.pidfile = ""
        return code

    def send_signal(self, sig: int) -> None:
        """`sig` to the process on its server; if the server does not answer, SIGKILL to
        the ssh client here (the server's sweep ends the process: cluster_sweep.py)."""
        if self.proc.poll() is None and self.pidfile:
            try:
                self.node.rcmd(f"sh -c 'kill -{int(sig)} $(cat {self.pidfile})'")
            except ShellError as err:
                log.warning("%s", err)
                self.proc.kill()

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)
        if self.proc.poll() is None:
            self.proc.kill()  # the ssh client, whatever became of the process there


class ClusterBmv2Switch(SshOptions, Bmv2MininetSwitch):
    """A fabric switch on a server of the cluster (module docstring)."""

    def start(self, controllers: list) -> None:
        if not self.isRemote:
            super().start(controllers)
            return
        grpc_port, thrift_port = (int(p) for p in self.cmd(FREE_PORTS).split()[-2:])
        self.bmv2 = RemoteBmv2(
            name=self.name, device_id=self.device_id, ports=self.ports_by_number(),
            log_dir=self.log_dir, grpc_port=grpc_port, thrift_port=thrift_port,
            cpu_port=program_cpu_port(p4_artifacts().p4info), grpc_host=self.serverIP,
            binary="simple_switch_grpc",
            tls=self.tls, node=self,
        )
        self.bmv2.start(REMOTE_START_TIMEOUT_S)


class RemoteBmv2(Bmv2Switch):
    """simple_switch_grpc run by a remote node's shell (`node.cmd`): its log stays on the
    server, its PID is the shell's job."""

    def __init__(self, node: Any, **fields: Any) -> None:
        super().__init__(**fields)
        self.node = node
        self.remote_pid: int | None = None

    def _sh(self, line: str) -> str:
        return self.node.cmd(line)

    def _guard(self) -> None:
        if not self.guard_thrift:
            return
        name = firewall.table_name(self.thrift_port)
        script = firewall.ruleset(self.thrift_port, name).replace("\n", "\\n")
        out = self._sh(f"printf '%b' {shlex.quote(script)} | nft -f - && echo guarded")
        if out.strip().endswith("guarded"):
            self.guard_table = name
        else:
            log.warning("%s: Thrift port %d stays reachable: %s", self.name, self.thrift_port,
                        out.strip())

    def _unguard(self) -> None:
        if self.guard_table is not None and self._shell_up():
            self._sh(f"nft delete table {firewall.FAMILY} {self.guard_table}")
        self.guard_table = None

    def _shell_up(self) -> bool:
        shell = self.node.shell
        return shell is not None and shell.poll() is None and self.node.shell_failed is None

    def start(self, timeout: float = REMOTE_START_TIMEOUT_S) -> None:
        self._sh(f"mkdir -p {shlex.quote(str(self.log_dir))}")
        self._guard()
        line = " ".join([*(f"{k}={shlex.quote(v)}" for k, v in switch_environment().items()),
                         shlex.join(self.command())])
        self._sh(f"{line} > {shlex.quote(str(self.log_file))} 2>&1 &")
        self.remote_pid = self.node.lastPid
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not self.alive():
                tail = self._sh(f"tail -c 2000 {shlex.quote(str(self.log_file))}")
                why = self.exit_status()
                self.stop()
                raise Bmv2Error(f"{self.name} exited at start on {self.node.server} "
                                f"({why}):\n{tail}")
            with socket.socket() as sock:
                sock.settimeout(2)
                if sock.connect_ex((self.grpc_host, self.grpc_port)) == 0:
                    return
            time.sleep(0.2)
        self.stop()
        raise Bmv2Error(f"{self.name}: gRPC did not come up on {self.grpc_address} in "
                        f"{timeout}s")

    def alive(self) -> bool:
        if self.remote_pid is None or not self._shell_up():
            return False
        return self._sh(f"kill -0 {self.remote_pid} 2>/dev/null && echo up").strip() == "up"

    def exit_status(self) -> str:
        """How the process ended, as its shell saw it (`wait`: a code, or 128 + the signal
        that ended it), for the error naming a switch that died."""
        if self.remote_pid is None or not self._shell_up():
            return "its shell is gone"
        out = self._sh(f"wait {self.remote_pid} 2>/dev/null; echo $?").strip().split()
        code = int(out[-1]) if out and out[-1].isdigit() else None
        if code is None:
            return "exit status unknown"
        return f"signal {code - 128}" if code > 128 else f"exit {code}"

    def stop(self) -> None:
        """End the process, and its nftables table. Through a failed shell neither can be
        done: the PID stays for the testbed's sweep of the server
        (src/mpsched/topo/cluster_sweep.py)."""
        if not self._shell_up():
            return
        steps = int(STOP_WAIT_S / 0.1)
        pid = self.remote_pid
        try:
            if pid is not None:
                self._sh(f"kill {pid} 2>/dev/null; for i in $(seq {steps}); do "
                         f"kill -0 {pid} 2>/dev/null || break; sleep 0.1; done; "
                         f"kill -9 {pid} 2>/dev/null; wait {pid}")
                self.remote_pid = None
            self._unguard()
        except ShellError as err:
            log.warning("%s: not stopped through its shell: %s", self.name, err)


class ClusterLinkem(SshOptions, LinkemNode):
    """A link emulator on a server of the cluster (module docstring)."""

    def start(self, controllers: list) -> None:
        if not self.isRemote:
            super().start(controllers)
            return
        a, b = self.ports_in_order()
        stderr = tempfile.TemporaryFile()
        proc = self.popen(command_line(a, b, seed=self.seed, pdeathsig=False),
                          stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr,
                          bufsize=0)
        self.linkem = Linkem.attach(proc, stderr, self.registry, REMOTE_START_TIMEOUT_S)
        for direction, params in self.pending.items():
            self.linkem.set(direction, params)


def ssh_options(config: Path | None) -> tuple[str, ...]:
    """The ssh options of a cluster's nodes: its ssh client configuration, if any."""
    return ("-F", str(config)) if config is not None else ()

