"""Keep a BMv2 switch's Thrift port on loopback with an nftables table of the project's own
(and its gRPC port, which listens on loopback already, to the lab's user).

simple_switch_grpc (BMv2 1.15.5) has no option for the Thrift server's address: it listens
on every address of the machine, and anyone who reaches it can rewrite the switch's tables.
The switches a process starts therefore share one table ``inet mpsched_thrift_<pid>_guard``
(pid: the process that started them, so a killed run's table never names a later run's): a
set of their Thrift ports, an input chain that drops TCP to a port of the set arriving on
any interface but ``lo``, and an output chain that resets a connection to one of them on
``lo`` from a socket of another user than the one that started the switches (nftables' ``meta
skuid``, the socket's owner; that user is root, as nft needs it): on loopback only the lab's
own user reaches Thrift (docs/security.md, "Local users"). A switch's gRPC port on loopback
joins the set too (src/mpsched/proc/bmv2.py): P4Runtime without TLS is then the lab's user's
alone. The first guarded switch creates the table, each switch adds its ports before it
starts and removes them when it stops, and the last one's stop deletes the table;
the table is recorded in the run's registry (src/mpsched/proc/cleanup.py) so that `mpsched
cleanup` removes it after a killed run (docs/security.md).

One table, not one per switch: every packet the machine receives, loopback's included,
traverses every base chain hooked at input, and 68 tables (a 64-leaf fabric) cost a loopback
TCP round trip about 9 us of kernel time more than none (20 % more, docs/results/scale.md),
where one set lookup costs the same for any number of switches. A switch started on another
server (src/mpsched/topo/cluster_nodes.py) gets a table of its own there (`ruleset`,
``mpsched_thrift_<pid>_<port>``).
"""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
import threading

log = logging.getLogger(__name__)

TABLE_PREFIX = "mpsched_thrift_"
FAMILY = "inet"  # IPv4 and IPv6


GUARD_SET = "ports"

_lock = threading.Lock()
_guarded: set[int] = set()  # the ports in this process's shared table


def table_name(port: int | str, owner: int | None = None) -> str:
    """The table `owner`'s (default: this process's) switches share (`port` "guard"), or a
    remote switch's own table (its port)."""
    return f"{TABLE_PREFIX}{owner if owner is not None else os.getpid()}_{port}"


def shared_table() -> str:
    return table_name("guard")


def shared_ruleset(name: str, uid: int | None = None) -> str:
    """The nft script creating the shared table `name` with an empty set of ports, open on
    loopback to sockets of `uid` (default: this process's effective user) only. A packet
    the kernel sends without a full socket (a reset, a TIME_WAIT acknowledgement) has no
    owner, matches no `skuid` and passes."""
    owner = os.geteuid() if uid is None else uid
    return (
        f"add table {FAMILY} {name}\n"
        f"add set {FAMILY} {name} {GUARD_SET} {{ type inet_service; }}\n"
        f"add chain {FAMILY} {name} input "
        "{ type filter hook input priority filter; policy accept; }\n"
        f'add rule {FAMILY} {name} input iifname != "lo" tcp dport @{GUARD_SET} drop\n'
        f"add chain {FAMILY} {name} output "
        "{ type filter hook output priority filter; policy accept; }\n"
        f'add rule {FAMILY} {name} output oifname "lo" tcp dport @{GUARD_SET} '
        f"meta skuid != {owner} reject with tcp reset\n"
    )


def ruleset(port: int, name: str) -> str:
    """The nft script of the table `name` guarding `port`."""
    return (
        f"table {FAMILY} {name} {{\n"
        "  chain input {\n"
        "    type filter hook input priority filter; policy accept;\n"
        f'    iifname != "lo" tcp dport {port} drop\n'
        "  }\n"
        "}\n"
    )


def _nft(*args: str, script: str | None = None) -> subprocess.CompletedProcess:
    binary = shutil.which("nft")
    if binary is None:
        raise FileNotFoundError("nft is not installed (Debian package nftables; make setup)")
    return subprocess.run([binary, *args], input=script, capture_output=True, text=True,
                          check=False, timeout=10)


def guard_port(port: int) -> str | None:
    """Drop TCP to `port` from anything but loopback (in the shared table, created if this
    process has none yet); the table's name, or None (logged as a warning: the port stays
    reachable) when nft is missing or refuses."""
    name = shared_table()
    with _lock:
        script = "" if _guarded else shared_ruleset(name)
        script += f"add element {FAMILY} {name} {GUARD_SET} {{ {port} }}\n"
        try:
            result = _nft("-f", "-", script=script)
        except (OSError, subprocess.TimeoutExpired) as error:
            log.warning("port %d stays reachable from other hosts: %s", port, error)
            return None
        if result.returncode != 0:
            log.warning("port %d stays reachable from other hosts: nft: %s", port,
                        result.stderr.strip())
            return None
        _guarded.add(port)
    return name


def unguard_port(port: int) -> bool:
    """Take `port` out of the shared table; the last port's removal deletes the table.
    Whether the table went (the caller's registry can forget it then)."""
    name = shared_table()
    with _lock:
        _guarded.discard(port)
        if not _guarded:
            remove_table(name)
            return True
        try:
            _nft("delete", "element", FAMILY, name, GUARD_SET, f"{{ {port} }}")
        except (OSError, subprocess.TimeoutExpired) as error:
            log.warning("port %d left in %s: %s", port, name, error)
        return False


def remove_table(name: str) -> bool:
    """Delete one of the project's tables; whether it existed."""
    if not name.startswith(TABLE_PREFIX):
        raise ValueError(f"not a table of the project: {name}")
    try:
        return _nft("delete", "table", FAMILY, name).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def tables() -> list[str]:
    """The project's tables present now."""
    try:
        result = _nft("list", "tables", FAMILY)
    except (OSError, subprocess.TimeoutExpired):
        return []
    names = [line.split()[-1] for line in result.stdout.splitlines() if line.strip()]
    return [name for name in names if name.startswith(TABLE_PREFIX)]
