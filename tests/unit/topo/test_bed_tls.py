"""P4Runtime over TLS on the testbeds (src/mpsched/topo/bed.py): a CA made at start unless
`p4rt_plaintext`, a certificate per switch, the network description carrying the
controller's, all removed at stop; the cluster variant keeps its own (`cluster.tls`)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from mpsched.lab.scenario_cluster import ClusterSpec, Server
from mpsched.proc.labtls import TLS_DIR
from mpsched.topo import testbed
from mpsched.topo.__main__ import transport_line
from mpsched.topo.cluster_testbed import ClusterFabricTestbed
from mpsched.topo.fabric_testbed import FabricSpec, FabricTestbed
from tests.unit.fabric.helpers import leaf_spine


def test_the_fabric_testbed_serves_tls_and_describes_it(tmp_path: Path) -> None:
    bed = FabricTestbed(FabricSpec(leaf_spine(2, 1), backend="linkem", log_dir=tmp_path))
    assert bed.description_extra() is None  # nothing made before start
    bed.open_tls()
    assert bed.tls is not None and bed.tls.dir == tmp_path / TLS_DIR
    server = bed.switch_tls("leaf1")
    assert server is not None and server.client_auth and server.cert.is_file()
    extra = bed.description_extra()
    assert extra == {"tls": bed.tls.description()}
    net = bed.spec.description(extra=extra)
    settings = net.tls_for(net.switch("spine1"))
    assert settings is not None and settings.cert == (tmp_path / TLS_DIR / "controller.pem")
    bed.stop()
    assert bed.tls is None and not (tmp_path / TLS_DIR).exists()


def test_plaintext_on_request(tmp_path: Path) -> None:
    bed = FabricTestbed(FabricSpec(leaf_spine(2, 1), backend="linkem", log_dir=tmp_path),
                        p4rt_plaintext=True)
    bed.open_tls()
    assert bed.switch_tls("leaf1") is None and bed.description_extra() is None
    assert not (tmp_path / TLS_DIR).exists()
    assert "any local process can take the switches" in transport_line(bed.tls)


def test_the_two_edge_description_carries_tls(tmp_path: Path) -> None:
    bed = testbed.Testbed(testbed.TopoSpec(backend="linkem", log_dir=tmp_path))
    bed.open_tls()
    bed.host_ports = {(1, 0): 1, (2, 0): 1}
    switches = [SimpleNamespace(name=f"s{n}", device_id=n, probe_iface=None,
                                bmv2=SimpleNamespace(grpc_address=f"127.0.0.1:{50000 + n}"))
                for n in (1, 2)]
    net = bed._netcfg(switches, {}, {})
    assert bed.tls is not None and net.tls is not None
    assert net.tls.ca_cert == str(bed.tls.ca_cert.resolve())
    assert str(bed.tls.dir) in transport_line(bed.tls)
    bed.stop()
    assert not (tmp_path / TLS_DIR).exists()
    plain = testbed.Testbed(testbed.TopoSpec(backend="linkem", log_dir=tmp_path),
                            p4rt_plaintext=True)
    plain.open_tls()
    plain.host_ports = bed.host_ports
    assert plain._netcfg(switches, {}, {}).tls is None


def test_a_cluster_keeps_its_own_certificates(tmp_path: Path) -> None:
    spec = FabricSpec(leaf_spine(2, 1), backend="auto", log_dir=tmp_path)
    bed = ClusterFabricTestbed(spec, ClusterSpec((Server("localhost"), Server("rack2",
                                                                               "10.9.0.2"))))
    bed.open_tls()
    assert bed.tls is None and bed.switch_tls("leaf1") is None
    assert not (tmp_path / TLS_DIR).exists()
