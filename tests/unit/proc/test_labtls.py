"""A testbed's P4Runtime certificates (src/mpsched/proc/labtls.py): where they go and with which
modes, that a switch's and the controller's pass a mutual handshake under the testbed's CA,
the description carrying them, and `--p4rt-plaintext`."""

from __future__ import annotations

import argparse
import socket
import ssl
import stat
import threading
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID

from mpsched.netcfg import NetCfg
from mpsched.proc import labtls
from mpsched.proc.labtls import LabTls, LabTlsError, fresh_dir


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


def test_create_makes_a_private_directory_with_the_ca_and_the_controllers_pair(tmp_path):
    tls = LabTls.under(tmp_path / "logs").create()
    assert tls.dir == tmp_path / "logs" / labtls.TLS_DIR
    assert _mode(tls.dir) == 0o700
    assert {p.name for p in tls.dir.iterdir()} == {"ca.pem", "controller.pem",
                                                  "controller.key"}
    assert _mode(tls.client_key) == 0o600
    client = x509.load_pem_x509_certificate(tls.client_cert.read_bytes())
    usage = client.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    assert list(usage) == [ExtendedKeyUsageOID.CLIENT_AUTH]


def test_a_switch_gets_a_server_pair_and_bmv2_client_authentication(tmp_path):
    tls = LabTls.under(tmp_path).create()
    server = tls.switch("leaf1")
    assert (server.cert, server.key, server.ca_cert) == (
        tls.dir / "leaf1.pem", tls.dir / "leaf1.key", tls.ca_cert)
    assert _mode(server.key) == 0o600
    assert server.client_auth and "--grpc-server-with-client-auth" in server.options()
    cert = x509.load_pem_x509_certificate(server.cert.read_bytes())
    san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert san.get_values_for_type(x509.DNSName) == ["leaf1"]
    assert [str(a) for a in san.get_values_for_type(x509.IPAddress)] == ["127.0.0.1"]


def test_the_switch_and_controller_pairs_pass_a_mutual_handshake(tmp_path):
    tls = LabTls.under(tmp_path).create()
    server = tls.switch("s1")
    server_ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH, cafile=tls.ca_cert)
    server_ctx.load_cert_chain(server.cert, server.key)
    server_ctx.verify_mode = ssl.CERT_REQUIRED
    client_ctx = ssl.create_default_context(cafile=tls.ca_cert)
    client_ctx.load_cert_chain(tls.client_cert, tls.client_key)
    left, right = socket.socketpair()
    peer: dict = {}

    def serve() -> None:
        with server_ctx.wrap_socket(left, server_side=True) as conn:
            peer.update(conn.getpeercert())
            conn.sendall(b"x")

    thread = threading.Thread(target=serve)
    thread.start()
    with client_ctx.wrap_socket(right, server_hostname="127.0.0.1") as conn:
        assert conn.recv(1) == b"x"
    thread.join(5)
    assert dict(x[0] for x in peer["subject"])["commonName"] == "controller"


def test_two_testbeds_do_not_trust_each_others_certificates(tmp_path):
    one = LabTls.under(tmp_path / "a").create()
    other = LabTls.under(tmp_path / "b").create()
    other_cert = x509.load_pem_x509_certificate(other.switch("s1").cert.read_bytes())
    one_ca = x509.load_pem_x509_certificate(one.ca_cert.read_bytes())
    assert other_cert.issuer == one_ca.subject  # same name, another key
    public = one_ca.public_key()
    assert isinstance(public, ec.EllipticCurvePublicKey)
    algorithm = other_cert.signature_hash_algorithm
    assert algorithm is not None
    with pytest.raises(InvalidSignature):
        public.verify(other_cert.signature, other_cert.tbs_certificate_bytes,
                      ec.ECDSA(algorithm))


def test_the_description_carries_the_controllers_tls(tmp_path):
    tls = LabTls.under(tmp_path).create()
    data = {"tls": tls.description(), "switches": [{
        "name": "s1", "device_id": 1, "grpc_address": "127.0.0.1:50001",
        "mac": "00:00:0a:00:01:fe", "subnets": ["10.0.1.0/24"], "hosts": [], "paths": []}]}
    net = NetCfg.from_dict(data)
    settings = net.tls_for(net.switches[0])
    assert settings is not None and settings.required
    assert (settings.ca_cert, settings.cert, settings.key) == (
        tls.ca_cert.resolve(), tls.client_cert.resolve(), tls.client_key.resolve())
    assert all(Path(p).is_absolute() for p in tls.description().values())


def test_create_replaces_whatever_was_there_and_remove_deletes_it(tmp_path):
    target = tmp_path / "elsewhere"
    target.mkdir()
    (target / "keep").write_text("x")
    planted = tmp_path / labtls.TLS_DIR
    planted.symlink_to(target)
    tls = LabTls.under(tmp_path).create()
    assert not tls.dir.is_symlink() and _mode(tls.dir) == 0o700
    assert (target / "keep").exists() and not (target / "ca.pem").exists()
    tls.remove()
    assert not tls.dir.exists()
    with pytest.raises(LabTlsError, match="create"):
        tls.switch("s1")


def test_fresh_dir_replaces_a_file_and_a_killed_runs_directory(tmp_path):
    path = tmp_path / "d"
    path.write_text("stale")
    fresh_dir(path)
    assert path.is_dir() and not any(path.iterdir())
    (path / "s1.key").write_text("old")
    fresh_dir(path)
    assert not any(path.iterdir())


def test_an_unwritable_place_is_an_error_naming_it(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(LabTlsError, match=str(blocker)):
        LabTls(blocker / "tls").create()


def test_the_plaintext_option():
    parser = argparse.ArgumentParser()
    labtls.add_option(parser)
    assert parser.parse_args([]).p4rt_plaintext is False
    assert parser.parse_args([labtls.PLAINTEXT_OPTION]).p4rt_plaintext is True


def test_every_command_that_starts_a_testbed_takes_the_option():
    from mpsched import demo
    from mpsched.lab import cmdline
    from mpsched.topo import __main__ as topo

    parsers = [cmdline.build_parser(), cmdline.build_parser(compare=True)]
    for parser in parsers:
        assert parser.parse_args(["x.yaml", labtls.PLAINTEXT_OPTION]).p4rt_plaintext
        assert not parser.parse_args(["x.yaml"]).p4rt_plaintext
    for parser in (demo.build_parser(), topo.build_parser()):
        assert parser.parse_args([labtls.PLAINTEXT_OPTION]).p4rt_plaintext
        assert not parser.parse_args([]).p4rt_plaintext
