"""Keep a BMv2 switch's Thrift port on loopback with an nftables table of the project's own.

simple_switch_grpc (BMv2 1.15.5) has no option for the Thrift server's address: it listens
on every address of the machine, and anyone who reaches it can rewrite the switch's tables.
Each switch the lab starts therefore gets a table ``inet mpsched_thrift_<pid>_<port>`` (pid:
the process that started the switch, so a killed run's table never names a later run's) whose
input chain drops TCP to that port arriving on any interface but ``lo``. The table is added before
the switch starts, deleted when it stops, and recorded in the run's registry
(mpsched/proc/cleanup.py) so that `mpsched cleanup` removes it after a killed run
(docs/security.md).
"""

from __future__ import annotations

import logging
import os
import shutil
import subprocess

log = logging.getLogger(__name__)

TABLE_PREFIX = "mpsched_thrift_"
FAMILY = "inet"  # IPv4 and IPv6


def table_name(port: int, owner: int | None = None) -> str:
    return f"{TABLE_PREFIX}{owner if owner is not None else os.getpid()}_{port}"


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
    """Drop TCP to `port` from anything but loopback; the table's name, or None (logged as
    a warning: the port stays reachable) when nft is missing or refuses."""
    name = table_name(port)
    try:
        result = _nft("-f", "-", script=ruleset(port, name))
    except (OSError, subprocess.TimeoutExpired) as error:
        log.warning("port %d stays reachable from other hosts: %s", port, error)
        return None
    if result.returncode != 0:
        log.warning("port %d stays reachable from other hosts: nft: %s", port,
                    result.stderr.strip())
        return None
    return name


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
