"""A fabric scenario's `cluster:` section (src/mpsched/lab/scenario_cluster.py): what it accepts,
and errors that name the key."""

from __future__ import annotations

from pathlib import Path

import pytest

from mpsched.lab.scenario import ScenarioError, parse
from mpsched.lab.scenario_cluster import ClusterSpec, Server
from tests.unit.fabric.helpers import leaf_spine


def doc(**cluster) -> dict:
    return {"name": "c", "duration_s": 5, "fabric": leaf_spine(2, 2, hosts_per_leaf=2),
            "cluster": cluster}


SERVERS = [{"name": "localhost"}, {"name": "rack2", "address": "10.9.0.2"}]


def test_a_cluster_section_becomes_its_spec(tmp_path: Path) -> None:
    (tmp_path / "ssh.conf").write_text("Host *\n")
    sc = parse(doc(servers=SERVERS, user="lab", ssh_config="ssh.conf", placement="roundrobin",
                   nodes={"h1_2": "rack2", "leaf1-spine2": "localhost", "spine1": "rack2"}),
               source=tmp_path / "s.yaml", fabric=True)
    assert sc.cluster == ClusterSpec(
        servers=(Server("localhost"), Server("rack2", "10.9.0.2")), user="lab",
        ssh_config=tmp_path / "ssh.conf", placement="roundrobin",
        nodes={"h1_2": "rack2", "leaf1-spine2": "localhost", "spine1": "rack2"})
    assert sc.cluster.server_names == ["localhost", "rack2"]


def test_defaults() -> None:
    spec = parse(doc(servers=SERVERS), fabric=True).cluster
    assert spec is not None
    assert (spec.user, spec.ssh_config, spec.placement, spec.nodes) == (
        None, None, "switchbin", {})
    assert parse({k: v for k, v in doc().items() if k != "cluster"},
                 fabric=True).cluster is None


@pytest.mark.parametrize(("cluster", "field", "words"), [
    ({}, "cluster.servers", "missing"),
    ({"servers": []}, "cluster.servers", "at least one server"),
    ({"servers": [{"name": "a"}, {"name": "a"}]}, "cluster.servers[1].name", "two servers"),
    ({"servers": [{"name": "a", "address": "rack"}]}, "cluster.servers[0].address", "IPv4"),
    ({"servers": [{"name": "a", "port": 22}]}, "cluster.servers[0].port", "unknown key"),
    ({"servers": SERVERS, "placement": "random"}, "cluster.placement", "switchbin"),
    ({"servers": SERVERS, "nodes": {"leaf1": "rack3"}}, "cluster.nodes.leaf1", "rack2"),
    ({"servers": SERVERS, "nodes": {"leaf9": "rack2"}}, "cluster.nodes.leaf9", "not a switch"),
    ({"servers": SERVERS, "nodes": {"h1_3": "rack2"}}, "cluster.nodes.h1_3", "host"),
    ({"servers": SERVERS, "ssh_config": "nowhere.conf"}, "cluster.ssh_config", "no such file"),
    ({"servers": SERVERS, "tunnel": "gre"}, "cluster.tunnel", "unknown key"),
])
def test_bad_sections_name_the_key(cluster: dict, field: str, words: str) -> None:
    with pytest.raises(ScenarioError) as err:
        parse(doc(**cluster), fabric=True)
    assert err.value.field == field
    assert words in err.value.message


def test_a_cluster_needs_a_fabric_and_linkem() -> None:
    two_edges = {"name": "t", "duration_s": 5, "paths": [{"rate_mbps": 10}],
                 "workload": [{"kind": "bulk"}], "cluster": {"servers": SERVERS}}
    with pytest.raises(ScenarioError) as err:
        parse(two_edges)
    assert err.value.field == "cluster" and "needs a fabric" in err.value.message
    with pytest.raises(ScenarioError) as err:
        parse({**doc(servers=SERVERS), "backend": "netem"}, fabric=True)
    assert err.value.field == "backend" and "linkem" in err.value.message


def test_tls_is_a_certs_directory_with_every_switch(tmp_path: Path) -> None:
    from mpsched import certs

    out = tmp_path / "lab-certs"
    switches = ["leaf1", "leaf2", "spine1"]  # spine2 has none
    assert certs.main(["--out", str(out), *(f"--switch={s}" for s in switches)]) == 0
    with pytest.raises(ScenarioError) as err:
        parse(doc(servers=SERVERS, tls="lab-certs"), source=tmp_path / "s.yaml", fabric=True)
    assert err.value.field == "cluster.tls" and "switch spine2" in err.value.message
    assert certs.main(["--out", str(out), *(f"--switch={s}" for s in [*switches, "spine2"])]) == 0
    sc = parse(doc(servers=SERVERS, tls="lab-certs"), source=tmp_path / "s.yaml", fabric=True)
    assert sc.cluster is not None and sc.cluster.tls == out
    with pytest.raises(ScenarioError) as err:
        parse(doc(servers=SERVERS, tls="."), source=tmp_path / "s.yaml", fabric=True)
    assert err.value.field == "cluster.tls" and "no ca.pem" in err.value.message
