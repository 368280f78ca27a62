"""`make bench-dataplane`: maximum forwarding rate of the full program vs a minimal one on one BMv2.

The programs run on the same `simple_switch_grpc` binary, one after the other in the same
run, with the same two veth ports: one 64-byte UDP flow into port 1, counted as it leaves
port 2. The full program gets the forwarding state the controller installs for an edge switch
with one path (route to the paths, the path's next hop, weights), so its frame takes the whole
path-selection pipeline; the minimal program (p4src/bench/minimal.p4) is one exact-match table
on the ingress port, and a second reference, plain IPv4 forwarding (p4src/bench/ipv4.p4:
checksum check, LPM route, MAC rewrite, TTL, checksum update), shows how much of the full
program's cost routing alone takes (printed, not in the ratio). With two or more CPUs the
load generator runs on the first and every thread of the switch on the last (`--no-pin`:
wherever the kernel puts them).

The figure per program is its maximum forwarding rate (RFC 2285, 3.6.2): the highest rate
delivered over a sweep of paced offered loads (`pktsend --rate`), from half the overload rate
up in steps of `--step` until two loads in a row lose more than 1 %, then `--fine` loads
between the highest one that lost less and the next step. An unpaced sender (as fast as it
can, about 0.9 M frames/s here) is no measure of capacity: under that overload the switch's
receive path slows down (the minimal program took in 31 k frames/s, forwarded 16-20 k of them
and dropped the rest at its egress queue, where paced loads get 120 k/s through); that
overload rate is printed too, and starts the sweep.
If no load of the sweep loses more than 1 %, the switch was not saturated and the figure is
the sender's limit, which the output says. Rounds alternate the programs; the median per
program counts. Each round prints the switch's CPU use and CPU time per forwarded packet
at the best load. Ends with `dataplane_pps_ratio=` (full / minimal; target >= 0.8).
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
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from mpsched import addressing as ap
from mpsched.netcfg import HostCfg, NetCfg, PathCfg, SwitchCfg
from mpsched.p4profiles import REDUCED
from mpsched.p4rt.client import P4RuntimeClient
from mpsched.p4rt.p4info import P4Info
from mpsched.p4rt.pipeline import ALL_TABLES, ETHERTYPE_PATH_TAG, Pipeline
from mpsched.proc import prereqs
from mpsched.proc.bmv2 import Bmv2Switch
from mpsched.proc.cleanup import Registry, sweep
from mpsched.proc.layout import build_dir, p4_artifacts
from mpsched.proc.veth import make_veths

log = logging.getLogger("mpsched.bench.dataplane")



def minimal_artifacts() -> tuple[Path, Path]:
    base = build_dir() / "p4-minimal"
    return base / "minimal.json", base / "minimal.p4info.txt"


def ipv4_artifacts() -> tuple[Path, Path]:
    base = build_dir() / "p4-ipv4"
    return base / "ipv4.json", base / "ipv4.p4info.txt"


# The programs, in the order of a round: name, label of the summary.
PROGRAMS = (
    ("minimal", "minimal program (1 table)"),
    ("ipv4", "IPv4 forwarding program"),
    ("full", "full program"),
)


def profile_artifacts(profile: str) -> tuple[Path, Path]:
    """(BMv2 JSON, P4Info) that `make p4 P4_PROFILE=profile` builds (4 paths)."""
    base = build_dir() / f"p4-{profile}"
    return base / "main.json", base / "main.p4info.txt"


def program_artifacts() -> dict[str, tuple[Path, Path]]:
    """(BMv2 JSON, P4Info) of each program of PROGRAMS and each reduced compile-time profile
    (mpsched.p4profiles.REDUCED)."""
    art = p4_artifacts()
    return {
        "minimal": minimal_artifacts(),
        "ipv4": ipv4_artifacts(),
        "full": (art.bmv2_json, art.p4info),
        **{p.name: profile_artifacts(p.name) for p in REDUCED},
    }


def missing_programs(profiles: bool = False) -> list[str]:
    """One line per program file (of PROGRAMS, and of the reduced profiles if asked) not built."""
    names = [name for name, _ in PROGRAMS] + ([p.name for p in REDUCED] if profiles else [])
    art = program_artifacts()
    lines = []
    for name in names:
        how = "`make p4`" if name in dict(PROGRAMS) else f"`make p4 P4_PROFILE={name}`"
        lines += [f"{m}: missing; run {how}" for m in art[name] if not m.is_file()]
    return lines


# Kinds of test traffic: "udp" (default) a 64-byte UDP frame from the host bound for the
# paths; "tcp" a TCP ACK with timestamps and 18 bytes of data from the host bound for the
# paths (the TCP option walk, MPTCP's pin lookup, the RTT monitor); "tagged" the same TCP
# segment arriving tagged from path 1 on the path port, bound for the host (the egress edge:
# path measurement and per-flow order, tag removal, the RTT monitor's ACK side); "transit"
# the same tagged segment of another pair of edges (3 -> 4), which the switch forwards by
# transit_nexthop to the host port untouched (p4src/include/edge_config.p4).
TRAFFIC = ("udp", "tcp", "tagged", "transit")
# The pair of edges of "transit" traffic (neither is the switch's, s1 = edge 1).
TRANSIT_EDGES = (3, 4)


def frame_hex(traffic: str = "udp") -> str:
    from scapy.layers.inet import IP, TCP, UDP
    from scapy.layers.l2 import Ether

    if traffic == "udp":
        pkt = (
            Ether(dst=ap.S1_MAC, src=ap.H1_MAC)
            / IP(src=ap.H1_IP, dst=ap.H2_IP, ttl=64)
            / UDP(sport=4000, dport=5000)
            / (b"\0" * 18)
        )
        return bytes(pkt).hex()
    if traffic not in TRAFFIC:
        raise ValueError(f"traffic {traffic!r} is not one of {TRAFFIC}")
    src, dst = (ap.H1_IP, ap.H2_IP) if traffic == "tcp" else (ap.H2_IP, ap.H1_IP)
    segment = (
        IP(src=src, dst=dst, ttl=64)
        / TCP(sport=4000, dport=5000, flags="A", seq=1000, ack=1,
              options=[("NOP", None), ("NOP", None), ("Timestamp", (1, 1))])
        / (b"\0" * 18)
    )
    if traffic == "tcp":
        return bytes(Ether(dst=ap.S1_MAC, src=ap.H1_MAC) / segment).hex()
    # path_tag_t (p4src/include/headers.p4): path id, flags, source edge (s2: 2), destination
    # edge (s1: 1), seq, tx_ts (48 bits), feedback (8 bytes: none), next type
    edges = list(TRANSIT_EDGES) if traffic == "transit" else [2, 1]
    tag = (bytes([1, 0, *edges]) + (7).to_bytes(4, "big") + (1000).to_bytes(6, "big") + bytes(8)
           + b"\x08\x00")
    eth = Ether(dst=ap.S1_MAC, src=ap.S2_MAC, type=ETHERTYPE_PATH_TAG)
    return (bytes(eth) + tag + bytes(segment)).hex()


# Path-choice modes the full program can be measured in (bench-dpcost --mode): class 0 in
# that mode; flowlet and ca with a flowlet gap of 0, so that every packet starts a new
# flowlet and pays the mode's choice.
MODES = ("hash", "flowlet", "ca")
# mode ca: every live term on, metrics never stale (the cost of the choice does not depend on
# the values)
CA_BENCH_PARAMS = {"c_qdelay": 256, "c_loss": 78, "c_util": 39, "epsilon": 2000,
                   "max_age_us": 500_000}


def full_program_state(pipeline: Pipeline, address: str, mode: str = "hash") -> list:
    """What the controller installs on an edge switch with one path on port 2, class 0 in
    `mode` (MODES)."""
    from mpsched.controller.southbound.forwarding import forwarding_entries

    s1 = SwitchCfg(
        "s1",
        1,
        address,
        ap.S1_MAC,
        (ap.subnet(ap.SENDER_EDGE),),
        (HostCfg("h1", ap.H1_IP, ap.H1_MAC, 1),),
        (PathCfg(1, 2, None),),
    )
    s2 = SwitchCfg(
        "s2", 2, "127.0.0.1:1", ap.S2_MAC, (ap.subnet(ap.RECEIVER_EDGE),),
        (), (PathCfg(1, 2, None),),
    )
    full = pipeline
    if pipeline.tables != ALL_TABLES:
        # A profile: the controller's entries for the full program (its P4Info names every
        # table), less those of the stages the profile leaves out.
        full = Pipeline(P4Info.from_file(p4_artifacts().p4info))
    entries = forwarding_entries(full, NetCfg((s1, s2)), s1)
    entries.append(full.transit_nexthop(*TRANSIT_EDGES, 1, 1))  # "transit": to the host port
    kept = [e for e in entries if e.table in pipeline.tables]
    if mode not in MODES:
        raise ValueError(f"mode {mode!r} is not one of {MODES}")
    if mode == "ca":
        kept.append(pipeline.ca_params(2, 0, {**CA_BENCH_PARAMS, "inv_capacity_1": 1 << 16}))
    return [*kept, pipeline.weights(2, 0, {1: 1}, mode, 0)]  # towards s2, edge 2


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


# A load "loses" when more than this fraction of what was sent did not come out.
KNEE_LOSS = 0.01
# The sender kept up with a paced load when it sent at least this fraction of it.
SENDER_OK = 0.95
# No sweep offers more than this (pkt/s); a Python sender tops out well below.
MAX_OFFERED = 1_000_000.0


@dataclass(frozen=True)
class Trial:
    """One offered load held for a measurement window (rates in pkt/s)."""

    offered: float  # asked of the sender; 0: unpaced (as fast as it can)
    sent: float
    delivered: float
    cpu: float  # CPU seconds per second the switch used

    @property
    def loss(self) -> float:
        return max(0.0, 1.0 - self.delivered / self.sent) if self.sent > 0 else 0.0

    @property
    def sender_kept_up(self) -> bool:
        return self.offered == 0 or self.sent >= SENDER_OK * self.offered

    @property
    def cpu_us_per_packet(self) -> float:
        return self.cpu / self.delivered * 1e6 if self.delivered > 0 else float("inf")


@dataclass(frozen=True)
class Sweep:
    """The trials of one sweep and its result: the trial with the highest delivered rate."""

    trials: tuple[Trial, ...]
    best: Trial
    saturated: bool  # some load lost more than KNEE_LOSS: the switch, not the sender, limited


def max_forwarding_rate(
    run: Callable[[float], Trial], start: float, step: float = 1.25, fine: int = 3
) -> Sweep:
    """RFC 2285's maximum forwarding rate: offer start, start*step, ... until two loads in a
    row lose more than KNEE_LOSS (or the sender cannot keep up, or MAX_OFFERED), then `fine`
    loads evenly (geometrically) between the highest load that did not lose and the next step
    (where the knee is); the best is the trial with the highest delivered rate. `run(rate)`
    holds one load and measures it."""
    if start <= 0 or step <= 1 or fine < 0:
        raise ValueError("start must be > 0, step > 1, fine >= 0")
    trials: list[Trial] = []
    rate, losing = start, 0
    while rate <= MAX_OFFERED:
        t = run(rate)
        trials.append(t)
        if not t.sender_kept_up:
            break
        losing = losing + 1 if t.loss > KNEE_LOSS else 0
        if losing == 2:
            break
        rate *= step
    # The knee lies between the highest load that did not lose and the next one.
    kept = [t for t in trials if t.loss <= KNEE_LOSS and t.sender_kept_up]
    base = max(kept or trials, key=lambda t: t.delivered)
    for k in range(1, fine + 1):
        trials.append(run(base.offered * step ** (k / (fine + 1))))
    return Sweep(
        tuple(trials),
        max(trials, key=lambda t: t.delivered),
        any(t.loss > KNEE_LOSS for t in trials),
    )


class Rig:
    """One switch running one program under load from a separate sender process."""

    def __init__(
        self,
        send_iface: str,
        sink: str,
        seconds: float,
        cpus: tuple[int, int] | None,
        sw: Bmv2Switch,
        registry: Registry,
        traffic: str = "udp",
    ) -> None:
        self.send_iface, self.sink, self.seconds = send_iface, sink, seconds
        self.cpus, self.sw, self.registry = cpus, sw, registry
        self.frame = frame_hex(traffic)

    def trial(self, rate: float) -> Trial:
        """Hold `rate` pkt/s (0: unpaced) for a warm-up and the measurement window."""
        warmup = 0.3
        duration = warmup + self.seconds + 0.2
        sender = subprocess.Popen(
            [
                *(("taskset", "-c", str(self.cpus[0])) if self.cpus is not None else ()),
                sys.executable,
                "-m",
                "mpsched.bench.pktsend",
                "--iface",
                self.send_iface,
                "--frame",
                self.frame,
                "--seconds",
                str(duration),
                "--rate",
                str(rate),
            ],
            stdout=subprocess.PIPE,
            text=True,
        )
        self.registry.add_process(sender.pid, " ".join(sender.args))
        pid = self.sw.process.pid
        try:
            time.sleep(warmup)
            before, t0, cpu0 = rx_packets(self.sink), time.monotonic(), cpu_seconds(pid)
            time.sleep(self.seconds)
            delivered, elapsed = rx_packets(self.sink) - before, time.monotonic() - t0
            cpu = cpu_seconds(pid) - cpu0
            out, _ = sender.communicate(timeout=duration + 10)
        finally:
            if sender.poll() is None:
                sender.kill()
                sender.wait()
            self.registry.forget_process(sender.pid)
        time.sleep(0.2)  # queues drain before the next load
        sent = int(out.strip() or 0) / duration
        t = Trial(rate, sent, delivered / elapsed, cpu / elapsed)
        log.info(
            "offered %8.0f sent %8.0f delivered %8.0f loss %.4f cpu %.2f",
            t.offered,
            t.sent,
            t.delivered,
            t.loss,
            t.cpu,
        )
        return t


def start_switch(
    name: str,
    p4info_path: Path,
    bmv2_json: Path,
    ports: dict[int, str],
    log_dir: Path,
    registry: Registry,
    full: bool,
    cpus: tuple[int, int] | None,
    mode: str = "hash",
) -> Bmv2Switch:
    """A switch with the program (and, for the full one, an edge switch's forwarding state
    with class 0 in `mode`), its threads pinned to the switch's CPU."""
    sw = Bmv2Switch(name=name, device_id=1, ports=ports, log_dir=log_dir, registry=registry)
    sw.start()
    try:
        info = P4Info.from_file(p4info_path)
        client = P4RuntimeClient(sw.grpc_address, 1, info)
        client.connect()
        try:
            client.set_pipeline(str(bmv2_json))
            if full:
                for entry in full_program_state(Pipeline(info), sw.grpc_address, mode):
                    client.insert(entry)
        finally:
            client.close()
        if cpus is not None:
            pin_process(sw.process.pid, cpus[1])
    except BaseException:
        sw.stop()
        raise
    return sw


@contextmanager
def program_rig(
    name: str,
    ports: dict[int, str],
    send_iface: str,
    sink: str,
    seconds: float,
    cpus: tuple[int, int] | None,
    log_dir: Path,
    registry: Registry,
    traffic: str = "udp",
    mode: str = "hash",
) -> Iterator[Rig]:
    """A Rig on a switch running program `name` (of PROGRAMS or mpsched.p4profiles.REDUCED)
    with `traffic` (TRAFFIC; "tagged" and "transit" are sent into the sink's port, the path
    port, and leave the other) and class 0 in `mode` (MODES), stopped on exit."""
    json_, info = program_artifacts()[name]
    full = name not in ("minimal", "ipv4")
    sw = start_switch(f"bench-{name}", info, json_, ports, log_dir, registry, full, cpus, mode)
    try:
        if traffic in ("tagged", "transit"):
            send_iface, sink = sink, send_iface
        yield Rig(send_iface, sink, seconds, cpus, sw, registry, traffic)
    finally:
        sw.stop()


def measure(rig: Rig, step: float, fine: int) -> tuple[Trial, Sweep]:
    """The overload trial (unpaced sender), then the sweep from half its delivered rate."""
    overload = rig.trial(0)
    start = max(1000.0, overload.delivered / 2)
    return overload, max_forwarding_rate(rig.trial, start, step, fine)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m mpsched.bench.dataplane",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--seconds", type=float, default=1.5, help="measurement window per load")
    p.add_argument("--rounds", type=int, default=3, help="rounds per program (median counts)")
    p.add_argument(
        "--step", type=float, default=1.25, help="factor between two loads of the sweep (> 1)"
    )
    p.add_argument("--fine", type=int, default=3, help="loads between the knee's two steps (>= 0)")
    p.add_argument(
        "--no-pin",
        dest="pin",
        action="store_false",
        help="leave the sender and the switch unpinned (default: each on a CPU of its own)",
    )
    p.add_argument(
        "--profile",
        action="append",
        default=[],
        choices=[p.name for p in REDUCED],
        help="also measure this compile-time profile (`make p4 P4_PROFILE=...`); repeatable",
    )
    p.add_argument("-v", "--verbose", action="store_true", help="print every load of the sweeps")
    args = p.parse_args(argv)
    programs = [*PROGRAMS, *((p.name, p.label) for p in REDUCED if p.name in args.profile)]
    if args.seconds <= 0 or args.rounds < 1 or args.step <= 1 or args.fine < 0:
        p.error("--seconds must be > 0, --rounds >= 1, --step > 1 and --fine >= 0")
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING, format="%(name)s: %(message)s"
    )
    problems = prereqs.missing("root", "simple_switch_grpc")
    problems += missing_programs(profiles=bool(args.profile))
    if problems:
        print(
            "bench-dataplane: missing prerequisites:\n  " + "\n  ".join(problems), file=sys.stderr
        )
        return 2
    for line in sweep():
        log.info("cleaned up: %s", line)
    registry = Registry()
    results: dict[str, list[Sweep]] = {name: [] for name, _ in programs}
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
                for name, _ in programs:
                    with program_rig(
                        name, ports, t1, t2, args.seconds, cpus, Path(tmp), registry
                    ) as rig:
                        overload, result = measure(rig, args.step, args.fine)
                    results[name].append(result)
                    b = result.best
                    print(
                        f"round {r + 1} {name:7s} {b.delivered:10.0f} pkt/s max forwarding rate"
                        f" (offered {b.offered:.0f}, loss {b.loss:.1%}, switch CPU {b.cpu:.2f},"
                        f" {b.cpu_us_per_packet:.1f} us/pkt; {len(result.trials)} loads"
                        f"{'' if result.saturated else '; NOT saturated: sender-limited'});"
                        f" unpaced overload {overload.delivered:.0f} pkt/s",
                        flush=True,
                    )
    except KeyboardInterrupt:
        print("bench-dataplane: interrupted; cleaned up", file=sys.stderr)
        return 130
    finally:
        registry.close()
    medians = {k: statistics.median(s.best.delivered for s in v) for k, v in results.items()}
    for name, label in programs:
        limited = not all(s.saturated for s in results[name])
        print(
            f"{label:26s} max forwarding rate median {medians[name]:10.0f} pkt/s"
            + (" (a lower bound: the sender limited some round)" if limited else "")
        )
    print(f"full / IPv4 forwarding: {medians['full'] / medians['ipv4']:.3f}")
    for name in args.profile:
        print(f"{name} / IPv4 forwarding: {medians[name] / medians['ipv4']:.3f}")
    print(f"dataplane_pps_ratio_ipv4={medians['full'] / medians['ipv4']:.3f}")
    print(f"dataplane_pps_ratio={medians['full'] / medians['minimal']:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
