"""southbound/agent_telemetry.py: the agent's counter polls hand what its switch counts to
its `AgentHost`, and its prober asks the host which probes go."""

from __future__ import annotations

import pytest

from mpsched.controller.southbound import agent_telemetry
from mpsched.controller.southbound.agent import AgentSettings, SwitchAgent
from mpsched.controller.southbound.counters import PATH_COUNTERS
from mpsched.controller.telemetry.estimators import TelemetryConfig
from mpsched.p4rt.pipeline import (
    COUNTER_DROP_REASON,
    COUNTER_PORT_TX,
    COUNTER_TX,
)
from tests.unit.controller.helpers import pipeline
from tests.unit.controller.southbound.test_agent import Counters, Host, agent


def test_a_poll_hands_every_path_of_the_switch_towards_its_peer_to_the_host():
    host = Host()
    agent(host)._poll(Counters())
    ((switch, samples),) = host.samples
    assert switch == "s1" and sorted(samples) == [1, 2]
    assert (samples[1].tx_packets, samples[2].tx_packets) == (5, 0)


def test_polls_turn_the_port_counter_into_each_ports_rate(monkeypatch):
    a, client = agent(Host()), Counters()
    # each poll: its one Read's start and end (timed at its middle)
    clock = iter([100.1, 100.1, 101.3, 101.3])
    monkeypatch.setattr(agent_telemetry.time, "time", lambda: next(clock))
    a._poll(client)
    assert a.ports.rates == {}  # one read: no rate yet
    a._poll(client)
    # 125,000 bytes between reads 1.2 s apart
    assert a.ports.rates[2].mbps == pytest.approx(1.0 / 1.2)


def test_the_prober_asks_the_host_with_the_switchs_name_when_probing_idle_paths_only():
    host = Host()
    wanted = agent(host)._probe_wanted()
    assert wanted is not None and (wanted(2, 1), wanted(2, 2)) == (True, False)
    assert host.asked == [("s1", 2, 1), ("s1", 2, 2)]
    every = TelemetryConfig(probe_idle_only=False)
    assert agent(Host(), telemetry=every)._probe_wanted() is None


def test_a_fabrics_edge_asks_the_host_for_its_idle_pairs_even_probing_every_path():
    """--probe-every-path keeps busy paths probed, but an idle pair's probes still go only
    every idle interval: the host decides (TelemetryIntake.probe_wanted)."""
    from tests.unit.controller.fakes import fabric

    net, every = fabric(), TelemetryConfig(probe_idle_only=False)
    leaf1 = SwitchAgent(net.switch("leaf1"), net, pipeline(), "x.json", Host(),
                        AgentSettings(telemetry=every))
    assert leaf1._probe_wanted() is not None
    off = TelemetryConfig(probe_idle_only=False, idle_probe_interval_s=None)
    leaf1 = SwitchAgent(net.switch("leaf1"), net, pipeline(), "x.json", Host(),
                        AgentSettings(telemetry=off))
    assert leaf1._probe_wanted() is None


def test_a_fabrics_edge_serves_every_peer_and_a_transit_switch_none():
    from tests.unit.controller.fakes import fabric

    net = fabric()
    leaf2 = SwitchAgent(net.switch("leaf2"), net, pipeline(), "x.json", Host())
    assert leaf2.peers == [1, 3] and leaf2.path_ids == [1, 2]
    # every id the program has (a watched path may take a spare one); the prober probes
    # those the routing has installed (probe_installed)
    assert leaf2.probe_targets() == [(e, p) for e in (1, 3) for p in range(1, 5)]
    installed = leaf2._probe_installed()
    assert installed is not None and installed(1, 2) and not installed(1, 3)
    host = Host()
    spine = SwitchAgent(net.switch("spine1"), net, pipeline(), "x.json", host,
                        forwarding=lambda: ["entries"])
    assert spine.peers == [] and spine.path_ids == [] and spine.probe_targets() == []
    assert spine._start_prober(Counters()) is None and spine.prober is None  # nothing to probe
    assert spine.forwarding_entries() == ["entries"]
    client = Counters()
    spine._poll(client)
    assert host.samples == []  # no path counters on a transit switch: not even read
    assert client.read == [COUNTER_DROP_REASON, COUNTER_PORT_TX]


def test_an_edge_reads_its_path_counters_when_due_and_the_others_every_poll(monkeypatch):
    host = Host()
    # a budget that one edge pair's counters exceed every second: every 3 s or so
    a = agent(host, counter_budget_cps=1.0)
    cells = sum(pipeline().p4info.counter_size(c) for c in PATH_COUNTERS)
    assert a.path_poll_interval == 2 * cells  # two edges
    clock = iter([0.0, 0.0, 1.0, 2.0 * cells, 2.0 * cells])
    monkeypatch.setattr(agent_telemetry.time, "monotonic", lambda: next(clock))
    client = Counters()
    a._poll(client)  # due at once
    a._poll(client)  # 1 s later: drops and ports only
    a._poll(client)  # an interval after the first: due again
    assert client.read.count(COUNTER_TX) == 2 and client.read.count(COUNTER_PORT_TX) == 3
    assert len(host.samples) == 2
    assert client.reads == 3  # one Read a poll, the path counters' with the others
