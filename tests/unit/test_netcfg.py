import copy

import pytest

from mpsched import addressing as ap
from mpsched.controller.southbound.forwarding import forwarding_entries
from mpsched.controller.telemetry.estimators import (
    DEAD_AFTER_US,
    PROBE_INTERVAL_S,
    REPORT_INTERVAL_US,
)
from mpsched.netcfg import ConfigError, NetCfg, PathCfg, PinCfg, plan_edges
from mpsched.p4rt.p4info import P4Info
from mpsched.p4rt.pipeline import (
    ACTION_SET_REPORT_INTERVAL,
    ACTION_TO_PATHS,
    ACTION_VIA_PATH,
    TABLE_LIVENESS_CONFIG,
    Pipeline,
)
from tests import netdesc
from tests.fake_p4rt import synthetic_p4info
from tests.netdesc import edge_switch

GOOD = {
    "switches": [
        edge_switch(1, "127.0.0.1:50001", [{"id": 1, "port": 2, "rate_mbps": 10},
                                           {"id": 2, "port": 3}], with_host=True),
        edge_switch(2, "127.0.0.1:50002", [{"id": 1, "port": 2}, {"id": 2, "port": 3}],
                    with_host=True),
    ]
}
PIN_IP = ap.host_ip(ap.RECEIVER_EDGE, 3)  # a host behind s2 that s1 pins to a path
PIN = ap.host_prefix(ap.RECEIVER_EDGE, 3)
LOCAL_PIN = ap.host_prefix(ap.SENDER_EDGE, 7)  # inside s1's own subnet: refused


def _pinned(*pins: dict) -> dict:
    data = copy.deepcopy(GOOD)
    data["switches"][0]["pins"] = list(pins)
    return data


def test_loads_and_round_trips(tmp_path):
    net = NetCfg.from_dict(GOOD)
    assert net.path_ids() == [1, 2]
    assert net.remote_subnets(net.switches[0]) == [ap.subnet(ap.RECEIVER_EDGE)]
    assert net.switches[0].pins == ()
    path = tmp_path / "net.json"
    net.dump(path)
    assert NetCfg.load(path) == net


def test_pins_load_normalise_and_round_trip(tmp_path):
    net = NetCfg.from_dict(_pinned({"prefix": PIN, "path_id": 2},
                                   {"prefix": ap.host_ip(ap.RECEIVER_EDGE, 4), "path_id": 1},
                                   {"prefix": "10.0.0.0/8", "path_id": 1}))
    assert net.switches[0].pins == (PinCfg(PIN, 2), PinCfg(ap.host_prefix(ap.RECEIVER_EDGE, 4), 1),
                                    PinCfg("10.0.0.0/8", 1))
    assert net.switches[1].pins == ()
    path = tmp_path / "net.json"
    net.dump(path)
    assert NetCfg.load(path) == net
    assert net.to_dict()["switches"][0]["pins"][0] == {"prefix": PIN, "path_id": 2}


@pytest.mark.parametrize(
    ("pins", "field"),
    [
        (PIN, "switches[0].pins: must be a list"),
        ([PIN], "switches[0].pins[0]: must be an object"),
        ([{"prefix": PIN}], "switches[0].pins[0].path_id: missing"),
        ([{"path_id": 1}], "switches[0].pins[0].prefix: missing"),
        ([{"prefix": PIN, "path_id": 1, "weight": 1}], "switches[0].pins[0].weight"),
        ([{"prefix": "10.0.256.3/32", "path_id": 1}], "switches[0].pins[0].prefix"),
        ([{"prefix": f"{PIN_IP}/24", "path_id": 1}], "switches[0].pins[0].prefix"),
        ([{"prefix": f"{PIN_IP}/33", "path_id": 1}], "switches[0].pins[0].prefix"),
        ([{"prefix": 3, "path_id": 1}], "switches[0].pins[0].prefix"),
        ([{"prefix": LOCAL_PIN, "path_id": 1}], "switches[0].pins[0].prefix: lies inside"),
        ([{"prefix": PIN, "path_id": 3}], "switches[0].pins[0].path_id"),
        ([{"prefix": PIN, "path_id": 0}], "switches[0].pins[0].path_id"),
        ([{"prefix": PIN, "path_id": "1"}], "switches[0].pins[0].path_id"),
        ([{"prefix": PIN, "path_id": True}], "switches[0].pins[0].path_id"),
        ([{"prefix": PIN, "path_id": 1.0}], "switches[0].pins[0].path_id"),
        ([{"prefix": PIN, "path_id": 1}, {"prefix": PIN_IP, "path_id": 2}],
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
    net = NetCfg.from_dict(_pinned({"prefix": PIN, "path_id": 2}))
    entries = forwarding_entries(pipeline, net, net.switches[0])
    actions = [e.action for e in entries]
    assert actions.index(ACTION_TO_PATHS) < actions.index(ACTION_VIA_PATH)
    (pin,) = (e for e in entries if e.action == ACTION_VIA_PATH)
    assert list(pin.match.values()) == [(PIN_IP, 32)]
    assert pin.params == {"dst_edge": 2, "path_id": 2}


def test_every_path_gets_a_report_interval():
    pipeline = Pipeline(P4Info(synthetic_p4info()))
    net = NetCfg.from_dict(_pinned({"prefix": PIN, "path_id": 2}))
    sw = net.switches[0]
    entries = forwarding_entries(pipeline, net, sw)
    reports = [e for e in entries if e.action == ACTION_SET_REPORT_INTERVAL]
    assert sorted(e.match["path_id"] for e in reports) == sorted(p.id for p in sw.paths)
    assert {e.match["peer_edge"] for e in reports} == {net.peer_edge(sw)}
    assert {e.params["interval_us"] for e in reports} == {REPORT_INTERVAL_US} == {10_000}


def test_a_pin_of_a_whole_remote_subnet_replaces_its_weighted_route():
    pipeline = Pipeline(P4Info(synthetic_p4info()))
    net = NetCfg.from_dict(_pinned({"prefix": ap.subnet(ap.RECEIVER_EDGE), "path_id": 1}))
    entries = forwarding_entries(pipeline, net, net.switches[0])
    assert ACTION_TO_PATHS not in [e.action for e in entries]
    (pin,) = (e for e in entries if e.action == ACTION_VIA_PATH)
    assert list(pin.match.values()) == [(ap.host_ip(ap.RECEIVER_EDGE, 0), 24)]


def test_pipeline_refuses_a_pin_outside_its_paths():
    pipeline = Pipeline(P4Info(synthetic_p4info()))
    for bad in (0, pipeline.max_paths + 1):
        with pytest.raises(ValueError, match="outside"):
            pipeline.route_via_path(PIN, 2, bad)


@pytest.mark.parametrize(
    ("mutate", "field"),
    [
        (lambda d: d["switches"][0].update(device_id="one"), "switches[0].device_id"),
        (lambda d: d["switches"][0]["paths"][1].update(port=600), "switches[0].paths[1].port"),
        (lambda d: d["switches"][1]["hosts"][0].update(ip=PIN_IP.rsplit(".", 1)[0]),
         "switches[1].hosts[0].ip"),
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
    second = {**netdesc.host(ap.SENDER_EDGE), "ip": ap.host_ip(ap.SENDER_EDGE, 2)}
    hosts.append(second)
    assert len(NetCfg.from_dict(data).switches[0].hosts) == 2
    hosts.append(dict(second))
    with pytest.raises(ConfigError, match=r"switches\[0\].hosts\[\].ip"):
        NetCfg.from_dict(data)
    hosts.pop()
    hosts.append(netdesc.host(ap.SENDER_EDGE, 9, port=2, name="x"))
    with pytest.raises(ConfigError, match="port: 2 appears twice"):
        NetCfg.from_dict(data)


def test_every_path_gets_liveness():
    pipeline = Pipeline(P4Info(synthetic_p4info()))
    net = NetCfg.from_dict(_pinned({"prefix": PIN, "path_id": 2}))
    sw = net.switches[0]
    entries = forwarding_entries(pipeline, net, sw)
    live = [e for e in entries if e.table == TABLE_LIVENESS_CONFIG]
    peer = net.peer_edge(sw)
    assert sorted((e.match["peer_edge"], e.match["path_id"]) for e in live) == sorted(
        (peer, p.id) for p in sw.paths)
    assert {e.params["dead_after_us"] for e in live} == {DEAD_AFTER_US} == {50_000}
    assert 5 * round(PROBE_INTERVAL_S * 1e6) == DEAD_AFTER_US


def test_liveness_and_probe_builders_check_their_input():
    pipeline = Pipeline(P4Info(synthetic_p4info()))
    with pytest.raises(ValueError, match="path id"):
        pipeline.liveness_config(2, 0, 1000)
    with pytest.raises(ValueError, match="dead_after_us"):
        pipeline.liveness_config(2, 1, 0)
    with pytest.raises(ValueError, match="edge id"):
        pipeline.liveness_config(0, 1, 1000)
    with pytest.raises(ValueError, match=f"edge id {pipeline.max_edges + 1} outside"):
        pipeline.liveness_config(pipeline.max_edges + 1, 1, 1000)
    assert pipeline.liveness_config(3, 2, 1000).match == {"peer_edge": 3, "path_id": 2}
    with pytest.raises(ValueError, match="path id"):
        pipeline.probe(5, 2)
    with pytest.raises(ValueError, match="edge id"):
        pipeline.probe(3, 0)
    payload, metadata = pipeline.probe(3, 2)
    assert metadata == {"path_id": 3, "dst_edge": 2}
    assert len(payload) <= 20 and payload[12:14] == b"\x00\x00"


def test_a_large_fabric_parses_within_any_builds_limits_and_looks_its_edges_up():
    """32 leaves: beyond the default build (8) but within what a build may hold; the
    program's own limit is check_limits'. Edges by id, peers and switches by name."""
    from mpsched.fabric.files import parse_fabric
    from mpsched.fabric.model import ANY_BUILD_MAX_EDGES
    from mpsched.fabric.netdesc import describe

    section = {"leaf_spine": {"leaves": 32, "spines": 4, "link": {"rate_mbps": 10}}}
    fabric = parse_fabric(section, max_edges=ANY_BUILD_MAX_EDGES)
    net = describe(section, fabric, lambda i: f"127.0.0.1:{i}")
    assert len(net.topology.edges) == 32
    assert [net.edge_id(s) for s in net.edge_switches()] == list(range(1, 33))
    assert net.edge_switch(7).name == "leaf7" and net.switch("spine2").name == "spine2"
    assert net.peer_edges(net.switch("leaf3")) == [e for e in range(1, 33) if e != 3]
    assert net.peer_edges(net.switch("spine1")) == []
    leaf3, spine1 = net.switch("leaf3"), net.switch("spine1")
    assert [e for e in range(0, 35) if net.is_peer_edge(leaf3, e)] == net.peer_edges(leaf3)
    assert not any(net.is_peer_edge(spine1, e) for e in range(0, 35))
    with pytest.raises(KeyError):
        net.edge_switch(33)
    with pytest.raises(KeyError):
        net.switch("leaf33")
    net.check_limits(48, 4)
    with pytest.raises(ConfigError, match="32 edges, the program holds 8"):
        net.check_limits(8, 4)


def test_a_fabrics_relative_trace_is_read_from_the_descriptions_directory(tmp_path):
    """NetCfg.topology parses the fabric with the description file's directory as base_dir,
    like the description's other files (before: the working directory, and load failed)."""
    import json
    import shutil

    from mpsched.fabric.files import parse_fabric
    from mpsched.fabric.netdesc import describe
    from mpsched.proc.layout import REPO_ROOT

    trace = REPO_ROOT / "scenarios" / "traces" / "capacity-p1.csv"
    (tmp_path / "traces").mkdir()
    shutil.copy(trace, tmp_path / "traces" / "t.csv")

    def section(path: str) -> dict:
        return {"leaf_spine": {"leaves": 2, "spines": 2, "link": {"rate_mbps": 10},
                               "overrides": [{"link": "leaf1-spine2",
                                              "schedule": [{"trace": path}]}]}}

    absolute = section(str(tmp_path / "traces" / "t.csv"))
    data = describe(absolute, parse_fabric(absolute), lambda i: f"127.0.0.1:{i}").to_dict()
    data["fabric"] = section("traces/t.csv")
    (tmp_path / "net.json").write_text(json.dumps(data))
    net = NetCfg.load(tmp_path / "net.json")
    link = net.topology.link_by_name["leaf1-spine2"]
    assert link.params("leaf1", 3.5).rate_mbps == 2  # the trace's rate from 3 s
    with pytest.raises(ConfigError, match="no such file"):
        NetCfg.from_dict(data)  # no file, no base_dir: the working directory's


def test_the_plan_edges_of_the_benchmarks():
    """s1 with h1 behind port 1 at the given address, s2 without hosts, both with the paths:
    a valid two-edge network (the control and data-plane benchmarks' own)."""
    net = plan_edges("127.0.0.1:50001", (PathCfg(1, 2, 10.0), PathCfg(2, 3, None)))
    s1, s2 = net.switches
    assert (s1.name, s1.grpc_address, [h.name for h in s1.hosts]) == ("s1", "127.0.0.1:50001",
                                                                        ["h1"])
    assert (s2.name, s2.hosts, s1.subnets, s2.subnets) == (
        "s2", (), (ap.subnet(ap.SENDER_EDGE),), (ap.subnet(ap.RECEIVER_EDGE),))
    assert [p.id for p in s1.paths] == [p.id for p in s2.paths] == [1, 2]
    assert net.peer_edge(s1) == s2.device_id == 2
