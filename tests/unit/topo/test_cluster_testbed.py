"""What the cluster testbed decides before any server is reached
(src/mpsched/topo/cluster_testbed.py):
where each node runs, which nodes get a probe port, the parameters of remote nodes; bringing
it up over two servers is tests/integration/test_cluster.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from mpsched.lab.scenario_cluster import ClusterSpec, Server
from mpsched.topo.cluster_testbed import ClusterFabricTestbed, placement
from mpsched.topo.fabric_testbed import FabricSpec
from tests.unit.fabric.helpers import leaf_spine

SERVERS = (Server("localhost"), Server("rack2", "10.9.0.2"))


def spec(leaves: int = 2, spines: int = 2, **extra) -> FabricSpec:
    return FabricSpec(leaf_spine(leaves, spines, **extra), backend="auto")


def test_switchbin_fills_even_bins_in_the_fabrics_order() -> None:
    cluster = ClusterSpec(SERVERS, placement="switchbin")
    where = placement(spec(3, 2).plan, cluster)
    # switches: leaf1..3 then spine1..2; 5 over 2 servers: 3 then 2
    assert [where[s] for s in ("leaf1", "leaf2", "leaf3", "spine1", "spine2")] == [
        "localhost", "localhost", "localhost", "rack2", "rack2"]
    assert where["h3_1"] == "localhost"


def test_roundrobin_with_overrides_hosts_and_emulators_follow() -> None:
    fabric = spec(2, 2, hosts_per_leaf=2)
    cluster = ClusterSpec(SERVERS, placement="roundrobin",
                          nodes={"h1_2": "rack2", "leaf2-spine1": "localhost"})
    where = placement(fabric.plan, cluster)
    assert [where[s] for s in ("leaf1", "leaf2", "spine1", "spine2")] == [
        "localhost", "rack2", "localhost", "rack2"]
    assert (where["h1_1"], where["h1_2"], where["h2_1"], where["h2_2"]) == (
        "localhost", "rack2", "rack2", "rack2")
    emulator = {link.name: link.emulator for link in fabric.plan.links}
    assert where[emulator["leaf1-spine2"]] == "localhost"  # beside its first switch
    assert where[emulator["leaf2-spine2"]] == "rack2"
    assert where[emulator["leaf2-spine1"]] == "localhost"  # overridden by the link's name
    assert set(where) == ({s.name for s in fabric.plan.switches}
                          | {h.name for h in fabric.plan.hosts} | set(emulator.values()))


def test_the_testbed_places_nodes_and_probes_only_beside_the_controller(
        tmp_path: Path) -> None:
    (tmp_path / "ssh.conf").write_text("")
    cluster = ClusterSpec(SERVERS, user="lab", ssh_config=tmp_path / "ssh.conf",
                          placement="roundrobin")
    bed = ClusterFabricTestbed(spec(), cluster)
    assert bed.backend == "linkem"
    assert bed.server_ip == {"localhost": "127.0.0.1", "rack2": "10.9.0.2"}
    assert bed.node_params("leaf2") == {
        "server": "rack2", "serverIP": "10.9.0.2", "user": "lab",
        "ssh_options": ("-F", str(tmp_path / "ssh.conf"))}
    assert bed.probes_beside("leaf1") and not bed.probes_beside("leaf2")
    assert bed.servers_of()["rack2"][:2] == ["leaf2", "spine2"]


def test_with_tls_every_switch_serves_it_and_the_controller_gets_the_ca(
        tmp_path: Path) -> None:
    from mpsched.proc.bmv2 import ServerTls

    cluster = ClusterSpec(SERVERS, tls=tmp_path)
    bed = ClusterFabricTestbed(spec(), cluster)
    assert bed.node_params("spine2")["tls"] == ServerTls(
        tmp_path / "spine2.pem", tmp_path / "spine2.key", tmp_path / "ca.pem", client_auth=True)
    assert "tls" not in bed.node_params("h1_1")
    assert bed.description_extra() == {"tls": {
        "ca_cert": str(tmp_path / "ca.pem"), "cert": str(tmp_path / "controller.pem"),
        "key": str(tmp_path / "controller.key")}}
    assert ClusterFabricTestbed(spec(), ClusterSpec(SERVERS)).description_extra() is None


def test_netem_cannot_be_a_remote_node() -> None:
    with pytest.raises(ValueError, match="linkem"):
        ClusterFabricTestbed(FabricSpec(leaf_spine(2, 1), backend="netem"),
                             ClusterSpec(SERVERS))
