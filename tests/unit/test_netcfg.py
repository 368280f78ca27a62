import copy

import pytest

from mpsched.controller.southbound.forwarding import forwarding_entries
from mpsched.controller.telemetry.estimators import (
    DEAD_AFTER_US,
    PROBE_INTERVAL_S,
    REPORT_INTERVAL_US,
)
from mpsched.netcfg import ConfigError, NetCfg, PinCfg
from mpsched.p4rt.p4info import P4Info
from mpsched.p4rt.pipeline import (
    ACTION_SET_REPORT_INTERVAL,
    ACTION_TO_PATHS,
    ACTION_VIA_PATH,
    TABLE_LIVENESS_CONFIG,
    Pipeline,
)
from tests.fake_p4rt import synthetic_p4info

GOOD = {
    "switches": [
        {"name": "s1", "device_id": 1, "grpc_address": "127.0.0.1:50001",
         "mac": "00:00:0a:00:01:fe", "subnets": ["10.0.1.0/24"],
         "hosts": [{"name": "h1", "ip": "10.0.1.1", "mac": "00:00:0a:00:01:01", "port": 1}],
         "paths": [{"id": 1, "port": 2, "rate_mbps": 10}, {"id": 2, "port": 3}]},
        {"name": "s2", "device_id": 2, "grpc_address": "127.0.0.1:50002",
         "mac": "00:00:0a:00:02:fe", "subnets": ["10.0.2.0/24"],
         "hosts": [{"name": "h2", "ip": "10.0.2.1", "mac": "00:00:0a:00:02:01", "port": 1}],
         "paths": [{"id": 1, "port": 2}, {"id": 2, "port": 3}]},
    ]
}


def _pinned(*pins: dict) -> dict:
    data = copy.deepcopy(GOOD)
    data["switches"][0]["pins"] = list(pins)
    return data


def test_loads_and_round_trips(tmp_path):
    net = NetCfg.from_dict(GOOD)
    assert net.path_ids() == [1, 2]
    assert net.remote_subnets(net.switches[0]) == ["10.0.2.0/24"]
    assert net.switches[0].pins == ()
    path = tmp_path / "net.json"
    net.dump(path)
    assert NetCfg.load(path) == net


def test_pins_load_normalise_and_round_trip(tmp_path):
    net = NetCfg.from_dict(_pinned({"prefix": "10.0.2.3/32", "path_id": 2},
                                   {"prefix": "10.0.2.4", "path_id": 1},
                                   {"prefix": "10.0.0.0/8", "path_id": 1}))
    assert net.switches[0].pins == (PinCfg("10.0.2.3/32", 2), PinCfg("10.0.2.4/32", 1),
                                    PinCfg("10.0.0.0/8", 1))
    assert net.switches[1].pins == ()
    path = tmp_path / "net.json"
    net.dump(path)
    assert NetCfg.load(path) == net
    assert net.to_dict()["switches"][0]["pins"][0] == {"prefix": "10.0.2.3/32", "path_id": 2}


@pytest.mark.parametrize(
    ("pins", "field"),
    [
        ("10.0.2.3/32", "switches[0].pins: must be a list"),
        (["10.0.2.3/32"], "switches[0].pins[0]: must be an object"),
        ([{"prefix": "10.0.2.3/32"}], "switches[0].pins[0].path_id: missing"),
        ([{"path_id": 1}], "switches[0].pins[0].prefix: missing"),
        ([{"prefix": "10.0.2.3/32", "path_id": 1, "weight": 1}], "switches[0].pins[0].weight"),
        ([{"prefix": "10.0.2.300/32", "path_id": 1}], "switches[0].pins[0].prefix"),
        ([{"prefix": "10.0.2.3/24", "path_id": 1}], "switches[0].pins[0].prefix"),
        ([{"prefix": "10.0.2.3/33", "path_id": 1}], "switches[0].pins[0].prefix"),
        ([{"prefix": 3, "path_id": 1}], "switches[0].pins[0].prefix"),
        ([{"prefix": "10.0.1.7/32", "path_id": 1}], "switches[0].pins[0].prefix: lies inside"),
        ([{"prefix": "10.0.2.3/32", "path_id": 3}], "switches[0].pins[0].path_id"),
        ([{"prefix": "10.0.2.3/32", "path_id": 0}], "switches[0].pins[0].path_id"),
        ([{"prefix": "10.0.2.3/32", "path_id": "1"}], "switches[0].pins[0].path_id"),
        ([{"prefix": "10.0.2.3/32", "path_id": True}], "switches[0].pins[0].path_id"),
        ([{"prefix": "10.0.2.3/32", "path_id": 1.0}], "switches[0].pins[0].path_id"),
        ([{"prefix": "10.0.2.3/32", "path_id": 1}, {"prefix": "10.0.2.3", "path_id": 2}],
         "switches[0].pins[].prefix"),
    ],
)
def test_pin_errors_name_the_field(pins, field):
    data = copy.deepcopy(GOOD)
    data["switches"][0]["pins"] = pins
    with pytest.raises(ConfigError) as info:
        NetCfg.from_dict(data)
    assert str(info.value).startswith(field), str(info.value)


def test_pins_are_installed_after_the_routes():
    pipeline = Pipeline(P4Info(synthetic_p4info()))
    net = NetCfg.from_dict(_pinned({"prefix": "10.0.2.3/32", "path_id": 2}))
    entries = forwarding_entries(pipeline, net, net.switches[0])
    actions = [e.action for e in entries]
    assert actions.index(ACTION_TO_PATHS) < actions.index(ACTION_VIA_PATH)
    (pin,) = (e for e in entries if e.action == ACTION_VIA_PATH)
    assert list(pin.match.values()) == [("10.0.2.3", 32)]
    assert pin.params == {"path_id": 2}


def test_every_path_gets_a_report_interval():
    pipeline = Pipeline(P4Info(synthetic_p4info()))
    net = NetCfg.from_dict(_pinned({"prefix": "10.0.2.3/32", "path_id": 2}))
    sw = net.switches[0]
    entries = forwarding_entries(pipeline, net, sw)
    reports = [e for e in entries if e.action == ACTION_SET_REPORT_INTERVAL]
    assert sorted(next(iter(e.match.values())) for e in reports) == sorted(p.id for p in sw.paths)
    assert {e.params["interval_us"] for e in reports} == {REPORT_INTERVAL_US} == {10_000}


def test_a_pin_of_a_whole_remote_subnet_replaces_its_weighted_route():
    pipeline = Pipeline(P4Info(synthetic_p4info()))
    net = NetCfg.from_dict(_pinned({"prefix": "10.0.2.0/24", "path_id": 1}))
    entries = forwarding_entries(pipeline, net, net.switches[0])
    assert ACTION_TO_PATHS not in [e.action for e in entries]
    (pin,) = (e for e in entries if e.action == ACTION_VIA_PATH)
    assert list(pin.match.values()) == [("10.0.2.0", 24)]


def test_pipeline_refuses_a_pin_outside_its_paths():
    pipeline = Pipeline(P4Info(synthetic_p4info()))
    for bad in (0, pipeline.max_paths + 1):
        with pytest.raises(ValueError, match="outside"):
            pipeline.route_via_path("10.0.2.3/32", bad)


@pytest.mark.parametrize(
    ("mutate", "field"),
    [
        (lambda d: d["switches"][0].update(device_id="one"), "switches[0].device_id"),
        (lambda d: d["switches"][0]["paths"][1].update(port=600), "switches[0].paths[1].port"),
        (lambda d: d["switches"][1]["hosts"][0].update(ip="10.0.2"), "switches[1].hosts[0].ip"),
        (lambda d: d["switches"][0].update(mac="zz"), "switches[0].mac"),
        (lambda d: d["switches"][0].pop("paths"), "switches[0].paths"),
        (lambda d: d["switches"][0].update(colour=1), "switches[0].colour"),
        (lambda d: d["switches"][0]["paths"][0].update(rate_mbps=-1),
         "switches[0].paths[0].rate_mbps"),
        (lambda d: d["switches"][1].update(name="s1"), "switches[].name"),
        (lambda d: d["switches"][0]["paths"][1].update(id=1), "switches[0].paths[].id"),
        (lambda d: d["switches"][0].update(probe_iface="a/b"), "switches[0].probe_iface"),
        (lambda d: d["switches"][0].update(probe_iface="x" * 16), "switches[0].probe_iface"),
        (lambda d: d["switches"][1].update(probe_iface=""), "switches[1].probe_iface"),
    ],
)
def test_errors_name_the_field(mutate, field):
    data = copy.deepcopy(GOOD)
    mutate(data)
    with pytest.raises(ConfigError) as info:
        NetCfg.from_dict(data)
    assert str(info.value).startswith(field), str(info.value)


def test_probe_iface_is_optional_and_round_trips(tmp_path):
    data = copy.deepcopy(GOOD)
    data["switches"][0]["probe_iface"] = "s1-prbc"
    net = NetCfg.from_dict(data)
    assert net.switches[0].probe_iface == "s1-prbc"
    assert net.switches[1].probe_iface is None
    path = tmp_path / "net.json"
    net.dump(path)
    assert NetCfg.load(path) == net


def test_unreadable_file_is_a_config_error(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{nope")
    with pytest.raises(ConfigError, match="not JSON"):
        NetCfg.load(bad)


def test_host_addresses_may_share_a_port_but_not_an_ip_or_a_path_port():
    data = copy.deepcopy(GOOD)
    hosts = data["switches"][0]["hosts"]
    hosts.append({"name": "h1", "ip": "10.0.1.2", "mac": "00:00:0a:00:01:01", "port": 1})
    assert len(NetCfg.from_dict(data).switches[0].hosts) == 2
    hosts.append({"name": "h1", "ip": "10.0.1.2", "mac": "00:00:0a:00:01:01", "port": 1})
    with pytest.raises(ConfigError, match=r"switches\[0\].hosts\[\].ip"):
        NetCfg.from_dict(data)
    hosts.pop()
    hosts.append({"name": "x", "ip": "10.0.1.9", "mac": "00:00:0a:00:01:09", "port": 2})
    with pytest.raises(ConfigError, match="port: 2 appears twice"):
        NetCfg.from_dict(data)


def test_every_path_gets_liveness():
    pipeline = Pipeline(P4Info(synthetic_p4info()))
    net = NetCfg.from_dict(_pinned({"prefix": "10.0.2.3/32", "path_id": 2}))
    sw = net.switches[0]
    entries = forwarding_entries(pipeline, net, sw)
    live = [e for e in entries if e.table == TABLE_LIVENESS_CONFIG]
    assert sorted(e.match["path_id"] for e in live) == sorted(p.id for p in sw.paths)
    assert {e.params["dead_after_us"] for e in live} == {DEAD_AFTER_US} == {50_000}
    assert 5 * round(PROBE_INTERVAL_S * 1e6) == DEAD_AFTER_US


def test_liveness_and_probe_builders_check_their_input():
    pipeline = Pipeline(P4Info(synthetic_p4info()))
    with pytest.raises(ValueError, match="path id"):
        pipeline.liveness_config(0, 1000)
    with pytest.raises(ValueError, match="dead_after_us"):
        pipeline.liveness_config(1, 0)
    with pytest.raises(ValueError, match="path id"):
        pipeline.probe(5)
    payload, metadata = pipeline.probe(3)
    assert metadata == {"path_id": 3}
    assert len(payload) <= 20 and payload[12:14] == b"\x00\x00"
