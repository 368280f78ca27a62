"""veth pairs for the data-plane tests and benchmarks: one end a BMv2 port, the other a
tester's (PTF, a packet sender), recorded for cleanup."""

from __future__ import annotations

import os
import subprocess

from mpsched.proc.cleanup import Registry


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True, text=True)


def make_veth(registry: Registry, sw: str, other: str) -> tuple[str, str]:
    """One veth pair (switch end, other end), recorded for cleanup, up, offloads off and
    IPv6 off so the kernel sends nothing on it."""
    _ip("link", "add", sw, "type", "veth", "peer", "name", other)
    registry.add_link(sw)
    for name in (sw, other):
        subprocess.run(["sysctl", "-qw", f"net.ipv6.conf.{name}.disable_ipv6=1"],
                       check=False, capture_output=True)
        subprocess.run(["ethtool", "-K", name, "rx", "off", "tx", "off", "tso", "off",
                        "gso", "off", "gro", "off"], check=False, capture_output=True)
        _ip("link", "set", name, "up", "mtu", "9000")
    return sw, other


def make_veths(registry: Registry, count: int) -> list[tuple[str, str]]:
    """veth pairs (switch end, PTF end), IPv6 off so the kernel sends nothing on them."""
    tag = os.getpid() % 100000
    return [make_veth(registry, f"p{tag}s{i}", f"p{tag}t{i}") for i in range(1, count + 1)]
