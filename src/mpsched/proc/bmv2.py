"""Start and stop BMv2 simple_switch_grpc processes (optimised run, no console log)."""

from __future__ import annotations

import ipaddress
import logging
import os
import shutil
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from mpsched.proc import firewall
from mpsched.proc.cleanup import Registry

log = logging.getLogger(__name__)


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Bmv2Error(RuntimeError):
    pass


# glibc's malloc arenas a switch's threads share (MALLOC_ARENA_MAX, mallopt(3)); glibc's own
# default is 8 per core. A BMv2 process held some 15 arenas, nearly all its heap in them, and
# its memory grew in one or two of them; with two, a leaf's growth over 12 minutes of the
# fabric soak fell from 30-40 % to 10-23 %, at the same CPU per packet
# (docs/results/fabric-soak.md, "The switches' arenas"; what is left is its pool of packet
# header vectors, which the soak fills first, src/mpsched/bench/soak_warm.py). The controller
# limits its own likewise (src/mpsched/controller/runtime/memarenas.py). A MALLOC_ARENA_MAX already
# in the environment is kept.
SWITCH_MALLOC_ARENAS = 2


def switch_environment() -> dict[str, str]:
    """The environment variables a switch process starts with beyond its parent's."""
    return {"MALLOC_ARENA_MAX": os.environ.get("MALLOC_ARENA_MAX", str(SWITCH_MALLOC_ARENAS))}


def on_loopback(host: str) -> bool:
    """Whether `host` (an address or ``localhost``) is a loopback address."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


@dataclass(frozen=True)
class ServerTls:
    """simple_switch_grpc's P4Runtime server over TLS: its certificate and key, and with
    `client_auth` the CA that must have signed the controller's client certificate."""

    cert: Path
    key: Path
    ca_cert: Path | None = None
    client_auth: bool = False

    def options(self) -> list[str]:
        """The target options (after simple_switch_grpc's ``--``)."""
        opts = ["--grpc-server-ssl", "--grpc-server-cert", str(self.cert),
                "--grpc-server-key", str(self.key)]
        if self.ca_cert is not None:
            opts += ["--grpc-server-cacert", str(self.ca_cert)]
        if self.client_auth:
            if self.ca_cert is None:
                raise Bmv2Error("client authentication needs the CA certificate (ca_cert)")
            opts.append("--grpc-server-with-client-auth")
        return opts


@dataclass
class Bmv2Switch:
    """One simple_switch_grpc process, started without a P4 program.

    The pipeline is pushed over P4Runtime (over TLS with `tls`). gRPC listens on
    `grpc_host` (127.0.0.1 unless told otherwise). BMv2's Thrift port always listens on all
    addresses (BMv2 1.15.5 has no option for it): with `guard_thrift` an nftables table drops
    what reaches it from any interface but loopback, and on loopback resets what comes from
    another user's socket (src/mpsched/proc/firewall.py); a gRPC port on loopback gets the same
    guard, so that a switch in plaintext is the lab's user's alone too.
    """

    name: str
    device_id: int
    ports: dict[int, str]
    log_dir: Path
    grpc_port: int = field(default_factory=free_port)
    thrift_port: int = field(default_factory=free_port)
    cpu_port: int | None = None
    registry: Registry | None = None
    process: subprocess.Popen | None = None
    tls: ServerTls | None = None
    grpc_host: str = "127.0.0.1"
    guard_thrift: bool = True
    guard_table: str | None = None  # the nftables table guarding the ports (shared)
    guarded: list[int] = field(default_factory=list)  # the ports in it
    binary: str | None = None  # None: simple_switch_grpc from PATH, checked here

    @property
    def grpc_address(self) -> str:
        return f"{self.grpc_host}:{self.grpc_port}"

    @property
    def log_file(self) -> Path:
        return self.log_dir / f"{self.name}.log"

    def command(self) -> list[str]:
        binary = self.binary or shutil.which("simple_switch_grpc")
        if binary is None:
            raise Bmv2Error("simple_switch_grpc is not on PATH")
        cmd = [binary, "--device-id", str(self.device_id), "--thrift-port", str(self.thrift_port)]
        for port, iface in sorted(self.ports.items()):
            cmd += ["-i", f"{port}@{iface}"]
        cmd += ["--no-p4", "--", "--grpc-server-addr", self.grpc_address]
        if self.cpu_port is not None:
            cmd += ["--cpu-port", str(self.cpu_port)]
        if self.tls is not None:
            cmd += self.tls.options()
        return cmd

    def guard_ports(self) -> list[int]:
        """The ports to guard: Thrift's, and gRPC's when it listens on loopback (guarded
        elsewhere, its input rule would drop the controller's connections)."""
        if not self.guard_thrift:
            return []
        return [self.thrift_port, *([self.grpc_port] if on_loopback(self.grpc_host) else [])]

    def _guard(self) -> None:
        for port in self.guard_ports():
            table = firewall.guard_port(port)
            if table is None:
                continue
            self.guarded.append(port)
            if self.guard_table is None and self.registry is not None:
                self.registry.add_table(table)
            self.guard_table = table

    def _unguard(self) -> None:
        if self.guard_table is None:
            return
        gone = False
        for port in self.guarded:
            gone = firewall.unguard_port(port) or gone
        if gone and self.registry is not None:
            self.registry.forget_table(self.guard_table)
        self.guarded = []
        self.guard_table = None

    def start(self, timeout: float = 15.0) -> None:
        self.log_dir.mkdir(parents=True, exist_ok=True)
        cmd = self.command()
        log.debug("starting %s: %s", self.name, " ".join(cmd))
        self._guard()  # before the port opens
        with self.log_file.open("wb") as out:
            self.process = subprocess.Popen(
                cmd,
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
                env=os.environ | switch_environment(),
            )
        if self.registry is not None:
            self.registry.add_process(self.process.pid, " ".join(cmd))
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                tail = self.log_file.read_text(errors="replace")[-2000:]
                self.stop()
                code = self.process.returncode
                raise Bmv2Error(f"{self.name} exited at start (code {code}):\n{tail}")
            with socket.socket() as sock:
                if sock.connect_ex((self.grpc_host, self.grpc_port)) == 0:
                    return
            time.sleep(0.1)
        self.stop()
        raise Bmv2Error(f"{self.name}: gRPC did not come up on {self.grpc_address} in {timeout}s")

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def stop(self) -> None:
        if self.process is None:
            self._unguard()
            return
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=5)
        if self.registry is not None:
            self.registry.forget_process(self.process.pid)
        self._unguard()
