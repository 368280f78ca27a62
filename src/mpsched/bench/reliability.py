"""`make bench-reliability`: what survives a controller's death, a switch's restart, malformed
frames and abusive REST clients, on the real testbed (Mininet hosts, BMv2, linkem paths).

On h1 - s1 =(two 10 Mbit/s paths)= s2 - h2, in this order:

1. Controller restart: the operator sets a class, a policy, parameters, an admin state and a
   weight; a long-lived UDP flow h1 -> h2 (CBR, counted at both ends) runs while the
   controller is killed with SIGKILL and started again on the same state file.
   `ctl_restart_lost_pkts=`: datagrams sent and never received; `ctl_restart_intent_kept=`: 1
   when every class, policy, parameter, admin state and weight reads back the same after the
   restart (the REST views compared field by field; the differences are printed).
2. Backup takeover: a primary (election id 2) and a backup (1) on the same switches and state
   file; the primary is killed with SIGKILL. `backup_takeover_ms=`: from the kill until the
   backup's first acknowledged write (a write every 10 ms, refused with 409 until then).
3. Switch restart: s1's BMv2 is killed and started again on the same ports while the flow
   runs. `switch_restart_recover_ms=`: from the kill until h2 receives the flow again.
4. Malformed frames (`mpsched.testing.fuzz`): seeded frames sent from h1 into s1; everything
   arriving at h2 is checked. `fuzz_frames=`, `fuzz_malformed_forwarded=` (frames with an
   invalid IPv4 header that reached h2), `fuzz_switch_deaths=` (BMv2 processes that died).
5. REST abuse (`mpsched.testing.restabuse`) against the running controller: `rest_abuse_cases=`,
   `rest_abuse_failures=`, `rest_concurrent_failed=` (of 200 writes from 50 clients), and
   `rest_stall_ms=` (src/mpsched/testing/reststall.py): the longest a GET on a fresh connection
   waits while 300 idle connections are held open. `--only rest` runs this section alone,
   without root or BMv2: against the controller's REST server over a fake backend.
6. Malformed input files (`mpsched.bench.scenario_fuzz`; no root: `--only scenario` runs it
   alone) through `mpsched check`: `scenario_fuzz_cases=`, `scenario_fuzz_failures=`.

Targets: 0 lost, 1 kept, takeover <= 2000 ms, switch recovery <= 5000 ms, 0 malformed
forwarded, 0 deaths, 0 failures (REST and files), stall <= 1000 ms.
"""

from __future__ import annotations

import argparse
import json
import logging
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mpsched import addressing as ap
from mpsched.bench.reliability_intent import (
    differences,
    intent_view,
    set_intent,
    write_until_accepted,
)
from mpsched.client.rest import RestClient
from mpsched.proc import cpulimit, prereqs
from mpsched.proc.cleanup import interrupt_on_signals
from mpsched.proc.layout import build_dir, p4_artifacts

log = logging.getLogger("mpsched.bench.reliability")

FLOW_PORT = 7001
FLOW_MBPS = 2.0
PAYLOAD = 1000
TAKEOVER_LIMIT_S = 10.0
RECOVER_LIMIT_S = 15.0


@dataclass
class Figures:
    """The benchmark's key=value figures, in the order they are printed."""

    values: dict[str, float | int] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        return [f"{key}={value}" for key, value in self.values.items()]


class Flow:
    """A long-lived UDP flow h1 -> h2 (src/mpsched/traffic/gen/ cbr and sink), counted at both
    ends."""

    def __init__(self, bed: Any, out_dir: Path, name: str, seconds: float) -> None:
        gen = [sys.executable, "-m", "mpsched.traffic.gen"]
        port = str(FLOW_PORT)
        self.sink_report = out_dir / f"{name}-sink.json"
        self.cbr_report = out_dir / f"{name}-cbr.json"
        self.sink = bed.host("h2").popen(
            [*gen, "sink", "--port", port, "--udp-port", port, "--out", str(self.sink_report)]
        )
        time.sleep(0.5)
        self.cbr = bed.host("h1").popen([
            *gen, "cbr", "--dst", ap.H2_IP, "--port", port, "--udp-port", port,
            "--rate-mbps", str(FLOW_MBPS), "--size", str(PAYLOAD), "--seconds", str(seconds),
            "--out", str(self.cbr_report),
        ])  # fmt: skip

    def lost(self, timeout: float) -> int:
        """Wait for the sender to end; datagrams it sent that the sink never received."""
        self.cbr.wait(timeout=timeout)
        time.sleep(0.5)  # the last datagrams in flight
        self.sink.send_signal(signal.SIGINT)
        self.sink.wait(timeout=10)
        sent = json.loads(self.cbr_report.read_text())["sent"]["udp_packets"]
        received = json.loads(self.sink_report.read_text())["udp"]["packets"]
        return sent - received

    def kill(self) -> None:
        for proc in (self.cbr, self.sink):
            if proc.poll() is None:
                proc.kill()
                proc.wait()


def rx_packets(host: Any) -> int:
    return int(host.cmd(f"cat /sys/class/net/{host.defaultIntf().name}/statistics/rx_packets"))


Starter = Callable[..., tuple[subprocess.Popen, RestClient]]


def controller_restart(bed: Any, start: Starter, out_dir: Path, figures: Figures) -> None:
    from mpsched.proc.controller import stop_controller

    proc, rest = start("restart", state="restart")
    flow = None
    try:
        set_intent(rest)
        before = intent_view(rest)
        flow = Flow(bed, out_dir, "restart", seconds=8.0)
        time.sleep(3.0)
        proc.kill()  # SIGKILL: no clean-up of any kind
        proc.wait()
        time.sleep(1.0)  # the data plane alone
        proc, rest = start("restart", state="restart")
        after = intent_view(rest)
        lost = flow.lost(timeout=20)
    finally:
        if flow is not None:
            flow.kill()
        stop_controller(proc, bed.registry)
    diff = differences(before, after)
    figures.notes += [f"intent lost across the restart: {d}" for d in diff]
    figures.values["ctl_restart_lost_pkts"] = lost
    figures.values["ctl_restart_intent_kept"] = int(not diff)


def backup_takeover(bed: Any, start: Starter, figures: Figures) -> None:
    from mpsched.proc.controller import stop_controller

    primary, _ = start("primary", state="pair", extra=("--election-id", "2"))
    backup = None
    try:
        backup, rest = start("backup", state="pair", extra=("--election-id", "1"), role="backup")
        primary.kill()
        primary.wait()
        took = write_until_accepted(rest, TAKEOVER_LIMIT_S)
    finally:
        for proc in (primary, backup):
            if proc is not None:
                stop_controller(proc, bed.registry)
    figures.values["backup_takeover_ms"] = (
        float("nan") if took is None else round(took * 1000, 1)
    )


def switch_restart(bed: Any, start: Starter, out_dir: Path, figures: Figures) -> None:
    from mpsched.proc.controller import stop_controller

    proc, _ = start("switch", state="switch")
    flow = Flow(bed, out_dir, "switch", seconds=RECOVER_LIMIT_S + 4)
    h2 = bed.host("h2")
    recovered = None
    try:
        time.sleep(2.0)
        bmv2 = bed.net.get("s1").bmv2
        killed = time.monotonic()
        bmv2.process.kill()
        bmv2.stop()
        bmv2.start()
        time.sleep(0.2)
        seen = rx_packets(h2)
        while time.monotonic() - killed < RECOVER_LIMIT_S:
            now = rx_packets(h2)
            if now - seen >= 3:  # the flow again (3 datagrams: not a stray probe or ARP)
                recovered = time.monotonic() - killed
                break
            time.sleep(0.005)
    finally:
        flow.kill()
        stop_controller(proc, bed.registry)
    figures.values["switch_restart_recover_ms"] = (
        float("nan") if recovered is None else round(recovered * 1000, 1)
    )


def fuzz(bed: Any, out_dir: Path, figures: Figures, count: int, rate: float) -> None:
    """The fuzz generator's frames from h1 into s1 (its host port), everything arriving at
    h2 captured and checked; the BMv2 processes must survive, and h1 still reach h2."""
    from mpsched.bench.framecap import read_frames
    from mpsched.p4rt.pipeline import ETHERTYPE_PATH_TAG
    from mpsched.testing.ipv4frames import ETHERTYPE_IPV4, ipv4_header_valid

    cap = [sys.executable, "-m", "mpsched.bench.framecap"]
    got, sent_report = out_dir / "fuzz-h2.bin", out_dir / "fuzz-sent.json"
    h1, h2 = bed.host("h1"), bed.host("h2")
    capture = h2.popen([*cap, "capture", "--iface", h2.defaultIntf().name, "--out", str(got)])
    try:
        time.sleep(0.5)
        sender = h1.popen([*cap, "send", "--iface", h1.defaultIntf().name, "--seed", "1",
                           "--count", str(count), "--rate", str(rate),
                           "--out", str(sent_report)])  # fmt: skip
        sender.wait(timeout=count / rate + 60)
        time.sleep(1.0)  # what is still in flight
    finally:
        capture.send_signal(signal.SIGTERM)
        capture.wait(timeout=10)
    sent = json.loads(sent_report.read_text())
    bad: dict[str, int] = {}
    for frame in read_frames(got):
        ether_type = int.from_bytes(frame[12:14], "big") if len(frame) >= 14 else None
        if ether_type not in (ETHERTYPE_IPV4, ETHERTYPE_PATH_TAG):
            continue  # not IPv4 (ARP, IPv6 neighbour discovery of the hosts)
        ok, reason = ipv4_header_valid(frame)
        if not ok:
            bad[reason] = bad.get(reason, 0) + 1
    ping = h1.cmd(f"ping -c 1 -W 2 {ap.H2_IP}")
    if " 0% packet loss" not in ping:
        figures.notes.append("after the fuzz frames h1 no longer reaches h2:\n" + ping)
    if bad:
        figures.notes.append(f"malformed IPv4 frames that reached h2, by reason: {bad}")
    figures.values["fuzz_frames"] = sent["sent"]
    figures.values["fuzz_malformed_forwarded"] = sum(bad.values())
    figures.values["fuzz_switch_deaths"] = len([d for d in bed.dead_switches() if d[0] == "s"])


def rest_abuse(base_url: str, token: str | None, figures: Figures) -> None:
    """The REST section (src/mpsched/testing/reststall.py) against the server at `base_url`."""
    from mpsched.testing.reststall import rest_figures

    values, notes = rest_figures(base_url, token)
    figures.values.update(values)
    figures.notes += notes


def rest_alone() -> Figures:
    """The REST section by itself: the controller's REST server over a fake backend."""
    from mpsched.testing.reststall import fake_server

    figures = Figures()
    with fake_server() as (url, token):
        rest_abuse(url, token, figures)
    return figures


def run(out_dir: Path, sections: set[str], fuzz_count: int, fuzz_rate: float,
        figures: Figures) -> Figures:
    from mpsched.proc.controller import start_controller
    from mpsched.topo.testbed import Testbed, TopoSpec

    spec = TopoSpec.from_rates((10.0, 10.0, 10.0), backend="linkem", log_dir=out_dir)
    with Testbed(spec) as bed:

        def start(name, state, extra=(), role="ready"):
            return start_controller(
                bed.netcfg_path,
                out_dir / f"controller-{name}.log",
                bed.registry,
                poll=0.5,
                extra_args=extra,
                wait_for=role,
                state_file=out_dir / f"state-{state}.json",
            )

        for stale in out_dir.glob("state-*.json"):
            stale.unlink()
        if "restart" in sections:
            controller_restart(bed, start, out_dir, figures)
        if "takeover" in sections:
            backup_takeover(bed, start, figures)
        if "switch" in sections:
            switch_restart(bed, start, out_dir, figures)
        if sections & {"fuzz", "rest"}:
            from mpsched.proc.controller import stop_controller

            proc, rest = start("abuse", state="abuse")
            try:
                if "fuzz" in sections:
                    fuzz(bed, out_dir, figures, fuzz_count, fuzz_rate)
                if "rest" in sections:
                    rest_abuse(rest.base, rest.token, figures)
            finally:
                stop_controller(proc, bed.registry)
        if dead := bed.dead_switches():
            figures.notes.append(f"dead at the end: {dead}")
    return figures


SECTIONS = ("restart", "takeover", "switch", "fuzz", "rest", "scenario")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="mpsched bench reliability",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--only",
        default=",".join(SECTIONS),
        help=f"comma-separated sections to run (default: all of {','.join(SECTIONS)})",
    )
    p.add_argument("--fuzz-frames", type=int, default=10_000, help="frames the fuzz sends")
    p.add_argument("--fuzz-rate", type=float, default=2000.0, help="their rate, frames/s")
    cpulimit.add_option(p)
    args = p.parse_args(argv)
    if args.fuzz_frames < 1 or args.fuzz_rate <= 0:
        p.error("--fuzz-frames must be >= 1 and --fuzz-rate > 0")
    sections = {s for s in args.only.split(",") if s}
    unknown = sections - set(SECTIONS)
    if unknown:
        p.error(f"--only: unknown section(s) {sorted(unknown)}; known: {', '.join(SECTIONS)}")
    logging.basicConfig(level=logging.WARNING, format="%(name)s: %(message)s")
    testbed = sections - {"scenario"}  # the sections on the testbed
    # the REST section alone needs no testbed: the REST server over a fake backend
    rest_only = testbed == {"rest"}
    problems = prereqs.missing("root", "simple_switch_grpc", "mininet", "ethtool", "linkem")
    problems += [f"{m}: missing; run `make p4`" for m in p4_artifacts().missing()]
    if problems and testbed and not rest_only:
        print("bench-reliability: missing prerequisites:\n  " + "\n  ".join(problems),
              file=sys.stderr)  # fmt: skip
        return 2
    refused = cpulimit.confine(args.cpu_limit, "bench-reliability")
    if refused is not None:
        return refused
    interrupt_on_signals()
    out_dir = build_dir() / "logs" / "bench-reliability"
    out_dir.mkdir(parents=True, exist_ok=True)
    figures = Figures()
    try:
        if rest_only:
            alone = rest_alone()
            figures.notes += alone.notes
            figures.values.update(alone.values)
        elif testbed:
            run(out_dir, testbed, args.fuzz_frames, args.fuzz_rate, figures)
        if "scenario" in sections:
            from mpsched.bench.scenario_fuzz import bench

            notes, values = bench()
            figures.notes += notes
            figures.values.update(values)
    except KeyboardInterrupt:
        print("bench-reliability: interrupted; cleaned up", file=sys.stderr)
        return 130
    for note in figures.notes:
        print(note)
    for line in figures.lines():
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
