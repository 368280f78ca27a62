"""What every REST request passes before the API, and every answer gets after it: the Host
check and the security headers (docs/security.md).

- Host check: a web page can read an API on loopback through DNS rebinding (its own name,
  re-resolved to 127.0.0.1, makes the API same-origin to it), but its requests then carry that
  name as their Host. So a request is answered only if its Host (without port) is an IP
  address (an origin that is an address cannot be rebound), ``localhost``, the listen
  address, or a name the operator gave (``--rest-host-name``); else 421 naming the Host. A
  request without Host (HTTP/1.0; browsers always send one) passes.
- Security headers on every answer: ``X-Content-Type-Options: nosniff``,
  ``Referrer-Policy: no-referrer``, ``X-Frame-Options: DENY`` and a Content-Security-Policy
  with ``frame-ancestors 'none'``: the dashboard's (`UI_CSP`) allows its own files only (no
  inline script or style); every other answer's (`API_CSP`) allows nothing, so a JSON or YAML
  answer opened in a browser runs and loads nothing. API answers are not cached
  (``Cache-Control: no-store``; they may need the read token).
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable
from dataclasses import dataclass

UI_PREFIX = "/ui"
UI_CSP = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
          "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'; "
          "frame-ancestors 'none'")
API_CSP = "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"
COMMON_HEADERS = (
    ("X-Content-Type-Options", "nosniff"),
    ("Referrer-Policy", "no-referrer"),
    ("X-Frame-Options", "DENY"),
)
# what the HTTP server's own error answers (malformed HTTP, too large) carry
ERROR_HEADERS = (*COMMON_HEADERS, ("Content-Security-Policy", API_CSP))
MAX_SHOWN = 100  # characters of a refused Host named in the error
# RFC 9110 section 7.2: Host = uri-host [ ":" port ]; a name, an IPv4 address or a bracketed
# IPv6 address (two Host headers, which the server joins with a comma, match none)
HOST_SYNTAX = re.compile(r"(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9_.-]+)(:[0-9]*)?")


def host_name(header: str) -> str:
    """The name or address of a Host header: without port, brackets or trailing dot, in
    lower case (``[::1]:8080`` -> ``::1``, ``Example.org.:80`` -> ``example.org``)."""
    text = header.strip().lower()
    if text.startswith("["):
        return text[1:text.find("]")] if "]" in text else text[1:]
    if text.count(":") == 1:
        text = text.partition(":")[0]
    return text.rstrip(".")


def is_address(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


@dataclass(frozen=True)
class HostCheck:
    """The names a request's Host may give (besides IP addresses)."""

    names: frozenset[str]

    @classmethod
    def serving(cls, listen_host: str, extra: Iterable[str] = ()) -> HostCheck:
        """The names for a server listening on `listen_host`: localhost, the listen
        address, and `extra` (``--rest-host-name``)."""
        names = {"localhost", host_name(listen_host), *(host_name(n) for n in extra)}
        return cls(frozenset(n for n in names if n))

    def problem(self, header: str | None) -> str | None:
        """Why a request with this Host header is refused, or None."""
        if header is None:
            return None
        shown = header.strip()[:MAX_SHOWN]
        if not HOST_SYNTAX.fullmatch(header.strip()):
            return f"Host {shown!r} is not a host name or address"
        name = host_name(header)
        if name in self.names or is_address(name):
            return None
        return (f"Host {shown!r} is not a name of this server: give it to the controller "
                f"with --rest-host-name, or use its address")


def answer_headers(path: str) -> list[tuple[str, str]]:
    """The security headers of an answer to `path`."""
    is_ui = path == UI_PREFIX or path.startswith(UI_PREFIX + "/")
    headers = [*COMMON_HEADERS, ("Content-Security-Policy", UI_CSP if is_ui else API_CSP)]
    if not is_ui:
        headers.append(("Cache-Control", "no-store"))
    return headers
