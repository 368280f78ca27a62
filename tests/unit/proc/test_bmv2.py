"""src/mpsched/proc/bmv2.py's command line for a switch serving P4Runtime over TLS, and the
nftables table (src/mpsched/proc/firewall.py) that keeps its Thrift port on loopback."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from mpsched.proc import bmv2, firewall
from mpsched.proc.bmv2 import Bmv2Error, Bmv2Switch, ServerTls


def test_tls_options_follow_simple_switch_grpc_help():
    tls = ServerTls(Path("s1.pem"), Path("s1.key"), Path("ca.pem"), client_auth=True)
    assert tls.options() == ["--grpc-server-ssl", "--grpc-server-cert", "s1.pem",
                             "--grpc-server-key", "s1.key", "--grpc-server-cacert", "ca.pem",
                             "--grpc-server-with-client-auth"]
    assert "--grpc-server-cacert" not in ServerTls(Path("c"), Path("k")).options()
    with pytest.raises(Bmv2Error, match="client authentication needs the CA"):
        ServerTls(Path("c"), Path("k"), client_auth=True).options()


def test_the_tls_options_go_to_the_target(tmp_path):
    if shutil.which("simple_switch_grpc") is None:
        pytest.skip("missing: simple_switch_grpc")
    sw = Bmv2Switch("s1", 1, {}, tmp_path, grpc_port=5000, thrift_port=5001,
                    tls=ServerTls(Path("s1.pem"), Path("s1.key")))
    cmd = sw.command()
    assert cmd[cmd.index("--") + 1:] == ["--grpc-server-addr", "127.0.0.1:5000",
                                         "--grpc-server-ssl", "--grpc-server-cert", "s1.pem",
                                         "--grpc-server-key", "s1.key"]


def test_the_guard_drops_the_port_off_loopback_only():
    name = firewall.table_name(9090, owner=42)
    assert name == "mpsched_thrift_42_9090"
    script = firewall.ruleset(9090, name)
    assert f"table inet {name} {{" in script
    assert "type filter hook input priority filter; policy accept;" in script
    assert 'iifname != "lo" tcp dport 9090 drop' in script


def test_the_grpc_port_is_guarded_on_loopback_only(tmp_path):
    sw = Bmv2Switch("s1", 1, {}, tmp_path, grpc_port=5000, thrift_port=5001)
    assert sw.guard_ports() == [5001, 5000]
    sw.grpc_host = "10.0.0.1"  # the controller on another host: its input rule would drop it
    assert sw.guard_ports() == [5001]
    sw.guard_thrift = False
    assert sw.guard_ports() == []
    assert bmv2.on_loopback("::1") and bmv2.on_loopback("localhost")
    assert not bmv2.on_loopback("s1.lab")


def test_only_the_projects_tables_are_removed():
    with pytest.raises(ValueError, match="not a table of the project"):
        firewall.remove_table("filter")


def test_switches_start_with_few_malloc_arenas(monkeypatch):
    """BMv2 starts with MALLOC_ARENA_MAX (its threads' arenas kept their bursts' high-water
    marks); a value the user set is kept."""
    from mpsched.proc import bmv2

    monkeypatch.delenv("MALLOC_ARENA_MAX", raising=False)
    assert bmv2.switch_environment() == {"MALLOC_ARENA_MAX": str(bmv2.SWITCH_MALLOC_ARENAS)}
    monkeypatch.setenv("MALLOC_ARENA_MAX", "8")
    assert bmv2.switch_environment() == {"MALLOC_ARENA_MAX": "8"}


def test_the_shared_guard_drops_the_sets_ports_off_loopback_only():
    name = firewall.shared_table()
    assert name == f"mpsched_thrift_{os.getpid()}_guard"
    script = firewall.shared_ruleset(name)
    assert f"add set inet {name} ports {{ type inet_service; }}" in script
    assert "type filter hook input priority filter; policy accept;" in script
    assert f'add rule inet {name} input iifname != "lo" tcp dport @ports drop' in script


def test_the_shared_guard_opens_loopback_to_the_labs_user_only():
    name = firewall.shared_table()
    assert "type filter hook output priority filter; policy accept;" in firewall.shared_ruleset(
        name)
    assert (f'add rule inet {name} output oifname "lo" tcp dport @ports meta skuid != 1000 '
            "reject with tcp reset") in firewall.shared_ruleset(name, uid=1000)
    assert f"meta skuid != {os.geteuid()} " in firewall.shared_ruleset(name)
