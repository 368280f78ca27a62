"""The network description's field types (src/mpsched/netcfg.py): MACs, addresses, prefixes,
rates, P4Runtime addresses, interface names, files and ports, each checked with the
project's messages (src/mpsched/validation.py)."""

from __future__ import annotations

import ipaddress
import re
from pathlib import Path
from typing import Annotated, Any

from pydantic import BeforeValidator, ValidationInfo

from mpsched import addressing as ap
from mpsched.validation import check_number, int_in

MAC_RE = re.compile(r"^([0-9a-f]{2}:){5}[0-9a-f]{2}$")
MAX_PORT = 510  # BMv2's CPU port is 511 (p4src)


def _mac(value: Any) -> str:
    text = value.lower() if isinstance(value, str) else ""
    if not MAC_RE.match(text):
        raise ValueError(f"must be a MAC address like {ap.H1_MAC}, got {value!r}")
    return text


def _ipv4(value: Any) -> str:
    try:
        return str(ipaddress.IPv4Address(value if isinstance(value, str) else ""))
    except ipaddress.AddressValueError:
        raise ValueError(f"must be an IPv4 address, got {value!r}") from None


def _prefix(value: Any) -> str:
    try:
        return str(ipaddress.IPv4Network(value if isinstance(value, str) else ""))
    except ValueError:
        raise ValueError(f"must be an IPv4 prefix like {ap.subnet(1)}, got {value!r}") from None


def _rate(value: Any) -> float | None:
    if value is None:
        return None
    try:
        rate = check_number(value)
    except ValueError:
        rate = 0
    if rate <= 0:
        raise ValueError(f"must be a positive number or null, got {value!r}")
    return rate


def _grpc_address(value: Any) -> str:
    """Any P4Runtime address: ``host:port`` with a name, an IPv4 address or ``[IPv6]``."""
    host, _, port = value.rpartition(":") if isinstance(value, str) else ("", "", "")
    bracketed = host.startswith("[") and host.endswith("]")
    bare = host[1:-1] if bracketed else host
    ok = bool(bare) and port.isdigit() and 1 <= int(port) <= 65535
    if not ok or (":" in bare and not bracketed) or any(c in bare for c in " /[]"):
        raise ValueError(f"must be host:port (an IPv6 host in brackets), got {value!r}")
    return str(value)


def _iface(value: Any) -> str | None:
    """A Linux interface name (1..15 characters, no '/', blank or ':'), or None."""
    if value is None:
        return None
    bad = not isinstance(value, str) or not value or len(value) > 15
    if bad or any(c in value for c in "/: \t\n") or value in (".", ".."):
        raise ValueError(f"must be an interface name of at most 15 characters, got {value!r}")
    return str(value)


def _file(value: Any, info: ValidationInfo) -> str | None:
    """An existing file; a relative path is taken from the description file's directory
    (context "base_dir"; the working directory when there is none)."""
    if value is None:
        return None
    if not isinstance(value, str) or not value:
        raise ValueError(f"must be a file path, got {value!r}")
    path = Path(value).expanduser()
    if not path.is_absolute():
        path = Path((info.context or {}).get("base_dir") or ".") / path
    if not path.is_file():
        raise ValueError(f"no such file: {path.resolve()}")
    return str(path.resolve())


Mac = Annotated[str, BeforeValidator(_mac)]
FileName = Annotated[str | None, BeforeValidator(_file)]
Port = Annotated[int, int_in(0, MAX_PORT)]
Ipv4 = Annotated[str, BeforeValidator(_ipv4)]
Prefix = Annotated[str, BeforeValidator(_prefix)]
Rate = Annotated[float | None, BeforeValidator(_rate)]
GrpcAddress = Annotated[str, BeforeValidator(_grpc_address)]
Iface = Annotated[str | None, BeforeValidator(_iface)]
