"""src/mpsched/p4rt/tls.py: the handshake that explains why a switch is refused, against TLS
and plaintext servers of Python's own on 127.0.0.1."""

from __future__ import annotations

import logging
import socket

import grpc
import pytest

from mpsched.p4rt.tls import TlsError, TlsSettings, channel, check_server, speaks_tls
from tests.tlscerts import TlsEcho, make_lab


@pytest.fixture
def lab(tmp_path):
    return make_lab(tmp_path / "certs")


@pytest.fixture
def plaintext():
    """A server that accepts and answers in plaintext (as a switch without TLS)."""
    sock = socket.create_server(("127.0.0.1", 0))
    sock.settimeout(5)

    import threading

    def serve():
        try:
            conn, _ = sock.accept()
            conn.recv(4096)
            conn.sendall(b"\x00\x00\x12\x04\x00\x00\x00\x00\x00")  # an HTTP/2 SETTINGS frame
            conn.close()
        except OSError:
            pass

    threading.Thread(target=serve, daemon=True).start()
    yield f"127.0.0.1:{sock.getsockname()[1]}"
    sock.close()


def settings(lab, **kw) -> TlsSettings:
    return TlsSettings(lab / "ca.pem", lab / "controller.pem", lab / "controller.key", **kw)


def test_a_switch_certified_by_the_ca_passes(lab):
    server = TlsEcho(lab / "s1.pem", lab / "s1.key", client_ca=lab / "ca.pem")
    try:
        check_server(server.address, settings(lab), timeout=5)
        assert speaks_tls(server.address, timeout=5)
    finally:
        server.close()


def test_a_certificate_of_another_ca_is_refused_naming_the_ca(lab):
    server = TlsEcho(lab / "other-s1.pem", lab / "other-s1.key")
    try:
        with pytest.raises(TlsError, match="the switch's certificate is refused") as info:
            check_server(server.address, settings(lab), timeout=5)
        assert str(lab / "ca.pem") in str(info.value)
        assert server.address in str(info.value)
    finally:
        server.close()


def test_a_name_the_certificate_lacks_is_refused(lab):
    server = TlsEcho(lab / "s1.pem", lab / "s1.key")
    try:
        with pytest.raises(TlsError, match="s2"):
            check_server(server.address, settings(lab, server_name="s2"), timeout=5)
        check_server(server.address, settings(lab, server_name="s1"), timeout=5)
    finally:
        server.close()


def test_a_switch_requiring_a_client_certificate_is_explained(lab):
    server = TlsEcho(lab / "s1.pem", lab / "s1.key", client_ca=lab / "ca.pem")
    try:
        with pytest.raises(TlsError, match="client certificate"):
            check_server(server.address, TlsSettings(lab / "ca.pem"), timeout=5)
    finally:
        server.close()


def test_a_plaintext_switch_is_refused_when_tls_is_required(lab, plaintext):
    with pytest.raises(TlsError, match="does not speak TLS"):
        channel(plaintext, settings(lab), timeout=5)


def test_a_plaintext_switch_is_reached_in_plaintext_when_tls_is_not_required(
        lab, plaintext, caplog):
    with caplog.at_level(logging.WARNING):
        chan = channel(plaintext, settings(lab, required=False), timeout=5)
    chan.close()
    assert "TLS is not required: connecting in plaintext" in caplog.text


def test_speaks_tls_is_false_for_plaintext(plaintext):
    assert not speaks_tls(plaintext, timeout=5)


def test_the_channel_is_secure_with_the_given_files(lab, monkeypatch):
    server = TlsEcho(lab / "s1.pem", lab / "s1.key")
    calls = {}

    def secure_channel(address, credentials, options=None):
        calls.update(address=address, options=options)
        return grpc.insecure_channel(address)

    monkeypatch.setattr(grpc, "secure_channel", secure_channel)
    try:
        channel(server.address, settings(lab, server_name="s1"), timeout=5).close()
    finally:
        server.close()
    assert calls == {"address": server.address,
                     "options": [("grpc.ssl_target_name_override", "s1")]}
