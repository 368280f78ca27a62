"""Port numbering and the next-hop table (src/mpsched/fabric/ports.py)."""

from __future__ import annotations

from mpsched.fabric.paths import Failures, reroute, route
from mpsched.fabric.ports import next_hops, port_map
from tests.unit.fabric.helpers import build, example, leaf_spine


def test_host_ports_first_then_neighbours_by_name():
    ports = port_map(build(leaf_spine(2, 3, hosts_per_leaf=2)))
    assert ports["leaf1"].hosts == (1, 2)
    assert ports["leaf1"].neighbours == {"spine1": 3, "spine2": 4, "spine3": 5}
    assert ports["spine2"].hosts == ()
    assert ports["spine2"].neighbours == {"leaf1": 1, "leaf2": 2}
    wan = port_map(build(example("wan")))
    assert wan["kc"].neighbours == {"atl": 1, "chi": 2, "den": 3, "nyc": 4, "sea": 5}
    assert wan["chi"].neighbours == {"atl": 3, "kc": 4}  # after its 2 hosts


def test_leaf_spine_next_hops():
    fabric = build(leaf_spine(4, 2))
    hops = next_hops(fabric, route(fabric).current)
    assert hops["leaf1"][(1, 2, 1)] == 2 and hops["leaf1"][(1, 2, 2)] == 3  # to spine1, 2
    assert hops["spine1"][(1, 2, 1)] == 2 and hops["spine1"][(3, 4, 1)] == 4  # to leaf2, 4
    assert len(hops["leaf1"]) == 3 * 2  # its own pairs only: the destination has no entry
    assert len(hops["spine2"]) == 12 and (1, 2, 1) not in hops["spine2"]


def walk(fabric, hops, src: int, dst: int, pid: int) -> list[str]:
    """The switches a packet of (src, dst, pid) visits by following the table's ports."""
    ports = port_map(fabric)
    here, seen = fabric.edge(src).name, [fabric.edge(src).name]
    while here != fabric.edge(dst).name:
        port = hops[here][(src, dst, pid)]
        here = next(n for n, p in ports[here].neighbours.items() if p == port)
        seen.append(here)
        assert len(seen) <= len(fabric.switches)
    return seen


def test_following_the_ports_walks_every_path_also_after_a_failure():
    fabric = build(example("wan"))
    intact = route(fabric)
    failed = reroute(fabric, intact, Failures(frozenset({"den-kc"})))
    for table in (intact.current, failed.current):
        hops = next_hops(fabric, table)
        for (src, dst), paths in table.items():
            for pid, path in paths.items():
                assert walk(fabric, hops, src, dst, pid) == list(path.switches)
