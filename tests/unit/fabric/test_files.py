"""The fabric section: leaf-spine and graph normalise to one Fabric; bad topologies are
refused naming the field (src/mpsched/fabric/files.py, model.py)."""

from __future__ import annotations

import copy
import re

import pytest
import yaml

from mpsched import addressing as ap
from mpsched.fabric.model import MAX_EDGES, MAX_LINKS, MAX_TRANSIT, FabricError
from mpsched.proc.layout import REPO_ROOT
from tests.unit.fabric.helpers import build, example, leaf_spine


def test_leaf_spine_normalises():
    fabric = build(leaf_spine(4, 2, hosts_per_leaf=3))
    assert fabric.kind == "leaf_spine" and fabric.paths_per_pair == 2
    assert [(s.name, s.role, s.edge_id, s.hosts) for s in fabric.switches] == [
        ("leaf1", "edge", 1, 3), ("leaf2", "edge", 2, 3), ("leaf3", "edge", 3, 3),
        ("leaf4", "edge", 4, 3), ("spine1", "transit", 0, 0), ("spine2", "transit", 0, 0)]
    assert [e.subnets for e in fabric.edges] == [(f"10.0.{k}.0/24",) for k in range(1, 5)]
    assert [link.name for link in fabric.links][:3] == ["leaf1-spine1", "leaf1-spine2",
                                                         "leaf2-spine1"]
    assert len(fabric.links) == 8
    link = fabric.link_by_name["leaf3-spine2"]
    assert (link.a, link.b) == ("leaf3", "spine2")
    assert link.params("leaf3").rate_mbps == link.params("spine2").rate_mbps == 10


def test_leaf_spine_overrides_replace_the_defaults_keys():
    fabric = build(leaf_spine(overrides=[
        {"link": "leaf1-spine2", "rate_mbps": 2.5, "reverse": {"delay_ms": 7}},
        {"link": "leaf2-spine1", "schedule": [{"down_s": 20, "up_s": 40}]},
    ]))
    slow = fabric.link_by_name["leaf1-spine2"]
    assert slow.params("leaf1").rate_mbps == 2.5 and slow.params("leaf1").delay_ms == 1
    assert slow.params("spine2").delay_ms == 7 and slow.params("spine2").rate_mbps == 2.5
    cut = fabric.link_by_name["leaf2-spine1"]
    assert [cut.up_at(t) for t in (19.9, 20, 39.9, 40)] == [True, False, False, True]
    assert fabric.link_by_name["leaf1-spine1"].params("leaf1").rate_mbps == 10


def test_graph_normalises_the_wan_example():
    fabric = build(example("wan"))
    assert [(s.name, s.edge_id) for s in fabric.edges] == [
        ("sea", 1), ("lax", 2), ("chi", 3), ("nyc", 4)]
    assert [s.name for s in fabric.switches[4:]] == ["atl", "dal", "den", "kc"]  # by name
    assert fabric.edge(4).subnets == ("10.0.4.0/24", "10.1.4.0/24")  # given in the file
    assert fabric.edge(3).subnets == (ap.subnet(3),) and fabric.edge(3).hosts == 2
    assert fabric.paths_per_pair == 3
    link = fabric.link_by_name["sea-kc"]  # the default name: a-b
    assert (link.params("sea").rate_mbps, link.params("kc").delay_ms) == (2.5, 12)
    assert fabric.link_by_name["den-dal"].params("den").rate_mbps == 5  # from `link`
    assert not fabric.link_by_name["den-kc"].up_at(20)


def graph(*links: dict, switches: list | None = None, **extra) -> dict:
    switches = switches or [{"name": "a", "role": "edge"}, {"name": "b", "role": "edge"},
                            {"name": "t", "role": "transit"}]
    return {"graph": {"switches": switches, "link": {"rate_mbps": 10},
                      "links": list(links) or [{"a": "a", "b": "t"}, {"a": "t", "b": "b"}],
                      **extra}}


EDGE_C = {"name": "c", "role": "edge"}


@pytest.mark.parametrize(
    ("section", "field", "message"),
    [
        (graph({"a": "a", "b": "x"}), "graph.links[0].b", "no switch named 'x'"),
        (graph({"a": ["a"], "b": "t"}), "graph.links[0].a", "no switch named ['a']"),
        (graph({"b": "t"}), "graph.links[0].a", "no switch named None"),
        (graph({"a": "a", "b": "a"}), "graph.links[0].b", "a link from a to itself"),
        (graph({"a": "a", "b": "t"}, {"a": "t", "b": "b", "name": "a-t"}),
         "graph.links[1].name", "duplicate link name 'a-t' (also links[0])"),
        (graph({"a": "a", "b": "t"}, {"a": "t", "b": "a", "name": "x"}),
         "graph.links[1]", "a second link between t and a (also links[0])"),
        (graph(switches=[{"name": "a", "role": "edge"}, {"name": "a", "role": "transit"}]),
         "graph.switches[1].name", "duplicate switch name 'a' (also switches[0])"),
        (graph({"a": "a", "b": "t"}, {"a": "t", "b": "b"}, switches=[
            {"name": "a", "role": "edge"}, {"name": "b", "role": "edge"}, EDGE_C,
            {"name": "t", "role": "transit"}]),
         "graph.switches[2]", "edge c has no path to edge a"),
        (graph(switches=[{"name": "a", "role": "edge"}, {"name": "t", "role": "transit"}]),
         "graph.switches", "at least 2 edge switches, got 1"),
        (graph(switches=[{"name": "a-b", "role": "edge"}]), "graph.switches[0].name",
         "must be a letter then up to 9 letters"),
        (graph(switches=[{"name": "t", "role": "transit", "hosts": 2}]),
         "graph.switches[0].hosts", "only an edge switch has hosts"),
        (graph(switches=[{"name": "a", "role": "edge", "subnets": ["10.0.2.0/23"]},
                         {"name": "b", "role": "edge"}, {"name": "t", "role": "transit"}]),
         "graph.switches[1].subnets[0]", "overlaps 10.0.2.0/23 of edge 1"),
        (graph(switches=[{"name": "a", "role": "edge", "subnets": ["10.0.1.1/24"]}]),
         "graph.switches[0].subnets[0]", "must be an IPv4 network"),
        (graph({"a": "a", "b": "t", "delay_ms": -1}, {"a": "t", "b": "b"}),
         "graph.links[0].delay_ms", "must be in 0..1000"),
        (graph({"a": "a", "b": "t", "colour": 1}, {"a": "t", "b": "b"}),
         "graph.links[0].colour", "unknown key"),
        (graph(paths_per_pair=5), "graph.paths_per_pair",
         "must be an integer 1..4 (the paths per pair the compiled program holds, its "
         "MAX_PATHS), got 5"),
        (leaf_spine(17, 2), "leaf_spine.leaves", f"at most {MAX_EDGES} edges (leaves), got 17"),
        (leaf_spine(4, 5), "leaf_spine.spines", "at most 4 paths per pair (one per spine)"),
        (leaf_spine(overrides=[{"link": "leaf9-spine1"}]), "leaf_spine.overrides[0].link",
         "no such link (links are leaf<i>-spine<j>, i 1..4, j 1..2), got 'leaf9-spine1'"),
        (leaf_spine(overrides=[{"link": {"a": 1}}]), "leaf_spine.overrides[0].link",
         "no such link"),
        (leaf_spine(overrides=["leaf1-spine1"]), "leaf_spine.overrides[0]", "must be an object"),
        (leaf_spine(overrides=[{"link": "leaf1-spine1"}, {"link": "leaf1-spine1"}]),
         "leaf_spine.overrides[1].link", "leaf1-spine1 is overridden twice"),
        (leaf_spine(overrides=[{"link": "leaf1-spine1", "rate_mbps": 0}]),
         "leaf_spine.overrides[0].rate_mbps", "must be in 0.1..1000"),
        (leaf_spine(overrides=[{"link": "leaf1-spine1", "schedule": [{"down_s": -1}]}]),
         "leaf_spine.overrides[0].schedule[0].down_s", "must be in 0..3600"),
        ({"leaf_spine": {"leaves": 2, "spines": 1, "link": {"delay_ms": 1}}},
         "leaf_spine.link.rate_mbps", "missing"),
        ({**leaf_spine(), **graph()}, "graph", "give either leaf_spine or graph, not both"),
        ({"mesh": {}}, "mesh", "unknown key (allowed: graph, leaf_spine)"),
        # the testbed's own node names (src/mpsched/fabric/names.py) and the bounds (model.py)
        (graph(switches=[{"name": "h1_1", "role": "edge"}]), "graph.switches[0].name",
         "'h1_1' is the testbed's name of a host (h<edge>_<k>): give the switch another name"),
        (graph(switches=[{"name": "lk12", "role": "transit"}]), "graph.switches[0].name",
         "'lk12' is the testbed's name of a link emulator (lk<i>)"),
        (graph({"a": "a", "b": "t", "name": "lk1"}, {"a": "t", "b": "b"}), "graph.links[0].name",
         "'lk1' is the testbed's name of a link emulator"),
        (graph({"a": "a", "b": "t", "name": "t"}, {"a": "t", "b": "b"}), "graph.links[0].name",
         "'t' is a switch's name"),
        (graph({"a": "a", "b": "t", "name": "../x"}, {"a": "t", "b": "b"}),
         "graph.links[0].name", "must be a letter then up to 20 letters, digits, _ or -"),
        (graph(switches=[{"name": "a", "role": "edge"}, {"name": "b", "role": "edge"},
                         *({"name": f"t{i}", "role": "transit"} for i in range(65))]),
         "graph.switches", f"at most {MAX_TRANSIT} transit switches"),
        (graph(*[{"a": "a", "b": "t"}] * (MAX_LINKS + 1)), "graph.links",
         f"at most {MAX_LINKS} links"),
    ],
)
def test_bad_topologies_are_refused_naming_the_field(section, field, message):
    with pytest.raises(FabricError) as err:
        build(section)
    assert err.value.field == field, err.value
    assert message in err.value.message, err.value
    assert err.value.source == "f.yaml"


def test_limits_are_parameters_of_the_validator():
    section = graph({"a": "a", "b": "t"}, {"a": "t", "b": "b"}, {"a": "c", "b": "t"},
                    switches=[{"name": "a", "role": "edge"}, {"name": "b", "role": "edge"},
                              EDGE_C, {"name": "t", "role": "transit"}])
    assert len(build(section).edges) == 3
    with pytest.raises(FabricError, match="at most 2 edge switches"):
        build(section, max_edges=2)
    assert build(leaf_spine(4, 8), max_paths=8).paths_per_pair == 8
    with pytest.raises(FabricError, match="at most 1 paths per pair"):
        build(leaf_spine(4, 2), max_paths=1)
    assert build(graph(), max_paths=8).paths_per_pair == 8  # default k: the limit


def test_graph_links_may_come_in_any_order_and_the_input_is_not_changed():
    section = example("wan")
    kept = copy.deepcopy(section)
    build(section)
    assert section == kept


def test_the_docs_examples_load():
    """docs/fabric.md's YAML blocks of a fabric section are valid fabrics."""
    text = (REPO_ROOT / "docs" / "fabric.md").read_text()
    blocks = re.findall(r"```yaml\n(fabric:.*?)```", text, re.S)
    assert len(blocks) == 2
    kinds = [build(yaml.safe_load(block)["fabric"]).kind for block in blocks]
    assert kinds == ["leaf_spine", "graph"]


def test_the_default_limits_are_the_compiled_programs(monkeypatch, tmp_path):
    """Without limits given, a fabric is checked against the compiled program's
    (Pipeline.max_edges, max_paths of build/p4), else the default build's: sizes.p4's
    MAX_EDGES and defines.p4's MAX_PATHS (before: 16 edges, which no default build holds)."""
    from mpsched.fabric import files
    from mpsched.fabric.model import MAX_PATHS
    from mpsched.p4rt.p4info import P4Info
    from mpsched.p4rt.pipeline import Pipeline
    from mpsched.proc.layout import p4_artifacts

    sizes = (REPO_ROOT / "p4src" / "include" / "sizes.p4").read_text()
    defines = (REPO_ROOT / "p4src" / "include" / "defines.p4").read_text()
    assert re.search(r"#define MAX_EDGES (\d+)", sizes).group(1) == str(MAX_EDGES)
    assert re.search(r"#define MAX_PATHS (\d+)", defines).group(1) == str(MAX_PATHS)
    built = p4_artifacts().p4info
    if built.is_file():
        pipeline = Pipeline(P4Info.from_file(built))
        assert files.program_limits() == (pipeline.max_edges, pipeline.max_paths)
    monkeypatch.setenv("MPSCHED_BUILD_DIR", str(tmp_path))  # nothing built there
    assert files.program_limits() == (MAX_EDGES, MAX_PATHS)
    with pytest.raises(FabricError, match=f"at most {MAX_EDGES} edges .leaves., got 9"):
        build(leaf_spine(9, 2))
    assert len(build(leaf_spine(9, 2), max_edges=9).edges) == 9
