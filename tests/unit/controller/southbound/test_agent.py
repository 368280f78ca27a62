"""southbound/agent.py: the agent hands what its switch reports to its `AgentHost`."""

from __future__ import annotations

import pytest

from mpsched.controller.southbound.agent import AgentSettings, SwitchAgent
from mpsched.controller.southbound.counters import PATH_COUNTERS
from mpsched.controller.telemetry.estimators import PROBE_INTERVAL_S, TelemetryConfig
from mpsched.p4rt.client import CounterValue, P4RuntimeError
from mpsched.p4rt.pipeline import (
    COUNTER_DROP_REASON,
    COUNTER_PORT_TX,
    COUNTER_TX,
)
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
        self.read: list[str] = []  # the counters read, in order
        self.reads = 0  # Read requests

    def read_counters(self, names):
        self.reads += 1
        return {name: self.read_counter(name) for name in names}

    def read_counter(self, name):
        self.read.append(name)
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
    # each poll: its one Read's start and end (timed at its middle)
    clock = iter([100.1, 100.1, 101.3, 101.3])
    monkeypatch.setattr("mpsched.controller.southbound.agent.time.time", lambda: next(clock))
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
    monkeypatch.setattr("mpsched.controller.southbound.agent.time.monotonic", lambda: next(clock))
    client = Counters()
    a._poll(client)  # due at once
    a._poll(client)  # 1 s later: drops and ports only
    a._poll(client)  # an interval after the first: due again
    assert client.read.count(COUNTER_TX) == 2 and client.read.count(COUNTER_PORT_TX) == 3
    assert len(host.samples) == 2
    assert client.reads == 3  # one Read a poll, the path counters' with the others


def test_each_job_keeps_its_wait_in_the_queue_and_its_run():
    """A job submitted behind a slow one waited at least that one's run (`job_times`)."""
    import time

    class Serving(Counters):
        is_primary = True
        on_stream = None

        def read_digest_list(self, timeout):
            return None

    a = agent(Host())
    a.submit(lambda client: time.sleep(0.05))
    last = a.submit(lambda client: a._stopping.set())
    a._serve(Serving())
    assert last.done()
    first, second = a.job_times
    assert first.ran_s >= 0.05 and second.waited_s >= first.ran_s


def test_the_stream_wakes_the_agent_once_until_it_looked():
    a = agent(Host())
    a._wake()
    a._wake()  # already woken: nothing more queued
    assert a._jobs.qsize() == 1
    a._wake_pending = False  # the agent looked (_serve)
    a._wake()
    assert a._jobs.qsize() == 2
    # failing the pending jobs passes over the wake-ups
    a.submit(lambda client: None)
    future = a._jobs.queue[-1][1]
    a._fail_pending(P4RuntimeError("down"))
    assert a._jobs.empty() and isinstance(future.exception(), P4RuntimeError)
