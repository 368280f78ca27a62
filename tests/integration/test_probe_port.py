"""The agent's prober on real BMv2: probes written onto the switch's probe port (a veth)
leave on every path like PacketOut probes; without a usable probe port it falls back to
PacketOuts. Needs root, simple_switch_grpc and the compiled program (skips otherwise)."""

from __future__ import annotations

import socket
import threading
import time

import pytest

from tests.conftest import require
from tests.netdesc import edge_switch

PATHS = (1, 2, 3)
ETH_P_ALL = 3


@pytest.fixture
def probe_switch(tmp_path, artifacts):
    """BMv2 with paths 1-3 on ports 1-3 (tester ends sniffed) and the program's probe port
    on a veth whose other end is the controller's; programmed with the path next hops."""
    from mpsched.controller.southbound.forwarding import forwarding_entries
    from mpsched.netcfg import NetCfg
    from mpsched.p4rt.client import P4RuntimeClient
    from mpsched.p4rt.p4info import P4Info
    from mpsched.p4rt.pipeline import Pipeline
    from mpsched.proc.bmv2 import CPU_PORT, Bmv2Switch
    from mpsched.proc.cleanup import Registry
    from mpsched.proc.veth import make_veth, make_veths

    require("root", "simple_switch_grpc", "ethtool")
    p4info = P4Info.from_file(artifacts.p4info)
    pipeline = Pipeline(p4info)
    registry = Registry()
    sw = client = None
    try:
        pairs = make_veths(registry, len(PATHS))
        switch_end, controller_end = make_veth(registry, "itprb-s", "itprb-c")
        ports = {i: s for i, (s, _) in enumerate(pairs, start=1)}
        ports[pipeline.probe_port] = switch_end
        sw = Bmv2Switch("itest-probe", 1, ports, tmp_path, registry=registry, cpu_port=CPU_PORT)
        sw.start()
        client = P4RuntimeClient(sw.grpc_address, 1, p4info)
        client.connect()
        client.set_pipeline(str(artifacts.bmv2_json))
        paths = [{"id": p, "port": p} for p in PATHS]
        net = NetCfg.from_dict({"switches": [edge_switch(1, sw.grpc_address, paths)]})
        client.insert(*forwarding_entries(pipeline, net, net.switches[0]))
        yield client, pipeline, [t for _, t in pairs], controller_end
    finally:
        if client is not None:
            client.close()
        if sw is not None:
            sw.stop()
        registry.close()


def _count_frames(ifaces: list[str], seconds: float) -> dict[int, int]:
    counts = dict.fromkeys(range(1, len(ifaces) + 1), 0)

    def sniff(path: int, name: str) -> None:
        # protocol 0 at creation: nothing is queued before bind (ETH_P_ALL, this interface)
        with socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0) as sock:
            sock.bind((name, ETH_P_ALL))
            sock.settimeout(0.1)
            end = time.monotonic() + seconds
            while time.monotonic() < end:
                try:
                    sock.recv(2048)
                    counts[path] += 1
                except TimeoutError:
                    pass

    threads = [threading.Thread(target=sniff, args=(i, n)) for i, n in enumerate(ifaces, 1)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return counts


def _probe_for_a_second(prober, testers: list[str]) -> dict[int, int]:
    """Runs `prober` for a second while counting the frames on each path's tester end."""
    result: dict[int, int] = {}
    sniffer = threading.Thread(target=lambda: result.update(_count_frames(testers, 1.5)))
    sniffer.start()
    time.sleep(0.2)
    prober.start()
    time.sleep(1.0)
    prober.stop()
    sniffer.join()
    return result


@pytest.mark.parametrize("use_port", [True, False], ids=["probe-port", "fallback"])
def test_prober_probes_every_path(probe_switch, use_port):
    from mpsched.controller.southbound.prober import Prober

    client, pipeline, testers, controller_end = probe_switch
    iface = controller_end if use_port else "no-such-if0"
    prober = Prober(client, pipeline, list(PATHS), 2, 0.02, iface=iface)
    assert prober.via == (f"probe port ({controller_end})" if use_port else "packet_out")
    result = _probe_for_a_second(prober, testers)
    sent_per_path = prober.sent // len(PATHS)
    assert sent_per_path >= 30, prober.sent
    # every probe left on its own path, none elsewhere (nothing else is sent here)
    assert all(abs(result[p] - sent_per_path) <= 1 for p in PATHS), (result, prober.sent)


def test_prober_skips_the_paths_it_is_told_need_no_probe(probe_switch):
    """The controller's probe_wanted pauses a busy path's probes: only the others go out."""
    from mpsched.controller.southbound.prober import Prober

    client, pipeline, testers, controller_end = probe_switch
    prober = Prober(client, pipeline, list(PATHS), 2, 0.02, iface=controller_end,
                    wanted=lambda path_id: path_id != 2)
    result = _probe_for_a_second(prober, testers)
    assert result[2] == 0 and result[1] >= 30 and result[3] >= 30, result
    assert prober.skipped >= 30 and prober.sent == result[1] + result[3], (prober.sent, result)
