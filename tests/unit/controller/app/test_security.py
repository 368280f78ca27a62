"""src/mpsched/controller/app/security.py: REST is refused off loopback without HTTPS (unless
--insecure),
the command line's TLS default for the switches."""

from __future__ import annotations

import logging

import pytest

from mpsched.controller import __main__ as main_module
from mpsched.controller.__main__ import build_parser
from mpsched.controller.app.security import (
    ExposureError,
    check_rest_exposure,
    is_loopback,
    with_tls_default,
)
from mpsched.netcfg import ConfigError, NetCfg
from tests.netdesc import edge_switch
from tests.tlscerts import make_lab


def args(*extra: str):
    return build_parser().parse_args(["--netcfg", "x.json", *extra])


@pytest.mark.parametrize("host", ["127.0.0.1", "127.0.0.2", "::1", "localhost"])
def test_loopback_addresses(host):
    assert is_loopback(host)
    check_rest_exposure(args("--rest-host", host))


@pytest.mark.parametrize("host", ["0.0.0.0", "192.0.2.1", "::"])
def test_rest_off_loopback_without_tls_is_refused_naming_the_flags(host):
    with pytest.raises(ExposureError) as raised:
        check_rest_exposure(args("--rest-host", host))
    text = str(raised.value)
    assert f"--rest-host {host} is not a loopback address" in text
    assert "--rest-cert" in text and "--rest-key" in text and "--insecure" in text


def test_rest_off_loopback_with_tls_or_insecure_is_allowed():
    check_rest_exposure(args("--rest-host", "0.0.0.0", "--rest-cert", "c", "--rest-key", "k"))
    check_rest_exposure(args("--rest-host", "0.0.0.0", "--insecure"))


def test_a_rest_certificate_without_its_key_is_refused():
    with pytest.raises(ExposureError, match="--rest-cert and --rest-key go together"):
        check_rest_exposure(args("--rest-cert", "c"))


def test_the_controller_exits_2_with_the_message(caplog):
    with caplog.at_level(logging.ERROR):
        assert main_module.main(["--netcfg", "x.json", "--rest-host", "0.0.0.0"]) == 2
    assert "--rest-host 0.0.0.0 is not a loopback address" in caplog.text


def test_unusable_rest_certificate_files_exit_2(tmp_path, caplog):
    with caplog.at_level(logging.ERROR):
        assert main_module.main(["--netcfg", "x.json", "--rest-cert", str(tmp_path / "c"),
                                 "--rest-key", str(tmp_path / "k")]) == 2
    assert "--rest-cert/--rest-key: " in caplog.text


def test_the_tls_flags_are_the_default_of_the_description(tmp_path):
    lab = make_lab(tmp_path)
    net = NetCfg.from_dict({"switches": [edge_switch(1)]})
    out = with_tls_default(net, args("--tls-ca", str(lab / "ca.pem"),
                                     "--tls-cert", str(lab / "controller.pem"),
                                     "--tls-key", str(lab / "controller.key")))
    tls = out.tls_for(out.switches[0])
    assert tls is not None and tls.ca_cert == lab / "ca.pem" and tls.key is not None
    assert with_tls_default(net, args()) is net


def test_a_missing_tls_file_names_the_flag(tmp_path):
    net = NetCfg.from_dict({"switches": [edge_switch(1)]})
    with pytest.raises(ConfigError) as raised:
        with_tls_default(net, args("--tls-ca", str(tmp_path / "nope.pem")))
    assert str(raised.value).startswith("command line: --tls-ca: no such file: ")
    with pytest.raises(ConfigError, match="--tls-cert/--tls-key need --tls-ca"):
        with_tls_default(net, args("--tls-cert", "x"))


def test_rest_host_names_and_the_read_token_options(tmp_path, monkeypatch):
    assert args().rest_host_name == [] and not args().read_token
    parsed = args("--rest-host-name", "ctl.lab", "--rest-host-name", "dash.lab")
    assert parsed.rest_host_name == ["ctl.lab", "dash.lab"]
    assert main_module.read_token(args()) is None
    path = tmp_path / "run" / "read"
    found = main_module.read_token(args("--read-token-file", str(path)))
    assert found is not None and found[0] == path and path.read_text().strip() == found[1]
    assert path.stat().st_mode & 0o077 == 0
    # --read-token alone: the file beside the write token's
    monkeypatch.setenv("MPSCHED_RUN_DIR", str(tmp_path / "dir"))
    found = main_module.read_token(args("--read-token", "--rest-port", "9001"))
    assert found is not None and found[0] == tmp_path / "dir" / "read-token-9001"
    empty = tmp_path / "empty"
    empty.write_text("\n")
    with pytest.raises(main_module.StartError, match="--read-token-file"):
        main_module.read_token(args("--read-token-file", str(empty)))


def test_the_app_checks_host_against_its_names():
    from mpsched.controller.app.app import MultipathApp
    from mpsched.testing.restfake import FakeBackend

    app = MultipathApp(controller=FakeBackend(), rest_host="ctl.lab", rest_port=0,
                       rest_host_names=("dash.lab",), read_token="r")
    assert app.hosts.problem("ctl.lab:8080") is None
    assert app.hosts.problem("dash.lab") is None
    assert app.hosts.problem("other.lab") is not None
    assert app.read_token == "r"
