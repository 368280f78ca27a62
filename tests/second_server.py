"""A second server on this machine for Mininet's cluster edition: an sshd of its own, key-only.

The sshd runs in a network namespace of its own, reached from here over a veth pair
(`HERE` - `THERE`), because the cluster edition's ssh tunnels (RemoteSSHLink) name their tap
device ``tap9`` at both ends: two servers on one network stack would both open the same
tap9, and the second open fails with EBUSY. With a network stack of its own the namespace is
what a second machine is to the cluster edition (its root namespace holds its switches, link
emulators and tunnel ends). Everything is generated in a temporary directory: the sshd's
configuration and host key, a client key in its authorized keys (root login by key only,
``PermitTunnel ethernet`` for the tunnels), and the ssh client configuration the lab gives to
every ssh command (`ssh -F`, the scenario's `cluster.ssh_config`) with the host key pinned.
`SecondServer` is a context manager: at its end, also after a failure or Ctrl-C, the sshd,
every process of its sessions (what the lab started "there": shells, switches, link
emulators, tunnel ends), the namespace and the veth go; every command it runs has a deadline.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import time
from pathlib import Path

from mpsched.proc.prereqs import SSHD

HERE, THERE, PREFIX = "172.31.254.1", "172.31.254.2", 30  # the veth's two ends
RUN_TIMEOUT_S = 30.0  # any one command here or over ssh
LISTEN_TIMEOUT_S = 10.0  # the sshd's start


def _run(*args: str, timeout: float = RUN_TIMEOUT_S) -> str:
    return subprocess.run(args, check=True, capture_output=True, text=True,
                          timeout=timeout).stdout


def descendants(root: int) -> list[int]:
    """The PIDs of every live descendant of `root` (from /proc's parent links)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(ppid, []).append(int(entry.name))
    out, todo = [], [root]
    while todo:
        for child in children.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def sshd_config(directory: Path, address: str) -> str:
    return "\n".join([
        f"ListenAddress {address}",
        f"HostKey {directory / 'host_key'}",
        f"AuthorizedKeysFile {directory / 'authorized_keys'}",
        f"PidFile {directory / 'sshd.pid'}",
        "PermitRootLogin prohibit-password",
        "PubkeyAuthentication yes",
        "PasswordAuthentication no",
        "KbdInteractiveAuthentication no",
        "UsePAM no",
        "UseDNS no",
        "StrictModes no",  # the keys live under /tmp
        "PermitTunnel ethernet",
        "MaxStartups 100",
        "MaxSessions 100",
        "",
    ])


def client_config(directory: Path, address: str) -> str:
    return "\n".join([
        f"Host {address}",
        "  User root",
        f"  IdentityFile {directory / 'client_key'}",
        "  IdentitiesOnly yes",
        f"  UserKnownHostsFile {directory / 'known_hosts'}",
        "  StrictHostKeyChecking yes",
        "  BatchMode yes",
        "  ConnectTimeout 10",
        "",
    ])


class SecondServer:
    """sshd on `THERE` in namespace `ns` (module docstring); `ssh_config` is the client's."""

    def __init__(self, directory: Path) -> None:
        tag = os.getpid() % 100000
        self.dir = directory
        self.ns = f"mpcl{tag}"
        self.veth = (f"mpcl{tag}a", f"mpcl{tag}b")
        self.address = THERE
        self.ssh_config = directory / "ssh_config"
        self.proc: subprocess.Popen | None = None
        self.log = directory / "sshd.log"

    def __enter__(self) -> SecondServer:
        try:
            self._start()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _keys(self) -> None:
        for name in ("host_key", "client_key"):
            _run("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name,
                 "-f", str(self.dir / name))
        (self.dir / "authorized_keys").write_text((self.dir / "client_key.pub").read_text())
        host_pub = (self.dir / "host_key.pub").read_text().split()
        (self.dir / "known_hosts").write_text(f"{self.address} {host_pub[0]} {host_pub[1]}\n")
        (self.dir / "sshd_config").write_text(sshd_config(self.dir, self.address))
        self.ssh_config.write_text(client_config(self.dir, self.address))

    def _start(self) -> None:
        self.dir.mkdir(parents=True, exist_ok=True)
        self._keys()
        a, b = self.veth
        taken = _run("ip", "-o", "addr", "show", "to", f"{HERE}/{PREFIX}").strip()
        if taken:  # another second server (a test run outside the lock), or a killed one's
            raise RuntimeError(f"{HERE}/{PREFIX} is in use on this machine: {taken}")
        _run("ip", "netns", "add", self.ns)
        _run("ip", "link", "add", a, "type", "veth", "peer", "name", b, "netns", self.ns)
        _run("ip", "addr", "add", f"{HERE}/{PREFIX}", "dev", a)
        _run("ip", "link", "set", a, "up")
        inside = ("ip", "netns", "exec", self.ns)
        _run(*inside, "ip", "addr", "add", f"{THERE}/{PREFIX}", "dev", b)
        _run(*inside, "ip", "link", "set", b, "up")
        _run(*inside, "ip", "link", "set", "lo", "up")
        Path("/run/sshd").mkdir(exist_ok=True)  # sshd's privilege separation directory
        _run(SSHD, "-t", "-f", str(self.dir / "sshd_config"))
        with self.log.open("wb") as out:
            self.proc = subprocess.Popen(
                [*inside, SSHD, "-D", "-e", "-f", str(self.dir / "sshd_config")],
                stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                start_new_session=True,
            )
        deadline = time.monotonic() + LISTEN_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"sshd exited: {self.log.read_text()}")
            with socket.socket() as sock:
                sock.settimeout(1)
                if sock.connect_ex((self.address, 22)) == 0:
                    return
            time.sleep(0.1)
        raise RuntimeError(f"sshd not listening on {self.address}:22 within "
                           f"{LISTEN_TIMEOUT_S:g} s: {self.log.read_text()}")

    def ssh(self, *command: str) -> str:
        """`command` on the second server, as the lab reaches it."""
        return _run("ssh", "-F", str(self.ssh_config), self.address, *command)

    def netns_pids(self) -> list[int]:
        """The processes in the second server's network namespace (its sshd at least)."""
        return [int(p) for p in _run("ip", "netns", "pids", self.ns).split()]

    def processes(self) -> list[int]:
        """Every process of the second server: its sshd's descendants (its sessions and what
        they started) and anything else in its network namespace."""
        own = self.proc.pid if self.proc is not None else None
        pids = set(descendants(own)) if own is not None else set()
        with contextlib.suppress(subprocess.SubprocessError):
            pids |= set(self.netns_pids())
        pids.discard(own)
        return sorted(pids)

    def close(self) -> None:
        """The sshd and every process of the second server (SIGTERM, then SIGKILL), the
        namespace and the veth: also what a failed or interrupted test left there."""
        if self.proc is not None and self.proc.poll() is None:
            _end([self.proc.pid, *self.processes()])
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=5)
        with contextlib.suppress(subprocess.SubprocessError):
            _end(self.netns_pids())
        with contextlib.suppress(subprocess.CalledProcessError):
            _run("ip", "link", "del", self.veth[0])
        with contextlib.suppress(subprocess.CalledProcessError):
            _run("ip", "netns", "del", self.ns)


def _end(pids: list[int], wait_s: float = 3.0) -> None:
    """SIGTERM to each of `pids`, SIGKILL to those alive `wait_s` later."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, sig)
        deadline = time.monotonic() + wait_s
        while pids and time.monotonic() < deadline:
            pids = [p for p in pids if Path(f"/proc/{p}").exists() and not _zombie(p)]
            time.sleep(0.1)
        if not pids:
            return


def _zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except (OSError, IndexError):
        return True
