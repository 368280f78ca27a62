"""Which testbed a scenario's run brings up (src/mpsched/lab/testbeds.py)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from mpsched import addressing as ap
from mpsched.lab.scenario import load
from mpsched.lab.testbeds import delivered_bytes, make_testbed
from mpsched.proc.layout import REPO_ROOT
from mpsched.topo import testbed
from mpsched.topo.fabric_testbed import FabricTestbed


def test_a_fabric_scenario_gets_the_fabric_testbed(tmp_path: Path) -> None:
    sc = load(REPO_ROOT / "scenarios/fabric/leaf-spine-4x2.yaml", backend="linkem", fabric=True)
    bed = make_testbed(sc, 7, tmp_path)
    assert isinstance(bed, FabricTestbed)
    assert (bed.spec.seed, bed.spec.log_dir, bed.backend) == (7, tmp_path, "linkem")
    assert bed.spec.model is sc.fabric and bed.spec.section == sc.fabric_section
    assert bed.netcfg_path == tmp_path / "netcfg.json"
    assert bed.hosts() == {1: ["h1_1"], 2: ["h2_1"], 3: ["h3_1"], 4: ["h4_1"]}
    assert bed.host_ip("h3_1") == "10.0.3.1"


def test_two_edges_get_the_testbed(tmp_path: Path) -> None:
    sc = load(REPO_ROOT / "scenarios/asymmetric.yaml", backend="linkem")
    bed = make_testbed(sc, 3, tmp_path)
    assert isinstance(bed, testbed.Testbed)
    assert bed.spec == dataclasses.replace(sc.topo, seed=3, log_dir=tmp_path)
    assert not bed.p4rt_plaintext


def test_plaintext_reaches_either_testbed(tmp_path: Path) -> None:
    for name in ("asymmetric.yaml", "fabric/leaf-spine-4x2.yaml"):
        sc = load(REPO_ROOT / "scenarios" / name, backend="linkem", fabric=True)
        bed = make_testbed(sc, 0, tmp_path, p4rt_plaintext=True)
        assert bed.p4rt_plaintext, name


def test_delivered_bytes_per_link_and_direction() -> None:
    stats = {"leaf1-spine1": {"ab": {"tx_bytes": 10, "rx": 1}, "ba": {"tx_bytes": 3}},
             "leaf1-spine2": {"ab": {}, "ba": {"tx_bytes": 5}}}
    assert delivered_bytes(stats) == {"leaf1-spine1:ab": 10, "leaf1-spine1:ba": 3,
                                      "leaf1-spine2:ab": 0, "leaf1-spine2:ba": 5}


def test_both_testbeds_name_their_hosts_by_edge(tmp_path: Path) -> None:
    sc = load(REPO_ROOT / "scenarios/bursty-cross.yaml", backend="linkem")
    bed = make_testbed(sc, 0, tmp_path)
    cross = [i for i, p in enumerate(sc.topo.paths, start=1) if p.cross_traffic]
    assert cross, "the scenario has a cross-traffic path"
    assert bed.hosts() == {1: ["h1", *(f"x{i}" for i in cross)],
                           2: ["h2", *(f"y{i}" for i in cross)]}
    assert bed.host_ip("h2") == ap.H2_IP
    assert bed.host_ip(f"y{cross[0]}") == ap.cross_host_ip(2, cross[0])


def test_an_mptcp_fabric_scenario_gives_every_host_its_subflows_addresses(tmp_path: Path) -> None:
    sc = load(REPO_ROOT / "scenarios/fabric-mptcp-steered.yaml", backend="linkem", fabric=True)
    bed = make_testbed(sc, 1, tmp_path)
    assert isinstance(bed, FabricTestbed)
    assert bed.spec.host_addresses == 2
    h1 = next(h for h in bed.plan.hosts if h.name == "h1_1")
    assert h1.extra_ips == (ap.fabric_host_ip(1, 1, 2),)
