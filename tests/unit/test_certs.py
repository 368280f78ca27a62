"""src/mpsched/certs.py (`mpsched certs`): the files, their modes, the SAN, and that a client
trusting ca.pem completes a handshake with a switch's certificate and the controller's."""

from __future__ import annotations

import socket
import ssl
import stat
import threading

import pytest
from cryptography import x509

from mpsched import cli


def test_certs_writes_a_ca_a_cert_per_switch_and_the_controllers(tmp_path, capsys):
    out = tmp_path / "lab"
    assert cli.main(["certs", "--out", str(out), "--switch", "s1",
                     "--switch", "s2=192.0.2.7,sw2.lab"]) == 0
    assert "CA, switches (s1, s2) and controller certificates" in capsys.readouterr().out
    names = {p.name for p in out.iterdir()}
    assert names == {f"{stem}.{ext}" for stem in ("ca", "s1", "s2", "controller")
                     for ext in ("pem", "key")}
    for key in out.glob("*.key"):
        assert stat.S_IMODE(key.stat().st_mode) == 0o600, key
    cert = x509.load_pem_x509_certificate((out / "s2.pem").read_bytes())
    san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert san.get_values_for_type(x509.DNSName) == ["s2", "sw2.lab"]
    assert [str(a) for a in san.get_values_for_type(x509.IPAddress)] == ["127.0.0.1",
                                                                         "192.0.2.7"]


def test_a_switch_certificate_passes_a_mutual_handshake(tmp_path):
    out = tmp_path / "lab"
    assert cli.main(["certs", "--out", str(out), "--switch", "s1"]) == 0
    server_ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH, cafile=out / "ca.pem")
    server_ctx.load_cert_chain(out / "s1.pem", out / "s1.key")
    server_ctx.verify_mode = ssl.CERT_REQUIRED
    client_ctx = ssl.create_default_context(cafile=out / "ca.pem")
    client_ctx.load_cert_chain(out / "controller.pem", out / "controller.key")
    left, right = socket.socketpair()
    peer = {}

    def serve():
        with server_ctx.wrap_socket(left, server_side=True) as tls:
            peer.update(tls.getpeercert())
            tls.sendall(b"x")

    thread = threading.Thread(target=serve)
    thread.start()
    with client_ctx.wrap_socket(right, server_hostname="127.0.0.1") as tls:
        assert tls.recv(1) == b"x"
    thread.join(5)
    assert dict(x[0] for x in peer["subject"])["commonName"] == "controller"


def test_an_unwritable_out_exits_2_naming_it(tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("")
    assert cli.main(["certs", "--out", str(blocker / "sub"), "--switch", "s1"]) == 2
    assert f"mpsched certs: --out {blocker / 'sub'}" in capsys.readouterr().err


def test_a_reserved_switch_name_is_a_usage_error(tmp_path, capsys):
    assert cli.main(["certs", "--out", str(tmp_path), "--switch", "controller"]) == 2
    assert "not a usable switch name: 'controller'" in capsys.readouterr().err


@pytest.mark.parametrize(("argv", "message"), [
    (["--switch", "s1", "--days", "0"], "--days: must be 1..3650, got 0"),
    (["--switch", "s1", "--days", "-5"], "--days: must be 1..3650, got -5"),
    (["--switch", "s 1"], "not a usable switch name: 's 1'"),
    (["--switch", ".."], "not a usable switch name: '..'"),
    (["--switch", "''"], "not a usable switch name: \"''\""),
])
def test_bad_options_write_nothing(tmp_path, capsys, argv, message):
    out = tmp_path / "certs"
    assert cli.main(["certs", "--out", str(out), *argv]) == 2
    assert message in capsys.readouterr().err
    assert not out.exists()
