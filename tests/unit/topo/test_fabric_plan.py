"""The fabric's Mininet layout (src/mpsched/topo/fabric_plan.py): names, ports, hosts, emulators."""

from __future__ import annotations

import pytest

from mpsched import addressing as ap
from mpsched.fabric.model import FabricError
from mpsched.fabric.netdesc import describe
from mpsched.fabric.ports import port_map
from mpsched.topo.fabric_plan import IFNAMSIZ, intf_name, plan
from tests.unit.fabric.helpers import build, example, leaf_spine


def _plan(section: dict):
    fabric = build(section)
    return fabric, plan(fabric, describe(section, fabric, lambda i: f"127.0.0.1:{9000 + i}"))


def test_interface_names_fit_linux() -> None:
    assert intf_name("leaf1", 3) == "leaf1-eth3"
    assert intf_name("abcdefghij", 3) == "abcdefghij-eth3"  # 15 characters
    assert intf_name("abcdefghij", 12) == "abcdefghij-p12"
    assert intf_name("abcdefghi", 12) == "abcdefghi-eth12"
    assert len(intf_name("abcdefghij", 510)) == IFNAMSIZ
    with pytest.raises(ValueError, match="at most 15"):
        intf_name("abcdefghijkl", 100)


def test_leaf_spine_layout() -> None:
    fabric, layout = _plan(leaf_spine(3, 2, hosts_per_leaf=2))
    assert [(s.name, s.device_id, s.edge_id) for s in layout.switches] == [
        ("leaf1", 1, 1), ("leaf2", 2, 2), ("leaf3", 3, 3), ("spine1", 4, 0), ("spine2", 5, 0)]
    h = layout.hosts[3]
    assert (h.name, h.edge_id, h.switch, h.port) == ("h2_2", 2, "leaf2", 2)
    assert (h.ip, h.mac, h.router_mac) == (ap.host_ip(2, 2), ap.host_mac(2, 2), ap.router_mac(2))
    assert layout.hosts_by_edge() == {1: ["h1_1", "h1_2"], 2: ["h2_1", "h2_2"],
                                      3: ["h3_1", "h3_2"]}
    # one emulator per link, in the fabric's order; ports as port_map numbers them
    assert [link.emulator for link in layout.links] == [f"lk{i}" for i in range(1, 7)]
    ports = port_map(fabric)
    for link in layout.links:
        assert link.a_port == ports[link.a].neighbours[link.b]
        assert link.b_port == ports[link.b].neighbours[link.a]
    l12 = next(link for link in layout.links if link.name == "leaf1-spine2")
    assert (l12.a, l12.a_port, l12.b, l12.b_port) == ("leaf1", 4, "spine2", 1)


def test_every_interface_distinct_and_short() -> None:
    _, layout = _plan(example("wan"))
    names = layout.interfaces()
    assert len(names) == len(set(names))
    assert max(len(n) for n in names) <= IFNAMSIZ
    # a switch port per host; per link two switch ports and two emulator ports
    assert len(names) == len(layout.hosts) + 4 * len(layout.links)


def test_long_names_and_many_ports() -> None:
    section = {"graph": {
        "link": {"rate_mbps": 10},
        "switches": [{"name": "edge_alpha", "role": "edge", "hosts": 8},
                     {"name": "edge_bravo", "role": "edge", "hosts": 8},
                     {"name": "transit_x1", "role": "transit"},
                     {"name": "transit_x2", "role": "transit"}],
        "links": [{"a": a, "b": b} for a in ("edge_alpha", "edge_bravo")
                  for b in ("transit_x1", "transit_x2")],
    }}
    _, layout = _plan(section)
    names = layout.interfaces()
    assert "edge_alpha-p10" in names and "edge_alpha-eth8" in names
    assert max(len(n) for n in names) <= IFNAMSIZ


@pytest.mark.parametrize("clash", ["lk1", "h1_1"])
def test_a_switch_named_like_another_node_is_refused(clash: str) -> None:
    section = {"graph": {
        "link": {"rate_mbps": 10},
        "switches": [{"name": "a", "role": "edge"}, {"name": "b", "role": "edge"},
                     {"name": clash, "role": "transit"}],
        "links": [{"a": "a", "b": clash}, {"a": "b", "b": clash}],
    }}
    # the validator refuses it before any layout (src/mpsched/fabric/names.py)
    with pytest.raises(FabricError, match=rf"graph\.switches\[2\]\.name: '{clash}' is the "
                       "testbed's name of a"):
        _plan(section)


def test_static_arp_gateway_and_same_edge_peers_at_the_router_mac() -> None:
    _, layout = _plan(leaf_spine(3, 2, hosts_per_leaf=3))
    h = layout.hosts[4]  # h2_2
    assert h.name == "h2_2"
    assert layout.arp_entries(h) == [(ap.gateway_ip(2), ap.router_mac(2)),
                                     (ap.host_ip(2, 1), ap.router_mac(2)),
                                     (ap.host_ip(2, 3), ap.router_mac(2))]


def test_a_hosts_further_addresses_are_extra_ips_of_the_same_host() -> None:
    section = leaf_spine(2, 2, hosts_per_leaf=2)
    fabric = build(section)
    desc = describe(section, fabric, lambda i: f"127.0.0.1:{9000 + i}", host_addresses=3)
    layout = plan(fabric, desc)
    assert [h.name for h in layout.hosts] == ["h1_1", "h1_2", "h2_1", "h2_2"]
    h = layout.hosts[1]
    assert (h.ip, h.extra_ips) == (ap.host_ip(1, 2), (ap.host_ip(1, 10), ap.host_ip(1, 18)))
    assert layout.hosts[0].extra_ips == ("10.0.1.9", "10.0.1.17")
    # the switch routes every address to the host's port and MAC
    leaf1 = desc.switch("leaf1")
    assert [(x.ip, x.port, x.mac) for x in leaf1.hosts if x.name == "h1_2"] == [
        (ip, 2, ap.host_mac(1, 2)) for ip in ("10.0.1.2", "10.0.1.10", "10.0.1.18")]
