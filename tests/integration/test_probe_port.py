"""The agent's prober on real BMv2: probes written onto the switch's probe port (a veth)
leave on every path like PacketOut probes; without a usable probe port it falls back to
PacketOuts. Needs root, simple_switch_grpc and the compiled program (skips otherwise)."""

from __future__ import annotations

import socket
import threading

import pytest

from mpsched.p4rt.pipeline import ETHERTYPE_PATH_TAG, PATH_FLAG_PROBE
from tests.conftest import require
from tests.netdesc import edge_switch
from tests.waiting import wait_until

PATHS = (1, 2, 3)
ETH_P_ALL = 3
TAG_TYPE = ETHERTYPE_PATH_TAG.to_bytes(2, "big")


@pytest.fixture
def probe_switch(tmp_path, artifacts):
    """BMv2 with paths 1-3 on ports 1-3 (tester ends sniffed) and the program's probe port
    on a veth whose other end is the controller's; programmed with the path next hops."""
    from mpsched.controller.southbound.forwarding import forwarding_entries
    from mpsched.netcfg import NetCfg
    from mpsched.p4rt.client import P4RuntimeClient
    from mpsched.p4rt.p4info import P4Info
    from mpsched.p4rt.pipeline import Pipeline, program_cpu_port
    from mpsched.proc.bmv2 import Bmv2Switch
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
        sw = Bmv2Switch("itest-probe", 1, ports, tmp_path, registry=registry,
                        cpu_port=program_cpu_port(artifacts.p4info))
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


class ProbeSniffers:
    """A raw socket on each path's tester end, counting the probes that leave there (frames
    with the path tag and its probe flag) and noting any whose tag names another path.
    Entered once every socket is bound (nothing is missed from then on)."""

    def __init__(self, ifaces: list[str]) -> None:
        self.ifaces = ifaces
        self.probes = dict.fromkeys(range(1, len(ifaces) + 1), 0)
        self.misplaced: list[tuple[int, int]] = []  # (tester end's path, the tag's path)
        self._ready = [threading.Event() for _ in ifaces]
        self._halt = threading.Event()
        self._threads = [threading.Thread(target=self._sniff, args=(i, n), daemon=True)
                         for i, n in enumerate(ifaces, 1)]

    def _sniff(self, path: int, name: str) -> None:
        # protocol 0 at creation: nothing is queued before bind (ETH_P_ALL, this interface)
        with socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0) as sock:
            sock.bind((name, ETH_P_ALL))
            sock.settimeout(0.1)
            self._ready[path - 1].set()
            while not self._halt.is_set():
                try:
                    frame = sock.recv(2048)
                except TimeoutError:
                    continue
                if frame[12:14] == TAG_TYPE and frame[15] & PATH_FLAG_PROBE:
                    self.probes[path] += 1
                    if frame[14] != path:
                        self.misplaced.append((path, frame[14]))

    def total(self) -> int:
        return sum(self.probes.values())

    def __enter__(self) -> ProbeSniffers:
        for t in self._threads:
            t.start()
        wait_until(lambda: all(e.is_set() for e in self._ready), timeout=30,
                   what="the sniffers' sockets bound")
        return self

    def __exit__(self, *exc: object) -> None:
        self._halt.set()
        for t in self._threads:
            t.join()


def _probe_until(prober, sniffers: ProbeSniffers, seen) -> None:
    """Runs `prober` until `seen(sniffers)` holds, stops it, then waits until every probe it
    sent has been seen (generous deadlines: a busy machine only makes this slower)."""
    prober.start()
    try:
        wait_until(lambda: seen(sniffers), timeout=60, what="probes on the paths")
    finally:
        prober.stop()
    wait_until(lambda: not prober.is_alive(), timeout=30, what="the prober to stop")
    wait_until(lambda: sniffers.total() >= prober.sent, timeout=30,
               what=f"all {prober.sent} probes sent to arrive")


@pytest.mark.parametrize("use_port", [True, False], ids=["probe-port", "fallback"])
def test_prober_probes_every_path(probe_switch, use_port):
    from mpsched.controller.southbound.prober import Prober

    client, pipeline, testers, controller_end = probe_switch
    iface = controller_end if use_port else "no-such-if0"
    prober = Prober(client, pipeline, [(2, p) for p in PATHS], 0.02, iface=iface)
    assert prober.via == (f"probe port ({controller_end})" if use_port else "packet_out")
    with ProbeSniffers(testers) as sniffers:
        _probe_until(prober, sniffers, lambda s: all(s.probes[p] >= 30 for p in PATHS))
    # every probe left on its own path, none elsewhere, none twice
    assert sniffers.misplaced == [], sniffers.misplaced
    assert sniffers.total() == prober.sent, (sniffers.probes, prober.sent)
    per_path = prober.sent / len(PATHS)
    assert all(abs(sniffers.probes[p] - per_path) <= 1 for p in PATHS), sniffers.probes


def test_prober_skips_the_paths_it_is_told_need_no_probe(probe_switch):
    """The controller's probe_wanted pauses a busy path's probes: only the others go out."""
    from mpsched.controller.southbound.prober import Prober

    client, pipeline, testers, controller_end = probe_switch
    prober = Prober(client, pipeline, [(2, p) for p in PATHS], 0.02, iface=controller_end,
                    wanted=lambda dst_edge, path_id: path_id != 2)
    with ProbeSniffers(testers) as sniffers:
        _probe_until(prober, sniffers,
                     lambda s: s.probes[1] >= 30 and s.probes[3] >= 30 and prober.skipped >= 30)
    got = sniffers.probes
    assert got[2] == 0 and sniffers.misplaced == [], (got, sniffers.misplaced)
    assert prober.sent == got[1] + got[3], (prober.sent, got)
