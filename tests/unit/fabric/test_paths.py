"""Paths per ordered pair of edges, and their numbering across failures and returns
(src/mpsched/fabric/paths.py)."""

from __future__ import annotations

import random

import pytest

from mpsched.fabric.paths import (
    Failures,
    Path,
    bottleneck_mbps,
    number,
    path_delay_ms,
    pick,
    reroute,
    route,
)
from tests.unit.fabric.helpers import build, example, leaf_spine


def names(table) -> dict:
    """{(src, dst): {id: "sw sw sw"}} of a routing table, for compact assertions."""
    return {pair: {i: " ".join(p.switches) for i, p in paths.items()}
            for pair, paths in table.items()}


def test_leaf_spine_4x2_has_12_pairs_of_2_paths_one_per_spine():
    fabric = build(leaf_spine(4, 2))
    table = route(fabric).current
    assert sorted(table) == [(a, b) for a in range(1, 5) for b in range(1, 5) if a != b]
    assert len(table) == 12
    for (src, dst), paths in table.items():
        assert {i: p.switches for i, p in paths.items()} == {
            1: (f"leaf{src}", "spine1", f"leaf{dst}"), 2: (f"leaf{src}", "spine2", f"leaf{dst}")}
        assert all(p.hops == 2 for p in paths.values())


def test_a_failed_spine_link_removes_exactly_its_paths_and_the_return_restores_them():
    fabric = build(leaf_spine(4, 2))
    intact = route(fabric)
    failed = reroute(fabric, intact, Failures(frozenset({"leaf1-spine2"})))
    for pair, paths in intact.current.items():
        through = {i for i, p in paths.items() if "leaf1-spine2" in p.links}
        assert through == ({2} if 1 in pair else set())
        assert failed.current[pair] == {i: p for i, p in paths.items() if i not in through}
    back = reroute(fabric, failed, Failures())
    assert back.current == intact.current


def test_a_failed_spine_takes_its_paths_and_no_detour_replaces_them():
    fabric = build(leaf_spine(3, 3))
    failed = reroute(fabric, route(fabric), Failures(switches=frozenset({"spine2"})))
    assert all(sorted(paths) == [1, 3] for paths in failed.current.values())


def test_wan_paths_have_2_to_4_hops_are_loop_free_and_the_first_is_shortest():
    fabric = build(example("wan"))
    table = route(fabric).current
    assert len(table) == 12
    hops = set()
    for paths in table.values():
        assert sorted(paths) == [1, 2, 3]
        for p in paths.values():
            assert len(set(p.switches)) == len(p.switches)  # loop-free
            assert len(set(p.links)) == p.hops
            hops.add(p.hops)
        assert paths[1].hops == min(p.hops for p in paths.values())
    assert hops == {2, 3, 4}
    assert names(table)[(1, 2)] == {1: "sea den lax", 2: "sea kc atl dal lax",
                                    3: "sea den dal lax"}


def test_the_wan_prefers_link_disjoint_paths():
    """sea -> lax: after sea-den-lax the 4-hop path that shares no link with it comes
    before the 3-hop one that shares sea-den."""
    fabric = build(example("wan"))
    paths = route(fabric).current[(1, 2)]
    assert not set(paths[1].links) & set(paths[2].links)
    assert set(paths[1].links) & set(paths[3].links) == {"sea-den"}
    assert path_delay_ms(fabric, paths[1]) == 11 and bottleneck_mbps(fabric, paths[2]) == 2.5


def test_wan_failure_keeps_unaffected_ids_and_the_return_restores_all():
    fabric = build(example("wan"))
    intact = route(fabric)
    failed = reroute(fabric, intact, Failures(frozenset({"den-kc"})))
    for pair, paths in intact.current.items():
        now = failed.current[pair]
        assert len(now) == 3
        for i, p in paths.items():
            if "den-kc" not in p.links:
                assert now[i] == p  # a surviving path keeps its id
            else:
                assert p not in now.values()
    assert names(failed.current)[(1, 3)] == {1: "sea kc chi", 2: "sea kc atl chi",
                                             3: "sea den dal atl chi"}
    back = reroute(fabric, failed, Failures())
    assert back.current == intact.current


def test_numbering_rules():
    a, b, c, d = (Path((x,), ()) for x in "abcd")
    # survivors keep their ids, a new path takes the lowest free id
    assert number([a, c, d], {1: a, 2: b, 3: c}, {}, 4) == {1: a, 2: d, 3: c}
    # a path picked again gets its remembered id back if free, before new ones take ids
    assert number([d, b, a], {1: a}, {b: 3, d: 3}, 4) == {1: a, 2: b, 3: d}
    assert number([c, b], {}, {b: 2, c: 2}, 3) == {1: b, 2: c}


def test_pick_prefers_fewest_shared_links_then_candidate_order():
    p1 = Path(("s", "x", "d"), ("s-x", "x-d"))
    p2 = Path(("s", "x", "y", "d"), ("s-x", "x-y", "y-d"))
    p3 = Path(("s", "z", "w", "d"), ("s-z", "z-w", "w-d"))
    p4 = Path(("s", "z", "d"), ("s-z", "z-d"))
    assert pick([p1, p2, p3, p4], [], 2) == [p1, p3]
    assert pick([p1, p2, p3, p4], [], 4) == [p1, p3, p2, p4]
    assert pick([p1, p2, p3], [p2], 2) == [p2, p3]  # kept paths come first


def shuffled(section: dict, seed: int) -> dict:
    """The same graph with its links and transit switches in another order (edge ids follow
    the edges' order, so that stays)."""
    rng = random.Random(seed)
    g = dict(section["graph"])
    edges = [s for s in g["switches"] if s["role"] == "edge"]
    transit = [s for s in g["switches"] if s["role"] != "edge"]
    rng.shuffle(transit)
    links = list(g["links"])
    rng.shuffle(links)
    mixed = edges + transit
    rng.shuffle(mixed)
    mixed.sort(key=lambda s: edges.index(s) if s in edges else -1)
    return {"graph": {**g, "switches": mixed, "links": links}}


@pytest.mark.parametrize("seed", range(5))
def test_paths_do_not_depend_on_the_order_of_the_files_lists(seed):
    wan = example("wan")
    expected = names(route(build(wan)).current)
    fabric = build(shuffled(wan, seed))
    assert names(route(fabric).current) == expected
    failures = Failures(frozenset({"den-kc", "sea-kc"}))
    assert (names(reroute(fabric, route(fabric), failures).current)
            == names(reroute(build(wan), route(build(wan)), failures).current))


def test_an_edge_cut_off_has_no_paths_until_it_returns():
    fabric = build(example("wan"))
    intact = route(fabric)
    cut = reroute(fabric, intact, Failures(frozenset({"sea-den", "sea-kc"})))
    assert all(cut.current[pair] == {} for pair in cut.current if 1 in pair)
    assert reroute(fabric, cut, Failures()).current == intact.current


def test_failures_at_a_time_come_from_the_schedules():
    fabric = build(example("wan"))
    assert Failures.at(fabric, 20) == Failures(frozenset({"den-kc"}))
    assert Failures.at(fabric, 30) == Failures()
    assert Failures.at(fabric, None, ["kc", "lax-dal"]) == Failures(
        frozenset({"lax-dal"}), frozenset({"kc"}))
