"""src/mpsched/netcfg.py's tls settings: per switch or for all, paths from the description's
directory, missing files refused naming the field."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from mpsched.netcfg import ConfigError, NetCfg
from tests.netdesc import edge_switch
from tests.tlscerts import make_lab

BASE = {"switches": [edge_switch(1, "10.0.0.1:9559"), edge_switch(2, "switch2.lab:9559"),
                     edge_switch(3, "[2001:db8::3]:9559")]}


@pytest.fixture
def lab(tmp_path):
    return make_lab(tmp_path / "certs")


def write(tmp_path: Path, data: dict) -> Path:
    path = tmp_path / "net.json"
    path.write_text(json.dumps(data))
    return path


def test_relative_paths_are_taken_from_the_descriptions_directory(tmp_path, lab, monkeypatch):
    data = copy.deepcopy(BASE)
    data["tls"] = {"ca_cert": "certs/ca.pem", "cert": "certs/controller.pem",
                   "key": "certs/controller.key"}
    data["switches"][1]["tls"] = {"ca_cert": str(lab / "ca.pem"), "server_name": "s2",
                                  "required": False}
    monkeypatch.chdir("/")
    net = NetCfg.load(write(tmp_path, data))
    first = net.tls_for(net.switches[0])
    assert first is not None and first.ca_cert == lab / "ca.pem"
    assert first.cert == lab / "controller.pem" and first.required
    second = net.tls_for(net.switches[1])  # its own settings, not the default
    assert second is not None and second.server_name == "s2" and second.cert is None
    assert not second.required


def test_without_tls_a_switch_is_reached_in_plaintext(tmp_path):
    net = NetCfg.load(write(tmp_path, BASE))
    assert net.tls_for(net.switches[0]) is None


def test_a_missing_file_is_refused_naming_the_field(tmp_path, lab):
    data = copy.deepcopy(BASE)
    data["switches"][1]["tls"] = {"ca_cert": "certs/ca.pem", "cert": "certs/nope.pem",
                                  "key": "certs/controller.key"}
    with pytest.raises(ConfigError) as raised:
        NetCfg.load(write(tmp_path, data))
    assert raised.value.field == "switches[1].tls.cert"
    assert raised.value.message == f"no such file: {lab / 'nope.pem'}"


@pytest.mark.parametrize(
    ("tls", "field", "message"),
    [
        ({"cert": "certs/controller.pem", "key": "certs/controller.key"}, "tls.ca_cert",
         "missing"),
        ({"ca_cert": "certs/ca.pem", "cert": "certs/controller.pem"}, "tls.key",
         "cert and key go together: give both or neither"),
        ({"ca_cert": "certs/ca.pem", "required": "yes"}, "tls.required",
         "must be true or false, got 'yes'"),
        ({"ca_cert": "certs/ca.pem", "ca": "x"}, "tls.ca",
         "unknown key (allowed: ca_cert, cert, key, required, server_name)"),
    ],
)
def test_bad_tls_settings_are_named(tmp_path, lab, tls, field, message):
    data = dict(copy.deepcopy(BASE), tls=tls)
    with pytest.raises(ConfigError) as raised:
        NetCfg.load(write(tmp_path, data))
    assert (raised.value.field, raised.value.message) == (field, message)


def test_any_host_port_is_a_p4runtime_address(tmp_path):
    net = NetCfg.load(write(tmp_path, BASE))
    assert [s.grpc_address for s in net.switches] == ["10.0.0.1:9559", "switch2.lab:9559",
                                                      "[2001:db8::3]:9559"]


@pytest.mark.parametrize("address", ["10.0.0.1:0", "abc:", "::1:9559", ":9559", "a b:1"])
def test_a_bad_p4runtime_address_is_named(tmp_path, address):
    data = copy.deepcopy(BASE)
    data["switches"][0]["grpc_address"] = address
    with pytest.raises(ConfigError) as raised:
        NetCfg.load(write(tmp_path, data))
    assert raised.value.field == "switches[0].grpc_address"
    assert raised.value.message == (f"must be host:port (an IPv6 host in brackets), "
                                    f"got {address!r}")
