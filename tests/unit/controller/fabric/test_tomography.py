"""Failed links and switches inferred from the paths' liveness
(src/mpsched/controller/fabric/tomography.py)."""

from __future__ import annotations

import pytest

from mpsched.controller.fabric.tomography import (
    Observation,
    failed_hops,
    infer,
    path_hops,
    watch_paths,
)
from mpsched.fabric.paths import Failures, reroute, route
from tests.unit.fabric.helpers import build, example, leaf_spine

LS = build(leaf_spine(4, 2))
WAN = build(example("wan"))


def observe(fabric, routing, dead_links=(), dead_switches=(), one_way=None):
    """Every current path of `routing`, dead where it crosses a failed link or switch (or,
    with `one_way` = (a, b), where it crosses that link from a to b only)."""
    out = []
    for paths in routing.current.values():
        for p in paths.values():
            hops = path_hops(p)
            dead = bool(set(p.links) & set(dead_links) or set(p.switches) & set(dead_switches))
            dead = dead or (one_way is not None and one_way in hops)
            out.append(Observation(hops, not dead))
    return out


@pytest.mark.parametrize("fabric", [LS, WAN], ids=["leaf-spine", "wan"])
def test_every_single_link_failure_is_singled_out(fabric):
    routing = route(fabric)
    for link in fabric.links:
        got = infer(fabric, observe(fabric, routing, [link.name]))
        assert got.links == {link.name}, link.name
        assert got.hops == {(link.a, link.b), (link.b, link.a)}
        assert got.switches == frozenset()


def test_a_spine_whose_links_all_fail_is_a_failed_switch():
    got = infer(LS, observe(LS, route(LS), dead_switches=["spine2"]))
    assert got.links == {f"leaf{i}-spine2" for i in range(1, 5)}
    assert got.switches == {"spine2"}


def test_one_direction_failing_fails_the_link():
    got = infer(LS, observe(LS, route(LS), one_way=("leaf1", "spine2")))
    assert got.hops == {("leaf1", "spine2")} and got.links == {"leaf1-spine2"}


def test_two_links_failing_at_once_are_both_singled_out():
    got = infer(LS, observe(LS, route(LS), ["leaf1-spine2", "leaf2-spine2"]))
    assert got.links == {"leaf1-spine2", "leaf2-spine2"}


def test_ambiguous_evidence_infers_nothing():
    """Two leaves: spine2's two links are crossed by the same dead paths only, so either
    (or spine2 itself) could be at fault."""
    fabric = build(leaf_spine(2, 2))
    assert infer(fabric, observe(fabric, route(fabric), ["leaf1-spine2"])).links == frozenset()


def test_a_dead_path_that_live_paths_fully_vouch_for_infers_nothing():
    """A dead path whose every hop a live path crossed (e.g. a congested pair's reports
    lost) is no evidence against any link."""
    routing = route(LS)
    obs = observe(LS, routing)
    lone = path_hops(routing.current[(1, 2)][2])
    assert failed_hops([*obs, Observation(lone, False)]) == frozenset()


def test_a_failure_holds_until_a_live_path_crosses_it_again():
    routing = route(LS)
    failed = failed_hops(observe(LS, routing, ["leaf1-spine2"]))
    rerouted = reroute(LS, routing, Failures(frozenset({"leaf1-spine2"})))
    # after the re-route no current path crosses it: nothing vouches for it, it stays failed
    assert failed_hops(observe(LS, rerouted), failed) == failed
    # a watched path across it delivers again: both directions' evidence
    back = [Observation(path_hops(routing.current[(1, 2)][2]), True),
            Observation(path_hops(routing.current[(2, 1)][2]), True)]
    assert failed_hops([*observe(LS, rerouted), *back], failed) == frozenset()
    # one direction back only: the other stays failed, and so does the link
    half = failed_hops([*observe(LS, rerouted), back[0]], failed)
    assert half == {("spine2", "leaf1")}


def test_a_dead_path_explained_by_a_held_failure_implicates_nothing_else():
    held = frozenset({("leaf1", "spine2")})
    path = path_hops(route(LS).current[(1, 2)][2])  # leaf1 -> spine2 -> leaf2
    assert failed_hops([Observation(path, False)], held) == held


def test_watch_paths_keep_a_cut_path_under_its_own_id_when_free():
    routing = route(LS)
    cut = frozenset({"leaf1-spine2"})
    rerouted = reroute(LS, routing, Failures(cut))
    got = watch_paths(routing.baseline, rerouted.current, cut, max_paths=4)
    assert sorted(got) == [(1, 2), (1, 3), (1, 4), (2, 1), (3, 1), (4, 1)]
    assert got[(1, 3)] == {2: routing.baseline[(1, 3)][2]}


def test_watch_paths_take_a_spare_id_where_the_reroute_reused_the_cut_one():
    """fabric-wan.yaml: den-kc down, sea -> chi's path 2 gets a replacement under id 2; the
    cut path is watched under the program's spare id 4 (k = 3)."""
    routing = route(WAN)
    cut = frozenset({"den-kc"})
    rerouted = reroute(WAN, routing, Failures(cut))
    got = watch_paths(routing.baseline, rerouted.current, cut, max_paths=4)
    assert got[(1, 3)] == {4: routing.baseline[(1, 3)][2]}
    assert "den-kc" in got[(1, 3)][4].links
    assert watch_paths(routing.baseline, rerouted.current, cut, max_paths=3) == {}
    assert watch_paths(routing.baseline, rerouted.current, frozenset(), 4) == {}
