"""Checks for what the real components need: root, p4c, BMv2, Mininet, iperf3, linkem,
for the dashboard's browser tests headless Chromium, chromedriver and Selenium, and for
Mininet's cluster edition ssh, sshd, sudo and the tun device (docs/scaling.md)."""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass


@dataclass(frozen=True)
class Requirement:
    name: str
    ok: bool
    hint: str


def is_root() -> bool:
    return os.geteuid() == 0


def _tool(name: str, hint: str) -> Requirement:
    return Requirement(name, shutil.which(name) is not None, hint)


P4_HINT = (
    "is not in Debian or PyPI: `make toolchain` installs p4c and BMv2 (with PI, for "
    "simple_switch_grpc) at the pinned versions, from p4lang's packages or built from source"
)
SETUP_HINT = "install it with `make setup` (Debian package {})"


def check(*names: str) -> list[Requirement]:
    """Requirement objects for the named prerequisites, in order."""
    table = {
        "root": lambda: Requirement("root", is_root(), "run as root (network namespaces, BMv2)"),
        "p4c": lambda: _tool("p4c", P4_HINT),
        "simple_switch_grpc": lambda: _tool("simple_switch_grpc", P4_HINT),
        "iperf3": lambda: _tool("iperf3", SETUP_HINT.format("iperf3")),
        "ethtool": lambda: _tool("ethtool", SETUP_HINT.format("ethtool")),
        "tcpdump": lambda: _tool("tcpdump", SETUP_HINT.format("tcpdump")),
        "nft": lambda: _tool("nft", SETUP_HINT.format("nftables")),
        "mininet": _mininet,
        "linkem": _linkem,
        "chromium": lambda: _tool("chromium", SETUP_HINT.format("chromium")),
        "chromedriver": lambda: _tool("chromedriver", SETUP_HINT.format("chromium-driver")),
        "selenium": _selenium,
        "ssh": lambda: _tool("ssh", SETUP_HINT.format("openssh-client")),
        "sshd": _sshd,
        "sudo": lambda: _tool("sudo", SETUP_HINT.format("sudo")),
        "tun": lambda: Requirement("tun", os.path.exists(TUN_DEVICE),
                                   f"{TUN_DEVICE}: the kernel's tun/tap device (module tun)"),
    }
    return [table[n]() for n in names]


TUN_DEVICE = "/dev/net/tun"  # ssh's Ethernet tunnels (ssh -w) open tap devices through it
SSHD = "/usr/sbin/sshd"


def _sshd() -> Requirement:
    ok = os.access(SSHD, os.X_OK) or shutil.which("sshd") is not None
    return Requirement("sshd", ok, SETUP_HINT.format("openssh-server"))


def _mininet() -> Requirement:
    try:
        import mininet.net  # noqa: F401
    except ImportError:
        return Requirement("mininet", False, SETUP_HINT.format("mininet"))
    return Requirement("mininet", True, "")


def _selenium() -> Requirement:
    try:
        import selenium.webdriver  # noqa: F401
    except ImportError:
        return Requirement("selenium", False, "install it with `make setup` (requirements.txt)")
    return Requirement("selenium", True, "")


def _linkem() -> Requirement:
    from .layout import linkem_binary

    path = linkem_binary()
    return Requirement("linkem", os.access(path, os.X_OK), f"{path}: run `make linkem` (needs gcc)")


def missing(*names: str) -> list[str]:
    """One line per missing prerequisite, empty when all are there."""
    return [f"{r.name}: {r.hint}" for r in check(*names) if not r.ok]
