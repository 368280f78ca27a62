"""southbound/agent.py: the agent hands what its switch reports to its `AgentHost`."""

from __future__ import annotations

import pytest

from mpsched.controller.southbound.agent import AgentSettings, SwitchAgent
from mpsched.controller.telemetry.estimators import PROBE_INTERVAL_S, TelemetryConfig
from mpsched.p4rt.client import CounterValue
from mpsched.p4rt.pipeline import COUNTER_PORT_TX, COUNTER_TX
from tests.unit.controller.fakes import two_edges
from tests.unit.controller.helpers import pipeline


class Host:
    """An AgentHost that records what it is handed."""

    def __init__(self) -> None:
        self.samples: list = []
        self.promoted: list[str] = []
        self.asked: list[tuple[str, int, int]] = []

    def sched_entries(self, switch):
        return []

    def on_sample(self, switch, samples):
        self.samples.append((switch, samples))

    def on_report(self, report):
        pass

    def on_rtt(self, report):
        pass

    def on_mptcp(self, report):
        pass

    def on_promoted(self, switch):
        self.promoted.append(switch)

    def probe_wanted(self, switch, dst_edge, path_id):
        self.asked.append((switch, dst_edge, path_id))
        return path_id == 1

    def probe_installed(self, switch, dst_edge, path_id):
        return path_id <= 2


class Counters:
    """A client whose tx counter says 5 packets on path 1 towards s1's peer (edge 2) and 7 on
    path 2 towards another edge (3); every other counter is empty."""

    def __init__(self) -> None:
        self.port_bytes = 0  # port 2's transmitted bytes: 125,000 more at every read

    def read_counter(self, name):
        if name == COUNTER_PORT_TX:
            self.port_bytes += 125_000
            return {2: CounterValue(self.port_bytes // 100, self.port_bytes)}
        cells = {pipeline().edge_path_index(2, 1): CounterValue(5, 500),
                 pipeline().edge_path_index(3, 2): CounterValue(7, 700)}
        return cells if name == COUNTER_TX else {}


def agent(host: Host, **settings) -> SwitchAgent:
    net = two_edges()
    return SwitchAgent(net.switches[0], net, pipeline(), "x.json", host, AgentSettings(**settings))


def test_settings_default_to_one_second_polls_and_the_default_probes():
    a = agent(Host())
    assert (a.poll_interval, a.retry_interval, a.election_id) == (1.0, 1.0, (0, 1))
    assert a.probe_interval == PROBE_INTERVAL_S


def test_a_poll_hands_every_path_of_the_switch_towards_its_peer_to_the_host():
    host = Host()
    agent(host)._poll(Counters())
    ((switch, samples),) = host.samples
    assert switch == "s1" and sorted(samples) == [1, 2]
    assert (samples[1].tx_packets, samples[2].tx_packets) == (5, 0)


def test_polls_turn_the_port_counter_into_each_ports_rate(monkeypatch):
    a, client = agent(Host()), Counters()
    # each poll: its start, then the port counter read's start and end (timed at its middle)
    clock = iter([100.0, 100.1, 100.1, 101.0, 101.3, 101.3])
    monkeypatch.setattr("mpsched.controller.southbound.agent.time.time", lambda: next(clock))
    a._poll(client)
    assert a.ports.rates == {}  # one read: no rate yet
    a._poll(client)
    # 125,000 bytes between reads 1.2 s apart (the polls began 1 s apart)
    assert a.ports.rates[2].mbps == pytest.approx(1.0 / 1.2)


def test_the_prober_asks_the_host_with_the_switchs_name_when_probing_idle_paths_only():
    host = Host()
    wanted = agent(host)._probe_wanted()
    assert wanted is not None and (wanted(2, 1), wanted(2, 2)) == (True, False)
    assert host.asked == [("s1", 2, 1), ("s1", 2, 2)]
    every = TelemetryConfig(probe_idle_only=False)
    assert agent(Host(), telemetry=every)._probe_wanted() is None


class Arbitration:
    """A backup's client whose arbitration makes it primary at once."""

    is_primary = True
    highest_election_id = (0, 9)
    election_id = (0, 10)

    def wait_arbitration(self, timeout):
        return True

    def become_primary_over(self, election_id):
        pass


def test_a_promoted_backup_tells_the_host_and_takes_the_new_election_id():
    host = Host()
    a = agent(host)
    assert a._hold_as_backup(Arbitration()) is True
    assert host.promoted == ["s1"] and a.election_id == (0, 10)


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
    assert spine.forwarding_entries() == ["entries"]
    spine._poll(Counters())
    assert host.samples == []  # no path counters on a transit switch
