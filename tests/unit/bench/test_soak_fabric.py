"""The fabric soak's driver (src/mpsched/bench/soak_fabric.py) without a testbed: which fabric it
runs, what its events do, how it watches the restarted switch, what it reports."""

from __future__ import annotations

import math
from types import SimpleNamespace

import pytest

from mpsched.bench.soak_fabric import FabricOptions, FabricSoak, RestartWatch, load_fabric
from mpsched.bench.soak_plan import Event
from mpsched.lab.scenario import ScenarioError
from mpsched.proc.layout import REPO_ROOT


def test_the_fabric_is_a_shape_the_default_file_or_a_file() -> None:
    sc = load_fabric("3x1")
    assert sc.fabric is not None
    assert [s.name for s in sc.fabric.switches] == ["leaf1", "leaf2", "leaf3", "spine1"]
    assert sc.name == "fabric-leaf-spine-3x1" and sc.fabric_workload  # the file's traffic
    assert load_fabric("1").fabric.spines() == ["spine1", "spine2"]
    wan = load_fabric(str(REPO_ROOT / "scenarios" / "fabric-wan.yaml"))
    assert wan.fabric is not None and wan.fabric.kind == "graph"
    with pytest.raises(ValueError, match="LEAVESxSPINES"):
        load_fabric("1x2")
    with pytest.raises(ScenarioError):  # not a fabric
        load_fabric(str(REPO_ROOT / "scenarios" / "asymmetric.yaml"))


class FakeRest:
    def __init__(self, switches: list[dict] | None = None) -> None:
        self.puts: list[tuple[str, dict]] = []
        self.switches = switches or []

    def put(self, path: str, body: dict) -> dict:
        self.puts.append((path, body))
        return {}

    def get(self, path: str) -> list[dict]:
        assert path == "/switches"
        return self.switches


def _soak(tmp_path, **kw) -> FabricSoak:
    return FabricSoak(load_fabric("2x2"), tmp_path, FabricOptions(minutes=5, **kw))


def test_the_restart_defaults_to_the_first_spine_and_must_exist(tmp_path) -> None:
    soak = _soak(tmp_path)
    assert soak.restart == "spine1"
    assert Event(120.0, "restart", "spine1") in soak.events
    with pytest.raises(ValueError, match="spine9"):
        _soak(tmp_path, restart="spine9")
    assert all(e.kind != "restart" for e in _soak(tmp_path, restart_at_s=None).events)


def test_events_put_policies_and_link_states_and_set_linkem(tmp_path) -> None:
    soak = _soak(tmp_path)
    rest = FakeRest()
    sets: list[tuple] = []
    soak.bed = SimpleNamespace(set_link=lambda *a: sets.append(a))
    soak._act(Event(0, "policy"), 0, rest)
    soak._act(Event(0, "admin_down", "leaf1-spine2"), 0, rest)
    soak._act(Event(0, "admin_up", "leaf1-spine2"), 0, rest)
    assert rest.puts[0][0] == "/classes/0/policy" and "name" in rest.puts[0][1]
    assert rest.puts[1:] == [("/links/leaf1-spine2/admin", {"state": "down"}),
                             ("/links/leaf1-spine2/admin", {"state": "up"})]
    soak._act(Event(0, "linkem_down", "leaf2-spine1"), 0, rest)
    assert [(name, d, p.up, p.rate_mbps) for name, d, p in sets] == [
        ("leaf2-spine1", "ab", False, 2.5), ("leaf2-spine1", "ba", False, 2.5)]
    soak._act(Event(0, "linkem_up", "leaf2-spine1"), 0, rest)
    assert [p.up for _, _, p in sets[2:]] == [True, True]


def test_a_refused_rest_call_is_counted_not_fatal(tmp_path) -> None:
    import requests

    class Refusing(FakeRest):
        def put(self, path, body):
            raise requests.HTTPError("503")

    soak = _soak(tmp_path)
    soak._act(Event(0, "policy"), 0, Refusing())
    assert soak.rest_errors == 1


def _stats(n: int) -> dict:
    return {name: {"ab": {"tx_bytes": n}, "ba": {"tx_bytes": n}}
            for name in ("leaf1-spine1", "leaf2-spine1")}


def test_the_restart_watch_waits_for_a_new_programming_then_traffic() -> None:
    watch = RestartWatch("spine1", wall=1000.0, links=["leaf1-spine1", "leaf2-spine1"])
    old = FakeRest([{"name": "spine1", "state": "ready", "programmed": {"at": 10.0}}])
    watch.check(old, _stats(5))  # programmed before the restart: not yet
    assert math.isnan(watch.reprogrammed_s)
    down = FakeRest([{"name": "spine1", "state": "down", "programmed": None}])
    watch.check(down, _stats(5))
    assert math.isnan(watch.reprogrammed_s)
    anew = FakeRest([{"name": "spine1", "state": "ready", "programmed": {"at": 1001.0}}])
    watch.check(anew, _stats(5))
    assert watch.reprogrammed_s > 0 and not watch.done()
    stats = _stats(5)
    stats["leaf2-spine1"]["ba"]["tx_bytes"] = 9
    watch.check(anew, stats)  # one direction of one link only
    assert not watch.done()
    watch.check(anew, _stats(6))
    assert watch.done() and watch.traffic_s >= watch.reprogrammed_s


def test_the_report_fails_a_restart_never_reprogrammed(tmp_path, capsys) -> None:
    soak = _soak(tmp_path)
    soak.watch = RestartWatch("spine1", 0.0, [])
    assert soak.report() is False
    out = capsys.readouterr().out
    assert "soak_restart_reprogrammed_s=nan" in out and "soak_rest_errors=0" in out
    soak.watch.reprogrammed_s = 1.5
    assert soak.report() is True
    assert _soak(tmp_path, restart_at_s=None).report() is True
