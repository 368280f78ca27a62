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

import contextlib
import logging
import socket
import ssl
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
    if isinstance(error, ssl.SSLCertVerificationError):
        return f"the switch's certificate is refused: {error.verify_message}"
    text = str(error)
    if "WRONG_VERSION_NUMBER" in text or "wrong version number" in text:
        return "the switch does not speak TLS (plaintext P4Runtime?)"
    if "CERTIFICATE_REQUIRED" in text or "certificate required" in text:
        return "the switch requires a client certificate (give tls.cert and tls.key)"
    return f"TLS handshake failed: {error or type(error).__name__}"


def check_server(address: str, tls: TlsSettings, timeout: float) -> None:
    """One TLS handshake with `address` as the gRPC channel would make it; TlsError saying
    why when it fails, OSError when nothing answers."""
    host, port = split_address(address)
    name = tls.server_name or host
    try:
        context = _context(tls)
    except (OSError, ssl.SSLError) as error:
        raise TlsError(f"{address}: cannot load the TLS files: {error}") from None
    with socket.create_connection((host, port), timeout=timeout) as raw:
        try:
            with context.wrap_socket(raw, server_hostname=name) as conn:
                # TLS 1.3 reports a refused client certificate only on the first read
                conn.settimeout(0.2)
                with contextlib.suppress(TimeoutError, ssl.SSLWantReadError):
                    conn.recv(1)
        except (ssl.SSLError, ConnectionResetError, ConnectionAbortedError) as error:
            raise TlsError(f"{address}: {_reason(error)}") from None


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
