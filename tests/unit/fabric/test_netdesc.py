"""A fabric's network description (src/mpsched/fabric/netdesc.py) and what NetCfg checks and
answers for it (src/mpsched/netcfg.py)."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml

from mpsched import addressing as ap
from mpsched.fabric.files import parse_fabric
from mpsched.fabric.netdesc import describe, host_name
from mpsched.netcfg import ConfigError, NetCfg

ROOT = Path(__file__).resolve().parents[3]
SECTION = {
    "leaf_spine": {"leaves": 3, "spines": 2, "hosts_per_leaf": 2,
                   "link": {"rate_mbps": 10, "delay_ms": 1}},
}


def _net(section: dict = SECTION) -> NetCfg:
    return describe(section, parse_fabric(section), lambda i: f"127.0.0.1:{9558 + i}")


def test_every_switch_described_in_fabric_order() -> None:
    net = _net()
    assert [s.name for s in net.switches] == ["leaf1", "leaf2", "leaf3", "spine1", "spine2"]
    assert [s.device_id for s in net.switches] == [1, 2, 3, 4, 5]
    assert net.switches[3].grpc_address == "127.0.0.1:9562"
    leaf2 = net.switch("leaf2")
    assert leaf2.mac == ap.router_mac(2) and leaf2.subnets == (ap.subnet(2),)
    assert [(h.name, h.ip, h.port) for h in leaf2.hosts] == [
        (host_name(2, 1), ap.host_ip(2, 1), 1), (host_name(2, 2), ap.host_ip(2, 2), 2)]
    spine = net.switch("spine2")
    assert spine.hosts == () and spine.subnets == () and spine.mac == ap.transit_mac(2)


def test_edges_and_peers() -> None:
    net = _net()
    assert [net.edge_id(s) for s in net.switches] == [1, 2, 3, 0, 0]
    assert [s.name for s in net.edge_switches()] == ["leaf1", "leaf2", "leaf3"]
    assert net.peer_edges(net.switch("leaf2")) == [1, 3]
    assert net.peer_edges(net.switch("spine1")) == []
    assert not net.is_edge(net.switch("spine1"))
    assert net.edge_switch(3).name == "leaf3"
    assert net.subnets_of(1) == (ap.subnet(1),)
    assert net.path_ids() == [1, 2]
    with pytest.raises(ConfigError, match="many peers"):
        net.peer_edge(net.switch("leaf1"))


def test_round_trip_through_json() -> None:
    net = _net()
    again = NetCfg.from_dict(net.to_dict())
    assert again == net and again.topology == net.topology


def test_shipped_fabrics_describe() -> None:
    files = sorted((ROOT / "scenarios").glob("fabric*/*.yaml"))
    files += sorted((ROOT / "scenarios").glob("fabric-*.yaml"))
    assert len(files) >= 5
    for path in files:
        section = yaml.safe_load(path.read_text())["fabric"]
        net = _net(section)
        assert len(net.edge_switches()) == len(net.topology.edges)


@pytest.mark.parametrize(
    ("change", "field"),
    [
        (lambda d: d["switches"].pop(), "switches"),
        (lambda d: d["switches"][0].update(name="leaf9"), "switches[0].name"),
        (lambda d: d["switches"][1]["hosts"][1].update(port=5), "switches[1].hosts[1].port"),
        (lambda d: d["switches"][0].update(subnets=["10.9.0.0/24"]), "switches[0].subnets"),
        (lambda d: d["switches"][3].update(subnets=["10.9.0.0/24"]), "switches[3].hosts"),
        (lambda d: d["switches"][0].update(paths=[{"id": 1, "port": 3}]), "switches[0].paths"),
        (lambda d: d["fabric"]["leaf_spine"].update(spines=0), "fabric.leaf_spine.spines"),
        (lambda d: d["fabric"].update(graph={}), "fabric.graph.switches"),
    ],
)
def test_refused_naming_the_field(change, field: str) -> None:
    data = copy.deepcopy(_net().to_dict())
    change(data)
    with pytest.raises(ConfigError) as info:
        NetCfg.from_dict(data)
    assert info.value.field == field


def test_limits_of_the_program() -> None:
    net = _net()
    net.check_limits(max_edges=8, max_paths=4)
    with pytest.raises(ConfigError, match="3 edges, the program holds 2"):
        net.check_limits(max_edges=2, max_paths=4)
    with pytest.raises(ConfigError, match="2 paths per pair, the program holds 1"):
        net.check_limits(max_edges=8, max_paths=1)


def test_probe_interfaces_by_switch_name() -> None:
    net = describe(SECTION, parse_fabric(SECTION), lambda i: f"127.0.0.1:{9558 + i}",
                   probe_ifaces={"leaf2": "leaf2-prbc"})
    assert net.switch("leaf2").probe_iface == "leaf2-prbc"
    assert net.switch("leaf1").probe_iface is None


def test_a_graph_without_paths_per_pair_runs_with_the_programs_paths() -> None:
    """scenarios/fabric-wan.yaml without `paths_per_pair`: the scenario's fabric takes the
    compiled program's max_paths (4 here), and the network description the controller reads
    says so, so that the controller's fabric has the same paths and passes the program's
    limits (it defaulted to any build's 8 and was refused: "8 paths per pair, the program
    holds 4")."""
    from mpsched.lab.scenario import parse

    doc = yaml.safe_load((ROOT / "scenarios" / "fabric-wan.yaml").read_text())
    del doc["fabric"]["graph"]["paths_per_pair"]
    sc = parse(doc, fabric=True)
    assert sc.fabric is not None and sc.fabric_section is not None
    net = describe(sc.fabric_section, sc.fabric, lambda i: f"127.0.0.1:{9558 + i}")
    assert net.topology is not None
    assert net.topology.paths_per_pair == sc.fabric.paths_per_pair
    net.check_limits(max_edges=8, max_paths=sc.fabric.paths_per_pair)
    assert net.path_ids() == list(range(1, sc.fabric.paths_per_pair + 1))
    assert "paths_per_pair" not in doc["fabric"]["graph"]  # the scenario's own section kept


def test_a_hand_written_graph_over_the_programs_paths_names_the_field() -> None:
    section = {"graph": {"switches": [{"name": "a", "role": "edge"},
                                      {"name": "b", "role": "edge"}],
                         "link": {"rate_mbps": 10, "delay_ms": 1},
                         "links": [{"a": "a", "b": "b"}]}}
    described = describe(section, parse_fabric(section, max_paths=4), lambda i: f"x:{i}")
    raw = described.to_dict()
    raw["fabric"] = section  # as a hand-written description might have it
    net = NetCfg.from_dict(raw)
    with pytest.raises(ConfigError, match=r"paths_per_pair.*unset.*program holds 4"):
        net.check_limits(max_edges=8, max_paths=4)
