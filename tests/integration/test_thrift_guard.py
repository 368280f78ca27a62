"""No switch the lab starts can be controlled from outside the machine
(src/mpsched/proc/firewall.py, docs/security.md): a network namespace standing for the outside,
joined to the host by a veth pair on 198.51.100.0/24 (TEST-NET-2, RFC 5737; the machine's
own network may use TEST-NET-1), cannot reach a switch's Thrift or gRPC port, which loopback
reaches; without the guard, Thrift would be reachable from there. On loopback another user
(nobody) is refused by a guarded switch's Thrift and gRPC ports, which it reaches on an
unguarded one.
Everything is removed afterwards, the guard's table too."""

from __future__ import annotations

import shutil
import socket
import subprocess
from pathlib import Path

import pytest

from mpsched.proc import firewall
from mpsched.proc.bmv2 import Bmv2Switch
from mpsched.proc.cleanup import Registry
from tests.conftest import require

pytestmark = pytest.mark.integration

NS = "mpsched-outside"
HOST_IF, OUT_IF = "mpsg-host", "mpsg-out"
HOST_IP, OUT_IP = "198.51.100.1", "198.51.100.2"

PROBE = """
import socket, sys
try:
    socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=1.5).close()
except OSError:
    sys.exit(1)
"""


def ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True)


@pytest.fixture
def outside():
    """The outside namespace with OUT_IP, the host end with HOST_IP."""
    require("root", "simple_switch_grpc")
    registry = Registry()
    try:
        ip("netns", "add", NS)
        ip("link", "add", HOST_IF, "type", "veth", "peer", "name", OUT_IF)
        registry.add_link(HOST_IF)
        ip("link", "set", OUT_IF, "netns", NS)
        ip("addr", "add", f"{HOST_IP}/24", "dev", HOST_IF)
        ip("link", "set", HOST_IF, "up")
        ip("-n", NS, "addr", "add", f"{OUT_IP}/24", "dev", OUT_IF)
        ip("-n", NS, "link", "set", OUT_IF, "up")
        ip("-n", NS, "link", "set", "lo", "up")
        yield registry
    finally:
        registry.close()
        subprocess.run(["ip", "netns", "delete", NS], capture_output=True)


def from_outside(port: int, address: str = HOST_IP) -> bool:
    result = subprocess.run(["ip", "netns", "exec", NS, "python3", "-c", PROBE, address,
                             str(port)], capture_output=True, timeout=10)
    return result.returncode == 0


NOBODY = 65534
# the system's Python: root's own (a pyenv shim, a virtualenv) may be out of nobody's reach
SYSTEM_PYTHON = Path("/usr/bin/python3")


def as_nobody(port: int) -> bool:
    """Whether a process of user nobody connects to `port` on 127.0.0.1."""
    result = subprocess.run(["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}",
                             "--clear-groups", str(SYSTEM_PYTHON), "-c", PROBE, "127.0.0.1",
                             str(port)], capture_output=True, timeout=10, cwd="/")
    assert result.returncode in (0, 1), result.stderr  # 1: refused; else the probe broke
    return result.returncode == 0


def on_loopback(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1.5).close()
        return True
    except OSError:
        return False


def test_thrift_and_grpc_are_unreachable_from_outside(outside, tmp_path):
    require("nft")
    open_sw = Bmv2Switch("itest-open", 1, {}, tmp_path, registry=outside, guard_thrift=False)
    guarded = Bmv2Switch("itest-guard", 2, {}, tmp_path, registry=outside)
    try:
        open_sw.start()
        guarded.start()
        assert guarded.guard_table in firewall.tables()
        assert on_loopback(guarded.thrift_port) and on_loopback(guarded.grpc_port)
        assert from_outside(open_sw.thrift_port), "the outside namespace reaches no host port"
        assert not from_outside(guarded.thrift_port)
        assert not from_outside(guarded.grpc_port)
    finally:
        guarded.stop()
        open_sw.stop()
    assert guarded.guard_table is None
    assert firewall.shared_table() not in firewall.tables()


def test_switches_share_one_table_until_the_last_stops(outside, tmp_path):
    """Two guarded switches: one table, both ports dropped from outside; the first one's stop
    opens its port alone (nothing listens there now: refused, not dropped, is what tells)
    and keeps the other's guard; the last one's stop deletes the table."""
    require("nft")
    first = Bmv2Switch("itest-g1", 1, {}, tmp_path, registry=outside)
    second = Bmv2Switch("itest-g2", 2, {}, tmp_path, registry=outside)
    try:
        first.start()
        second.start()
        mine = [t for t in firewall.tables() if t.startswith(firewall.table_name(""))]
        assert mine == [firewall.shared_table()] == [first.guard_table]
        assert second.guard_table == first.guard_table
        assert not from_outside(first.thrift_port) and not from_outside(second.thrift_port)
        first.stop()
        assert firewall.shared_table() in firewall.tables()
        assert outside.tables == [firewall.shared_table()]
        assert not from_outside(second.thrift_port)
        assert on_loopback(second.thrift_port)
    finally:
        first.stop()
        second.stop()
    assert firewall.shared_table() not in firewall.tables()
    assert outside.tables == []


def test_on_loopback_thrift_and_grpc_are_the_labs_users_only(outside, tmp_path):
    require("nft")
    if shutil.which("setpriv") is None or not SYSTEM_PYTHON.exists():
        pytest.skip(f"missing: setpriv (Debian package util-linux) or {SYSTEM_PYTHON}")
    open_sw = Bmv2Switch("itest-lo-open", 1, {}, tmp_path, registry=outside,
                         guard_thrift=False)
    guarded = Bmv2Switch("itest-lo-guard", 2, {}, tmp_path, registry=outside)
    try:
        open_sw.start()
        guarded.start()
        assert as_nobody(open_sw.thrift_port), "user nobody connects to nothing here"
        assert as_nobody(open_sw.grpc_port)
        assert not as_nobody(guarded.thrift_port) and not as_nobody(guarded.grpc_port)
        assert on_loopback(guarded.thrift_port) and on_loopback(guarded.grpc_port)
    finally:
        guarded.stop()
        open_sw.stop()
