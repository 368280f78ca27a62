"""What a run reads while it runs and at its end (src/mpsched/lab/run_polls.py), against a
stand-in for the controller's REST API and the testbed's links."""

from __future__ import annotations

import json

import pytest
import requests

from mpsched.lab.run_polls import path_counters, poll, save_controller_views
from mpsched.lab.runner import RunRaw
from mpsched.lab.scenario import load, parse
from mpsched.proc.layout import REPO_ROOT
from tests.unit.lab.test_scenario import MINIMAL

PATHS = [{"id": 1, "by_switch": {"s1": {"tx_bytes": 1500}, "s2": {"tx_bytes": 7}}},
         {"id": "2", "by_switch": {}}]


class Rest:
    """GET answers by path; a path missing from `answers` fails as an unreachable
    controller would."""

    def __init__(self, answers):
        self.answers = answers
        self.asked = []

    def get(self, path, params=None):
        self.asked.append(path)
        if path not in self.answers:
            raise requests.ConnectionError(f"no answer for {path}")
        return self.answers[path]


class Bed:
    def __init__(self, stats):
        self.stats = stats

    def link_stats(self):
        if isinstance(self.stats, Exception):
            raise self.stats
        return self.stats


def raw(tmp_path, scenario=None, policy="ca"):
    return RunRaw(scenario or parse(MINIMAL), policy, 0, 1, tmp_path)


def test_path_counters_are_what_s1_sent():
    assert path_counters(PATHS) == {1: 1500, 2: 0}


def test_a_two_edge_poll_records_path_counters_and_delivered_bytes(tmp_path):
    r = raw(tmp_path)
    bed = Bed({1: {"ab": {"tx_bytes": 900}, "ba": {"tx_bytes": 3}}, 2: {}})
    assert poll(r, bed, Rest({"/paths": PATHS})) is None
    assert [c for _, c in r.path_counters] == [{1: 1500, 2: 0}]
    assert [d for _, d in r.link_tx] == [{1: 900, 2: 0}]
    assert poll(r, Bed(OSError("linkem gone")), Rest({"/paths": PATHS})) is None
    assert len(r.path_counters) == 2 and len(r.link_tx) == 1  # the links' sample skipped


def test_a_controller_that_does_not_answer_is_a_failure(tmp_path):
    r = raw(tmp_path)
    failure = poll(r, Bed({}), Rest({}))
    assert failure is not None and failure.startswith("controller REST: ")
    assert r.path_counters == [] and r.link_tx == []
    assert poll(r, Bed({}), None) is None and r.path_counters == []  # no controller: no poll


def test_a_fabric_poll_records_each_links_delivered_bytes(tmp_path):
    fabric = load(REPO_ROOT / "scenarios" / "fabric-leaf-spine.yaml", fabric=True)
    r = raw(tmp_path, fabric)
    bed = Bed({"leaf1-spine1": {"ab": {"tx_bytes": 10}, "ba": {"tx_bytes": 20}}})
    rest = Rest({"/switches": []})
    assert poll(r, bed, rest) is None and rest.asked == ["/switches"]
    assert [b for _, b in r.link_bytes] == [{"leaf1-spine1:ab": 10, "leaf1-spine1:ba": 20}]
    assert r.path_counters == []
    assert poll(r, bed, None) is None and len(r.link_bytes) == 2  # plain-ecmp: no controller
    assert poll(r, bed, Rest({})) is not None and len(r.link_bytes) == 2


@pytest.mark.parametrize(("policy", "files"), [
    ("ca", {"decisions.json", "switches.json"}),
    ("adaptive", {"decisions.json", "switches.json", "adaptive.json"}),
])
def test_the_controllers_views_are_saved(tmp_path, policy, files):
    rest = Rest({"/decisions": [{"t": 1}], "/switches": [{"name": "s1"}],
                 "/classes/0/adaptive": {"arm": "llhd"}})
    save_controller_views(rest, tmp_path, policy)
    assert {p.name for p in tmp_path.iterdir()} == files
    assert json.loads((tmp_path / "decisions.json").read_text()) == [{"t": 1}]


def test_no_decision_log_saves_nothing(tmp_path):
    save_controller_views(Rest({"/switches": []}), tmp_path, "adaptive")
    assert list(tmp_path.iterdir()) == []
