"""controller/security.py: REST is refused off loopback without HTTPS (unless --insecure),
the command line's TLS default for the switches."""

from __future__ import annotations

import logging

import pytest

from mpsched.controller import __main__ as main_module
from mpsched.controller.__main__ import build_parser
from mpsched.controller.security import (
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
