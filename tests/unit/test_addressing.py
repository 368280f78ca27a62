"""src/mpsched/addressing.py: the testbed's addressing plan, against the values it documents and
against the network description the testbed writes from it."""

from __future__ import annotations

import ipaddress

import pytest

from mpsched import addressing as ap
from mpsched.netcfg import NetCfg
from tests.netdesc import edge_switch, host


def test_the_plan():
    assert ap.EDGES == (1, 2) and (ap.SENDER_EDGE, ap.RECEIVER_EDGE) == (1, 2)
    assert (ap.H1_IP, ap.H2_IP) == ("10.0.1.1", "10.0.2.1")
    assert ap.subnet(1) == "10.0.1.0/24" and ap.subnet(2) == "10.0.2.0/24"
    assert ap.gateway_ip(2) == "10.0.2.254"
    assert ap.host_ip(1, 3) == "10.0.1.3"
    assert ap.cross_host_ip(2, 1) == "10.0.2.11"
    assert ap.host_prefix(2, 7) == "10.0.2.7/32"
    assert ap.host_prefix(2, 128, 25) == "10.0.2.128/25"
    assert (ap.H1_MAC, ap.S1_MAC, ap.S2_MAC) == (
        "00:00:0a:00:01:01", "00:00:0a:00:01:fe", "00:00:0a:00:02:fe")
    assert ap.cross_host_mac(1, 2) == "00:00:0a:00:01:0c"
    assert ap.host_if_mac(2, 1) == "00:00:0a:00:02:41"


@pytest.mark.parametrize("edge", [1, 2])
def test_every_address_lies_in_its_edge_subnet(edge):
    net = ipaddress.IPv4Network(ap.subnet(edge))
    for ip in (ap.host_ip(edge), ap.host_ip(edge, 3), ap.gateway_ip(edge),
               ap.cross_host_ip(edge, 4)):
        assert ipaddress.IPv4Address(ip) in net, ip
        assert ap.in_subnet(ip, edge) and not ap.in_subnet(ip, 3 - edge)


def test_in_subnet_does_not_match_a_longer_third_octet():
    assert not ap.in_subnet("10.0.12.1", 1) and not ap.in_subnet("10.0.1", 1)


def test_host_prefix_refuses_host_bits_and_bad_octets():
    with pytest.raises(ValueError):
        ap.host_prefix(2, 3, 24)
    with pytest.raises(ValueError):
        ap.host_ip(1, 256)
    with pytest.raises(ValueError):
        ap.mac(256, 1)


def test_macs_are_distinct_per_role():
    macs = [ap.host_mac(e) for e in ap.EDGES] + [ap.router_mac(e) for e in ap.EDGES]
    macs += [ap.cross_host_mac(e, i) for e in ap.EDGES for i in (1, 2, 3, 4)]
    macs += [ap.host_if_mac(e, j) for e in ap.EDGES for j in (1, 2, 3)]
    assert len(set(macs)) == len(macs)


def test_a_description_of_the_plan_is_valid():
    """The test helper's switches (tests/netdesc.py) load; s1 routes s2's subnet."""
    net = NetCfg.from_dict({"switches": [
        edge_switch(1, paths=[{"id": 1, "port": 2}], with_host=True),
        edge_switch(2, paths=[{"id": 1, "port": 2}], with_host=True),
    ]})
    assert net.remote_subnets(net.switches[0]) == [ap.subnet(2)]
    assert net.switches[1].hosts[0].ip == ap.H2_IP == host(2)["ip"]


def test_a_fabric_hosts_further_addresses_lie_above_every_primary_one() -> None:
    assert ap.fabric_host_ip(3, 1) == ap.host_ip(3, 1) == "10.0.3.1"
    assert ap.fabric_host_ip(3, 1, 2) == "10.0.3.9"
    assert ap.fabric_host_ip(3, 8, 4) == "10.0.3.32"
    every = {ap.fabric_host_ip(1, k, n) for k in range(1, 9) for n in range(1, 5)}
    assert len(every) == 32 and ap.gateway_ip(1) not in every
    for bad in ((0, 1), (9, 1), (1, 0), (1, 5)):
        with pytest.raises(ValueError):
            ap.fabric_host_ip(1, *bad)
