"""telemetry/ports.py: port rates from successive counter reads, a link's load per direction
from its ends' ports."""

from __future__ import annotations

import pytest

from mpsched.controller.telemetry.ports import (
    DirectionLoad,
    PortMeter,
    PortRate,
    link_loads,
    read_at,
)
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


def test_utilisation_is_at_most_one_while_the_measured_rate_stays():
    """A 10 Mbit/s link whose sender filled its 100-packet queue within a 1 s poll: the port
    sent 11.2 Mbit/s, the link carried 10 (at most its rate): 100 %, not 112 %."""
    load = DirectionLoad("leaf1", "spine1", 3, rate_mbps=10.0, mbps=11.2)
    assert load.utilisation == 1.0 and load.mbps == 11.2
    assert DirectionLoad("a", "b", 1, 10.0, 9.5).utilisation == pytest.approx(0.95)
    assert DirectionLoad("a", "b", 1, None, 9.5).utilisation is None
    assert DirectionLoad("a", "b", 1, 10.0, None).utilisation is None


def test_a_read_is_timed_at_its_middle_so_slow_earlier_reads_do_not_inflate_the_rate():
    """Two polls 1 s apart whose port reads came 0.05 s and 0.25 s after the polls began (the
    other counters' reads took longer the second time): timed at the poll's start, 10 Mbit/s
    sent in 1.2 s read as 12 Mbit/s; timed at the read, as 10."""
    clock_values = iter([10.05, 10.05, 11.25, 11.25])
    meter = PortMeter()
    meter.update(*read_at(lambda: {1: CounterValue(0, 0)}, clock=lambda: next(clock_values)))
    rates = meter.update(*read_at(lambda: {1: CounterValue(1000, 1_500_000)},
                                  clock=lambda: next(clock_values)))
    assert rates[1].mbps == pytest.approx(10.0)
    at, value = read_at(lambda: "v", clock=iter([1.0, 1.5]).__next__)
    assert (at, value) == (1.25, "v")
