"""P4Runtime over TLS: the controller's credentials and a handshake that explains failures.

A gRPC channel that cannot complete its TLS handshake only reports "not ready" when its
timeout ends, whatever the cause. Before opening the channel, `check_server` therefore makes
one TLS handshake of its own (Python's `ssl`, the same CA, client certificate and server name)
and turns its failure into a sentence: the switch's certificate is not signed by the CA, the
name does not match, the switch speaks plaintext, the switch wants a client certificate. With
`required` false a switch that speaks plaintext is reached in plaintext (logged as a warning):
a lab migrating to TLS switch by switch. Stratum and ONOS do the same (P4Runtime over TLS
with a private CA, docs/security.md).
"""

from __future__ import annotations

import logging
import socket
import ssl
import time
from dataclasses import dataclass
from pathlib import Path

import grpc

log = logging.getLogger(__name__)


class TlsError(RuntimeError):
    """The TLS handshake with a switch failed; the message says why."""


@dataclass(frozen=True)
class TlsSettings:
    """How the controller reaches one switch over TLS (paths are absolute)."""

    ca_cert: Path  # the CA that signed the switch's certificate
    cert: Path | None = None  # the controller's client certificate (mutual TLS)
    key: Path | None = None  # its private key
    server_name: str | None = None  # the name the switch's certificate must carry
    required: bool = True  # False: a switch that speaks plaintext is reached in plaintext


def split_address(address: str) -> tuple[str, int]:
    """``host:port`` / ``[v6]:port`` -> (host, port)."""
    host, _, port = address.rpartition(":")
    return host.strip("[]"), int(port)


def _context(tls: TlsSettings) -> ssl.SSLContext:
    context = ssl.create_default_context(ssl.Purpose.SERVER_AUTH, cafile=str(tls.ca_cert))
    if tls.cert is not None and tls.key is not None:
        context.load_cert_chain(str(tls.cert), str(tls.key))
    # gRPC negotiates HTTP/2; a server that insists on ALPN gets what it expects
    context.set_alpn_protocols(["h2"])
    return context


def _reason(error: BaseException) -> str:
    text = str(error)
    if "WRONG_VERSION_NUMBER" in text or "wrong version number" in text:
        return "the switch does not speak TLS (plaintext P4Runtime?)"
    if "CERTIFICATE_REQUIRED" in text or "certificate required" in text:
        return "the switch requires a client certificate (give tls.cert and tls.key)"
    return f"TLS handshake failed: {text or type(error).__name__}"


def check_server(address: str, tls: TlsSettings, timeout: float) -> None:
    """One TLS handshake with `address` as the gRPC channel would make it; TlsError saying
    why when it fails, OSError when nothing answers."""
    host, port = split_address(address)
    try:
        context = _context(tls)
    except (OSError, ssl.SSLError) as error:
        raise TlsError(f"{address}: cannot load the TLS files: {error}") from None
    with socket.create_connection((host, port), timeout=timeout) as raw:
        try:
            with context.wrap_socket(raw, server_hostname=tls.server_name or host) as conn:
                closed = _closed_after_handshake(conn)
        except ssl.SSLCertVerificationError as error:
            raise TlsError(f"{address}: the switch's certificate is refused "
                           f"({error.verify_message}): is it signed by the CA of "
                           f"{tls.ca_cert}?") from None
        except (ssl.SSLError, ConnectionResetError, ConnectionAbortedError) as error:
            raise TlsError(f"{address}: {_reason(error)}") from None
    if closed:
        hint = " (it requires a client certificate: give tls.cert and tls.key)"
        raise TlsError(f"{address}: the switch closed the connection after the TLS handshake"
                       + (hint if tls.cert is None else ": is the client certificate "
                          "signed by the CA the switch trusts?"))


def _closed_after_handshake(conn: ssl.SSLSocket, wait: float = 0.5) -> bool:
    """Whether the server hangs up within `wait` s of the handshake: TLS 1.3 refuses a
    client certificate (or its absence) only after the client considers the handshake done.
    A refusal alert raises ssl.SSLError."""
    deadline = time.monotonic() + wait
    while (left := deadline - time.monotonic()) > 0:
        conn.settimeout(left)
        try:
            if not conn.recv(4096):
                return True
        except (TimeoutError, ssl.SSLWantReadError):
            return False
    return False


def speaks_tls(address: str, timeout: float) -> bool:
    """Whether the server at `address` completes a TLS handshake (its certificate unchecked):
    explains why a plaintext channel to it never becomes ready."""
    host, port = split_address(address)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    try:
        with (socket.create_connection((host, port), timeout=timeout) as raw,
              context.wrap_socket(raw, server_hostname=host)):
            return True
    except (OSError, ssl.SSLError):
        return False


def channel(address: str, tls: TlsSettings | None, timeout: float) -> grpc.Channel:
    """A gRPC channel to `address`: plaintext without `tls`, else TLS once `check_server`
    passed (or plaintext, with a warning, when the switch speaks none and TLS is not
    required)."""
    if tls is None:
        return grpc.insecure_channel(address)
    try:
        check_server(address, tls, timeout)
    except TlsError as error:
        if tls.required or "does not speak TLS" not in str(error):
            raise
        log.warning("%s; TLS is not required: connecting in plaintext", error)
        return grpc.insecure_channel(address)
    credentials = grpc.ssl_channel_credentials(
        root_certificates=tls.ca_cert.read_bytes(),
        private_key=tls.key.read_bytes() if tls.key else None,
        certificate_chain=tls.cert.read_bytes() if tls.cert else None,
    )
    options = []
    if tls.server_name:
        options.append(("grpc.ssl_target_name_override", tls.server_name))
    return grpc.secure_channel(address, credentials, options=options)
