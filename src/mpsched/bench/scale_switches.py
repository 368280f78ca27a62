"""The switches of `make bench-scale` (src/mpsched/bench/scale.py): one `simple_switch_grpc`
per switch of the fabric, each running the program built for many edges (`make p4-scale`), no
ports carrying traffic but each leaf's probe port on a veth, and their RSS."""

from __future__ import annotations

from pathlib import Path

from mpsched.bench.scale_model import rss_mb
from mpsched.fabric.model import Fabric
from mpsched.p4profiles import SCALE_EDGES
from mpsched.proc.bmv2 import Bmv2Switch
from mpsched.proc.cleanup import Registry
from mpsched.proc.layout import P4Artifacts, build_dir
from mpsched.proc.veth import make_veth


def artifacts() -> P4Artifacts:
    base = build_dir() / f"p4-{SCALE_EDGES}edges"
    return P4Artifacts(bmv2_json=base / "main.json", p4info=base / "main.p4info.txt")


def probe_veths(fabric: Fabric, registry: Registry) -> dict[int, tuple[str, str]]:
    """Per edge switch's device id, a veth (switch end, controller end) for its probe port
    (as the testbed's, src/mpsched/topo/bmv2_switch.py): the probers write their frames there."""
    return {
        i: make_veth(registry, f"scale{i}-prb", f"scale{i}-prbc")
        for i, sw in enumerate(fabric.switches, start=1)
        if sw.is_edge
    }


def start_switches(count: int, log_dir: Path, registry: Registry,
                   probe_ports: dict[int, dict[int, str]] | None = None) -> list[Bmv2Switch]:
    """`count` switches without ports but, by device id, `probe_ports` (port -> iface)."""
    switches: list[Bmv2Switch] = []
    try:
        for i in range(1, count + 1):
            sw = Bmv2Switch(name=f"scale{i}", device_id=i, ports=(probe_ports or {}).get(i, {}),
                            log_dir=log_dir, registry=registry)
            sw.start()
            switches.append(sw)
    except BaseException:
        stop_switches(switches)
        raise
    return switches


def stop_switches(switches: list[Bmv2Switch]) -> None:
    for sw in switches:
        sw.stop()


def switch_rss_mb(switches: list[Bmv2Switch]) -> float:
    """The largest RSS of the switches' processes."""
    return max(rss_mb(sw.process.pid) for sw in switches if sw.process is not None)
