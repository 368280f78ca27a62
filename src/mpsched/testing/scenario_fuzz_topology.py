"""The corpus's fabric, trace, network description and fabric section cases
(src/mpsched/testing/scenario_fuzz_cases.py describes every group)."""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from typing import Any

from mpsched import addressing as ap
from mpsched.testing.scenario_fuzz_cases import (
    FABRIC,
    MIB,
    SCENARIO,
    Case,
    changed,
    dump,
    scenario_case,
    setting,
)


def graph_case(name: str, edit: Callable[[dict], Any], expect: str) -> Case:
    return Case("fabric", name, "f.yaml",
                dump(changed(FABRIC, lambda d: edit(d["fabric"]["graph"]))), expect)


def _chain(n: int) -> Callable[[dict], None]:
    def edit(graph: dict) -> None:
        names = [f"c{i}" for i in range(n)]
        graph["switches"][2:] = [{"name": x, "role": "transit"} for x in names]
        graph["links"] = [{"a": "a", "b": names[0]}, {"a": names[-1], "b": "b"}]
        graph["links"] += [{"a": x, "b": y} for x, y in itertools.pairwise(names)]

    return edit


def _mesh(nodes: int) -> Callable[[dict], None]:
    def edit(graph: dict) -> None:
        names = ["a", "b", *(f"m{i}" for i in range(nodes - 2))]
        graph["switches"][2:] = [{"name": x, "role": "transit"} for x in names[2:]]
        graph["links"] = [{"a": x, "b": y} for i, x in enumerate(names) for y in names[i + 1:]]

    return edit


def _ladder(rungs: int) -> Callable[[dict], None]:
    def edit(graph: dict) -> None:
        up, down = [f"u{i}" for i in range(rungs)], [f"d{i}" for i in range(rungs)]
        graph["switches"][2:] = [{"name": x, "role": "transit"} for x in up + down]
        graph["links"] = [{"a": "a", "b": up[0]}, {"a": "b", "b": down[-1]}]
        graph["links"] += [{"a": u, "b": d} for u, d in zip(up, down, strict=True)]
        graph["links"] += [{"a": x, "b": y} for rail in (up, down)
                           for x, y in itertools.pairwise(rail)]

    return edit


def fabric_cases() -> list[Case]:
    sw = "fabric.graph.switches[2].name"
    link = "fabric.graph.links[0].name"

    def rename(name: Any) -> Callable[[dict], None]:
        def edit(graph: dict) -> None:
            graph["switches"][2]["name"] = name
            for entry in graph["links"]:
                entry["b"] = name

        return edit

    def leaf_spine(**keys: Any) -> Callable[[dict], None]:
        return setting(("fabric",), {"leaf_spine": {"leaves": 2, "spines": 1, "link":
                                                    {"rate_mbps": 10}, **keys}})

    nine_edges = [{"name": f"e{i}", "role": "edge"} for i in range(9)]
    return [
        graph_case("switch-h1_1", rename("h1_1"), f"{sw}: 'h1_1' is the testbed's name of a host"),
        graph_case("switch-lk3", rename("lk3"), f"{sw}: 'lk3' is the testbed's name of a link"),
        graph_case("switch-h12_3", rename("h12_3"), f"{sw}: 'h12_3' is the testbed's"),
        graph_case("switch-traversal", rename("../x"), f"{sw}: must be a letter"),
        graph_case("switch-11-chars", rename("abcdefghijk"), f"{sw}: must be a letter"),
        graph_case("switch-dash", rename("a-b"), f"{sw}: must be a letter"),
        graph_case("switch-int", rename(7), f"{sw}: must be a letter"),
        graph_case("link-lk1", setting(("links", 0, "name"), "lk1"), f"{link}: 'lk1' is the"),
        graph_case("link-traversal", setting(("links", 0, "name"), "../../x"), link),
        graph_case("link-newline", setting(("links", 0, "name"), "a\nb"), link),
        graph_case("link-switch-name", setting(("links", 0, "name"), "t"),
                   f"{link}: 't' is a switch's name"),
        graph_case("chain-3000", _chain(3000), "fabric.graph.switches: at most 64 transit"),
        graph_case("mesh-120", _mesh(120), "fabric.graph.switches: at most 64 transit"),
        graph_case("mesh-66-2145-links", _mesh(66), "fabric.graph.links: at most 2040 links"),
        graph_case("ladder-800", _ladder(400), "fabric.graph.switches: at most 64 transit"),
        scenario_case("fabric", "leaves-256", ("fabric",), {"leaf_spine": {"leaves": 256,
                      "spines": 1, "link": {"rate_mbps": 1}}}, "fabric.leaf_spine.leaves", FABRIC),
        Case("fabric", "spines-9", "f.yaml", dump(changed(FABRIC, leaf_spine(spines=9))),
             "fabric.leaf_spine.spines"),
        Case("fabric", "hosts-9", "f.yaml", dump(changed(FABRIC, leaf_spine(hosts_per_leaf=9))),
             "fabric.leaf_spine.hosts_per_leaf"),
        Case("fabric", "override-unknown", "f.yaml", dump(changed(FABRIC, leaf_spine(
            overrides=[{"link": "leaf9-spine9"}]))), "fabric.leaf_spine.overrides[0].link"),
        graph_case("paths-per-pair-100", setting(("paths_per_pair",), 100),
                   "fabric.graph.paths_per_pair: must be an integer 1.."),
        graph_case("transit-hosts", setting(("switches", 2, "hosts"), 2),
                   "fabric.graph.switches[2].hosts"),
        graph_case("link-unknown-end", setting(("links", 0, "b"), "zz"),
                   "fabric.graph.links[0].b: no switch named"),
        graph_case("self-loop", setting(("links", 0, "b"), "a"), "fabric.graph.links[0].b"),
        graph_case("second-link", lambda g: g["links"].append({"a": "t", "b": "a"}),
                   "fabric.graph.links[2]: a second link"),
        graph_case("disconnected", lambda g: g["links"].pop(), "fabric.graph.switches[1]"),
        graph_case("overlapping-subnets", lambda g: [g["switches"][i].update(
            subnets=["10.9.0.0/16"]) for i in (0, 1)], "fabric.graph.switches[1].subnets[0]"),
        graph_case("bad-subnet", setting(("switches", 0, "subnets"), ["10.0.0.0/33"]),
                   "fabric.graph.switches[0].subnets[0]"),
        graph_case("nine-edges", lambda g: g["switches"].extend(nine_edges),
                   "fabric.graph.switches: at most"),
        graph_case("link-rate-400-digits", setting(("links", 0, "rate_mbps"), int("9" * 400)),
                   "fabric.graph.links[0].rate_mbps"),
        graph_case("link-delay-inf", setting(("link", "delay_ms"), float("inf")),
                   "fabric.graph.links[0].delay_ms: must be a finite number"),
        graph_case("duplicate-switch", lambda g: g["switches"].append({"name": "t",
                   "role": "transit"}), "fabric.graph.switches[3].name: duplicate"),
    ]


def _traced(name: str, csv: bytes, expect: str, events: int = 1) -> Case:
    doc = changed(SCENARIO, setting(("paths", 0, "schedule"), [{"trace": "t.csv"}] * events))
    return Case("trace", name, "s.yaml", dump(doc), expect, extra={"t.csv": csv})


def trace_cases() -> list[Case]:
    where = "paths[0].schedule[0].trace"
    rows = b"".join(b"%d,10\n" % i for i in range(20_000))
    steps = b"".join(b"%d,10\n" % i for i in range(5_000))
    return [
        _traced("field-200kib", b"time_s,rate_mbps\n0," + b"9" * 200_000 + b"\n",
                f"{where}: "),
        _traced("field-100-chars", b"time_s,rate_mbps\n0," + b"1" * 100 + b"\n",
                "a field of 100 characters"),
        _traced("20000-rows", b"time_s,rate_mbps\n" + rows, "more than 10000 rows"),
        _traced("latin-1", b"time_s,rate_mbps\n0,1\xe9\n", "not UTF-8"),
        _traced("over-1mib", b"time_s,rate_mbps\n" + b"0,1" + b" " * MIB + b"\n",
                "larger than"),
        _traced("time-inf", b"time_s,rate_mbps\ninf,10\n", ":2:time_s: must be a time"),
        _traced("time-nan", b"time_s,rate_mbps\nnan,10\n", ":2:time_s"),
        _traced("rate-nan", b"time_s,rate_mbps\n0,nan\n", ":2:rate_mbps"),
        _traced("rate-1e400", b"time_s,rate_mbps\n0,1e400\n", ":2:rate_mbps"),
        _traced("extra-fields", b"time_s,rate_mbps\n0,10,3,4\n", "4 fields, the header has 2"),
        _traced("unknown-column", b"time_s,colour\n0,red\n", "unknown trace column"),
        _traced("nul", b"time_s,rate_mbps\n0,1\x000\n", ":2:rate_mbps"),
        _traced("no-header", b"", "trace needs a time_s column"),
        _traced("repeated-11-times", b"time_s,rate_mbps\n" + steps,
                "more than 50000 schedule steps", events=11),
        scenario_case("trace", "dev-zero", ("paths", 0, "schedule"), [{"trace": "/dev/zero"}],
                      f"{where}: no such file"),
    ]


def _switch(edge: int) -> dict:
    return {"name": f"s{edge}", "device_id": edge, "grpc_address": f"127.0.0.1:{50000 + edge}",
            "mac": ap.router_mac(edge), "subnets": [ap.subnet(edge)],
            "hosts": [{"name": f"h{edge}", "ip": ap.host_ip(edge), "mac": ap.host_mac(edge),
                       "port": 1}],
            "paths": [{"id": 1, "port": 2, "rate_mbps": 10}, {"id": 2, "port": 3}]}


DESCRIPTION: dict = {"switches": [_switch(1), _switch(2)]}


def fabric_description() -> dict:
    """The description the lab writes for FABRIC's fabric (mpsched.fabric.netdesc)."""
    from mpsched.fabric.files import parse_fabric
    from mpsched.fabric.netdesc import describe

    section = FABRIC["fabric"]
    fabric = parse_fabric(section)
    return describe(section, fabric, lambda i: f"127.0.0.1:{50000 + i}").to_dict()


def _described(name: str, doc: Any, expect: str) -> Case:
    text = doc if isinstance(doc, bytes) else json.dumps(doc).encode()
    return Case("description", name, "net.json", text, expect)


def description_cases() -> list[Case]:
    base = json.dumps(DESCRIPTION).encode()
    switch = ("switches", 0)
    fab = fabric_description()

    def edited(path: tuple, value: Any) -> dict:
        return changed(DESCRIPTION, setting(path, value))

    def fabric_graph(edit: Callable[[dict], Any]) -> dict:
        return changed(fab, lambda d: edit(d["fabric"]["graph"]))

    return [
        _described("nan", base.replace(b'"rate_mbps": 10', b'"rate_mbps": NaN'),
                   "NaN is not a JSON value"),
        _described("infinity", base.replace(b'"rate_mbps": 10', b'"rate_mbps": Infinity'),
                   "Infinity is not a JSON value"),
        _described("duplicate-key", base[:-1] + b', "switches": []}', "duplicate key 'switches'"),
        _described("depth-5000", b'{"fabric": ' + b"[" * 5000 + b"]" * 5000 + b"}",
                   "nested deeper"),
        _described("depth-40", b'{"fabric": ' + b"[" * 40 + b"]" * 40 + b"}", "nested deeper"),
        _described("rate-1e999", base.replace(b'"rate_mbps": 10', b'"rate_mbps": 1e999'),
                   "switches[0].paths[0].rate_mbps"),
        _described("device-5000-digits", base.replace(b'"device_id": 1', b'"device_id": '
                                                      + b"1" * 5000), "Exceeds the limit"),
        _described("device-1e30", edited((*switch, "device_id"), 10**30),
                   "switches[0].device_id: must be an integer"),
        _described("latin-1", base.replace(b'"s1"', b'"s\xe9"'), "not UTF-8"),
        _described("over-4mib", base + b" " * (4 * MIB), "larger than 4194304"),
        _described("no-switches", {"switches": []}, "switches: at least one"),
        _described("400-switches", {"switches": [_switch(1) | {"name": f"s{i}", "device_id": i,
                                                              "hosts": [], "subnets": []}
                                                 for i in range(1, 401)]},
                   "switches: at most 319"),
        _described("port-600", edited((*switch, "paths", 0, "port"), 600),
                   "switches[0].paths[0].port"),
        _described("grpc-junk", edited((*switch, "grpc_address"), "no port"),
                   "switches[0].grpc_address"),
        _described("tls-missing", DESCRIPTION | {"tls": {"ca_cert": "/nonexistent/ca.pem"}},
                   "tls.ca_cert: no such file"),
        _described("unknown-key", DESCRIPTION | {"colour": 1}, "colour: unknown key"),
        _described("a-list", [DESCRIPTION], "must be an object"),
        _described("trailing-garbage", base + b" x", "not JSON: Extra data"),
        _described("yaml-in-json", dump(DESCRIPTION), "not JSON"),
        _described("fabric-h1_1", fabric_graph(lambda g: g["switches"][2].update(name="h1_1")),
                   "fabric.graph.switches[2].name: 'h1_1' is the testbed's"),
        _described("fabric-leaves-300", changed(fab, setting(("fabric",), {"leaf_spine": {
            "leaves": 300, "spines": 2, "link": {"rate_mbps": 1}}})), "fabric.leaf_spine.leaves"),
        _described("fabric-chain-3000", fabric_graph(_chain(3000)),
                   "fabric.graph.switches: at most 64 transit"),
        _described("fabric-link-lk2", fabric_graph(lambda g: g["links"][1].update(name="lk2")),
                   "fabric.graph.links[1].name"),
    ]


def section_cases() -> list[Case]:
    graph = FABRIC["fabric"]
    return [
        Case("section", "switch-lk3", "g.yaml", dump(changed(graph, lambda d: d["graph"][
            "switches"][2].update(name="lk3"))), "graph.switches[2].name: 'lk3'"),
        Case("section", "duplicate-key", "g.yaml", dump(graph) + b"graph: {}\n",
             "duplicate key 'graph'"),
        Case("section", "both", "g.yaml", dump(graph | {"leaf_spine": {"leaves": 2, "spines": 1,
             "link": {"rate_mbps": 1}}}), "graph: give either"),
        Case("section", "ladder-800", "g.yaml", dump(changed(graph, lambda d: _ladder(400)(
            d["graph"]))), "graph.switches: at most 64 transit"),
    ]
