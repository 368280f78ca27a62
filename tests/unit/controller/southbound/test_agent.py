"""southbound/agent.py: the agent's session: its settings, a backup's promotion, its job
queue and the stream's wake-ups (its polls and probes: test_agent_telemetry.py)."""

from __future__ import annotations

from mpsched.controller.southbound.agent import AgentSettings, SwitchAgent
from mpsched.controller.telemetry.estimators import PROBE_INTERVAL_S
from mpsched.p4rt.client import CounterValue, P4RuntimeError
from mpsched.p4rt.pipeline import (
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
