"""southbound/pair_writes.py: one job per switch with entries, and the pairs both of whose
edges acknowledged their writes."""

from __future__ import annotations

from concurrent.futures import Future
from types import SimpleNamespace

from mpsched.controller.southbound.pair_writes import (
    acknowledged,
    failed_switches,
    pair_names,
    submit_entries,
)
from tests.unit.controller.fakes import fabric
from tests.unit.controller.helpers import pipeline


def done(error: Exception | None = None) -> Future:
    f: Future = Future()
    if error is None:
        f.set_result(None)
    else:
        f.set_exception(error)
    return f


class Agent:
    def __init__(self, name: str) -> None:
        self.sw = SimpleNamespace(name=name)
        self.jobs: list = []

    def submit(self, job) -> Future:
        self.jobs.append(job)
        return done()


def test_only_switches_with_entries_get_a_job():
    agents = [Agent("leaf1"), Agent("leaf2"), Agent("leaf3")]
    futures = submit_entries(agents, pipeline(), {"leaf1": ["e"], "leaf2": []})
    assert set(futures) == {"leaf1"}
    assert [len(a.jobs) for a in agents] == [1, 0, 0]


def test_a_pair_counts_as_written_only_if_neither_edge_failed(caplog):
    net = fabric()
    futures = {"leaf1": done(), "leaf3": done(RuntimeError("leaf3 is down"))}
    assert failed_switches(futures, 1.0) == ["leaf3"]
    written = acknowledged(net, [(1, 2), (1, 3), (2, 3)], futures, 1.0, "report intervals")
    assert written == {(1, 2)}  # leaf2 had nothing to write: nothing to fail
    assert "report intervals not written on leaf3" in caplog.text


def test_a_write_not_finished_in_time_counts_as_failed():
    assert failed_switches({"leaf1": Future()}, 0.01) == ["leaf1"]


def test_pairs_are_named_in_order_for_the_log():
    assert pair_names([(2, 4), (1, 3)]) == "1-3,2-4"
    assert pair_names([]) == "-"
