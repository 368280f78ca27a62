"""`make bench-dataplane`: forwarding rate of the full program vs a minimal one on one BMv2 build.

Both programs run on the same `simple_switch_grpc` binary, one after the other in the same
run, with the same two veth ports and the same load: one 64-byte UDP frame sent as fast as a
separate process can (`pktsend`) into port 1. What leaves port 2 in a measurement window is
the delivered rate. The full program gets the forwarding state the controller installs for an
edge switch with one path (route to the paths, the path's next hop, weights), so its frame
takes the whole path-selection pipeline; the minimal program (p4src/bench/minimal.p4) is one
exact-match table on the ingress port. Rounds alternate the programs; the median per program
counts. With two or more CPUs the load generator runs on the first and every thread of the
switch on the last (`--no-pin`: wherever the kernel puts them), so the switch always has one
core of its own and the rate measures what a packet costs it; unpinned, the switch's threads
and the sender share the cores by the scheduler's whim and the rounds scatter by ±20 %.
Each round also prints the switch's CPU use. Ends with `dataplane_pps_ratio=` (full / minimal;
target >= 0.8).
"""

from __future__ import annotations

import argparse
import logging
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from mpsched import toolchain
from mpsched.bmv2 import Bmv2Switch
from mpsched.cleanup import Registry, sweep
from mpsched.layout import build_dir, p4_artifacts
from mpsched.netcfg import HostCfg, NetCfg, PathCfg, SwitchCfg
from mpsched.p4info import P4Info
from mpsched.p4runtime import P4RuntimeClient
from mpsched.pipeline import Pipeline
from mpsched.ptfrun import make_veths

log = logging.getLogger("mpsched.bench.dataplane")

ROUTER_MAC = "00:00:0a:00:01:fe"
HOST_MAC = "00:00:0a:00:01:01"


def minimal_artifacts() -> tuple[Path, Path]:
    base = build_dir() / "p4-minimal"
    return base / "minimal.json", base / "minimal.p4info.txt"


def frame_hex() -> str:
    from scapy.layers.inet import IP, UDP
    from scapy.layers.l2 import Ether

    pkt = (
        Ether(dst=ROUTER_MAC, src=HOST_MAC)
        / IP(src="10.0.1.1", dst="10.0.2.1", ttl=64)
        / UDP(sport=4000, dport=5000)
        / (b"\0" * 18)
    )
    return bytes(pkt).hex()


def full_program_state(pipeline: Pipeline, address: str) -> list:
    """What the controller installs on an edge switch with one path on port 2."""
    from mpsched.controller.southbound import forwarding_entries

    s1 = SwitchCfg(
        "s1",
        1,
        address,
        ROUTER_MAC,
        ("10.0.1.0/24",),
        (HostCfg("h1", "10.0.1.1", HOST_MAC, 1),),
        (PathCfg(1, 2, None),),
    )
    s2 = SwitchCfg(
        "s2", 2, "127.0.0.1:1", "00:00:0a:00:02:fe", ("10.0.2.0/24",), (), (PathCfg(1, 2, None),)
    )
    entries = forwarding_entries(pipeline, NetCfg((s1, s2)), s1)
    return [*entries, pipeline.weights(0, {1: 1})]


def rx_packets(iface: str) -> int:
    return int(Path(f"/sys/class/net/{iface}/statistics/rx_packets").read_text())


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far (all its threads)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def pin_process(pid: int, cpu: int) -> None:
    """Pin every thread of a process to one CPU (threads it starts later inherit it)."""
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            os.sched_setaffinity(int(task.name), {cpu})
        except (ProcessLookupError, PermissionError) as e:
            log.warning("could not pin thread %s to CPU %d: %s", task.name, cpu, e)


def cpu_plan(pin: bool) -> tuple[int, int] | None:
    """(load generator's CPU, switch's CPU) from the CPUs this process may use."""
    allowed = sorted(os.sched_getaffinity(0))
    if not pin or len(allowed) < 2:
        return None
    return allowed[0], allowed[-1]


def measure(
    name: str,
    p4info_path: Path,
    bmv2_json: Path,
    ports: dict[int, str],
    send_iface: str,
    sink: str,
    seconds: float,
    log_dir: Path,
    registry: Registry,
    full: bool,
    cpus: tuple[int, int] | None = None,
) -> tuple[float, float]:
    """(packets/s delivered, CPU seconds per second the switch used). `cpus`: (load
    generator's CPU, switch's CPU), or None for no pinning."""
    sw = Bmv2Switch(name=name, device_id=1, ports=ports, log_dir=log_dir, registry=registry)
    sw.start()
    try:
        info = P4Info.from_file(p4info_path)
        client = P4RuntimeClient(sw.grpc_address, 1, info)
        client.connect()
        try:
            client.set_pipeline(str(bmv2_json))
            if full:
                for entry in full_program_state(Pipeline(info), sw.grpc_address):
                    client.insert(entry)
        finally:
            client.close()
        if cpus is not None:
            pin_process(sw.process.pid, cpus[1])
        sender = subprocess.Popen(
            [
                *(("taskset", "-c", str(cpus[0])) if cpus is not None else ()),
                sys.executable,
                "-m",
                "mpsched.bench.pktsend",
                "--iface",
                send_iface,
                "--frame",
                frame_hex(),
                "--seconds",
                str(seconds + 2),
            ],
            stdout=subprocess.PIPE,
            text=True,
        )
        registry.add_process(sender.pid, " ".join(sender.args))
        try:
            time.sleep(1.0)  # warm-up: queues filled, steady state
            before, t0, cpu0 = rx_packets(sink), time.monotonic(), cpu_seconds(sw.process.pid)
            time.sleep(seconds)
            delivered, elapsed = rx_packets(sink) - before, time.monotonic() - t0
            cpu = cpu_seconds(sw.process.pid) - cpu0
            sender.wait(timeout=seconds + 10)
        finally:
            if sender.poll() is None:
                sender.kill()
                sender.wait()
            registry.forget_process(sender.pid)
        return delivered / elapsed, cpu / elapsed
    finally:
        sw.stop()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m mpsched.bench.dataplane",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--seconds", type=float, default=5.0, help="measurement window per round")
    p.add_argument("--rounds", type=int, default=3, help="rounds per program (median counts)")
    p.add_argument(
        "--no-pin",
        dest="pin",
        action="store_false",
        help="leave the sender and the switch unpinned (default: each on a CPU of its own)",
    )
    args = p.parse_args(argv)
    if args.seconds <= 0 or args.rounds < 1:
        p.error("--seconds must be > 0 and --rounds >= 1")
    logging.basicConfig(level=logging.WARNING, format="%(name)s: %(message)s")
    problems = toolchain.missing("root", "simple_switch_grpc")
    art = p4_artifacts()
    minimal_json, minimal_info = minimal_artifacts()
    problems += [f"{m}: missing; run `make p4`" for m in art.missing()]
    problems += [
        f"{m}: missing; run `make bench-dataplane`"
        for m in (minimal_json, minimal_info)
        if not m.is_file()
    ]
    if problems:
        print(
            "bench-dataplane: missing prerequisites:\n  " + "\n  ".join(problems), file=sys.stderr
        )
        return 2
    for line in sweep():
        log.info("cleaned up: %s", line)
    registry = Registry()
    results: dict[str, list[float]] = {"minimal": [], "full": []}
    cpus = cpu_plan(args.pin)
    print(
        f"load generator on CPU {cpus[0]}, switch on CPU {cpus[1]}" if cpus else "unpinned",
        flush=True,
    )
    try:
        (sw1, t1), (sw2, t2) = make_veths(registry, 2)
        ports = {1: sw1, 2: sw2}
        with tempfile.TemporaryDirectory() as tmp:
            for r in range(args.rounds):
                for name in ("minimal", "full"):
                    full = name == "full"
                    info, json_ = (
                        (art.p4info, art.bmv2_json) if full else (minimal_info, minimal_json)
                    )
                    pps, cpu = measure(
                        f"bench-{name}",
                        info,
                        json_,
                        ports,
                        t1,
                        t2,
                        args.seconds,
                        Path(tmp),
                        registry,
                        full,
                        cpus,
                    )
                    results[name].append(pps)
                    print(
                        f"round {r + 1} {name:8s} {pps:10.0f} pkt/s  switch CPU {cpu:.2f}",
                        flush=True,
                    )
    except KeyboardInterrupt:
        print("bench-dataplane: interrupted; cleaned up", file=sys.stderr)
        return 130
    finally:
        registry.close()
    minimal = statistics.median(results["minimal"])
    full = statistics.median(results["full"])
    print(f"minimal program (1 table)       median {minimal:10.0f} pkt/s")
    print(f"full program (routing, paths)   median {full:10.0f} pkt/s")
    print(f"dataplane_pps_ratio={full / minimal:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
