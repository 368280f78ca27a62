"""telemetry/ports.py: port rates from successive counter reads, a link's load per direction
from its ends' ports."""

from __future__ import annotations

import pytest

from mpsched.controller.telemetry.ports import PortMeter, PortRate, link_loads
from mpsched.fabric.ports import port_map
from mpsched.p4rt.client import CounterValue
from tests.unit.controller.fakes import fabric


def test_a_meter_gives_rates_from_its_second_read_on():
    meter = PortMeter()
    assert meter.update(10.0, {1: CounterValue(10, 1000)}) == {}
    rates = meter.update(12.0, {1: CounterValue(30, 251_000), 2: CounterValue(1, 64)})
    assert rates == {1: PortRate(mbps=1.0, pps=10.0)}  # port 2 has no earlier read
    assert meter.rates == rates


def test_a_counter_that_went_back_reads_as_rate_zero_and_a_stalled_clock_keeps_the_rates():
    meter = PortMeter()
    meter.update(1.0, {1: CounterValue(100, 100_000)})
    assert meter.update(2.0, {1: CounterValue(3, 300)}) == {1: PortRate(0.0, 0.0)}
    assert meter.update(2.0, {1: CounterValue(9, 900)}) == {1: PortRate(0.0, 0.0)}


def test_a_links_forward_direction_is_its_first_switchs_port_towards_the_second():
    net = fabric()
    fab = net.topology
    assert fab is not None
    ports = port_map(fab)
    link = fab.link_by_name["leaf1-spine1"]
    out = ports["leaf1"].neighbours["spine1"]
    back = ports["spine1"].neighbours["leaf1"]
    rates = {"leaf1": {out: PortRate(5.0, 1.0)}, "spine1": {back: PortRate(0.5, 1.0)}}
    forward, reverse = link_loads(fab, ports, rates)[link.name]
    assert (forward.src, forward.dst, forward.port, forward.mbps) == ("leaf1", "spine1", out, 5.0)
    assert (reverse.src, reverse.dst, reverse.port, reverse.mbps) == ("spine1", "leaf1", back, 0.5)
    assert forward.rate_mbps == 10  # fakes.LEAF_SPINE's links
    assert forward.utilisation == pytest.approx(0.5)
    other = link_loads(fab, ports, rates)["leaf2-spine1"][0]
    assert other.mbps is None and other.utilisation is None  # never read
