"""`make bench-telemetry`: the data plane's path measurements against known emulated paths.

Two paths with configured one-way delay, loss and rate (forward direction; the reverse is
lossless), a constant-bit-rate UDP stream per path from the cross-traffic hosts (pinned to
their path, below its rate so that no queue drops add to the configured loss), and the
controller estimating each path from the egress edge's reports. After a warm-up the bench
reads `GET /paths/{id}/telemetry` and compares the mean of the snapshots taken after the
warm-up (one per second, each over the estimator's 5 s window) with:
- loss: the estimate vs the configured Bernoulli loss (relative error);
- goodput: the estimate (Ethernet bytes delivered at the egress, path tag included) vs what
  the receiver got, converted to the same bytes (UDP payload + UDP/IP/Ethernet headers + the
  tag, whose size is read from the BMv2 JSON);
- RTT: the passive RTT estimate vs 2 x the configured one-way delays (when the data plane
  measures RTT; otherwise `nan` with the reason);
- failover: time from a path going down to s1 no longer placing traffic on it (when the data
  plane fails over locally; otherwise `nan`).
Ends with `rtt_rel_err=`, `loss_rel_err=`, `goodput_rel_err=`, `failover_ms=`.
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import signal
import subprocess
import sys
import time
from pathlib import Path

from mpsched import toolchain
from mpsched.layout import build_dir, p4_artifacts

log = logging.getLogger("mpsched.bench.telemetry")

PATHS = (  # (one-way delay ms, forward loss, rate Mbit/s, offered UDP Mbit/s)
    (10.0, 0.02, 10.0, 7.0),
    (25.0, 0.05, 5.0, 3.5),
)
WARMUP_S = 4.0  # snapshots before this (after traffic start) are not used
PAYLOAD = 1200
BASE_PORT = 6000
TAG_HEADER_TYPE = "path_tag_t"


def tag_bytes(bmv2_json: Path) -> int:
    """Size of the path tag from the compiled program (0 if it has none)."""
    doc = json.loads(bmv2_json.read_text())
    for ht in doc.get("header_types", []):
        if ht.get("name") == TAG_HEADER_TYPE:
            return sum(f[1] for f in ht["fields"]) // 8
    return 0


def steady_mean(snapshots: list[dict]) -> dict[str, float | None]:
    """Per estimate, the mean over the snapshots that have it (None if none has)."""
    out: dict[str, float | None] = {}
    for key in ("loss", "goodput_mbps", "srtt_ms"):
        values = [s[key] for s in snapshots if s.get(key) is not None]
        out[key] = sum(values) / len(values) if values else None
    return out


def rel_err(measured: float | None, expected: float) -> float:
    if measured is None or expected == 0:
        return math.nan
    return abs(measured - expected) / expected


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m mpsched.bench.telemetry",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--seconds", type=float, default=20.0, help="traffic time")
    args = p.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(name)s: %(message)s")
    problems = toolchain.missing("root", "simple_switch_grpc", "mininet", "ethtool", "linkem")
    art = p4_artifacts()
    problems += [f"{m}: missing; run `make p4`" for m in art.missing()]
    if problems:
        print(
            "bench-telemetry: missing prerequisites:\n  " + "\n  ".join(problems), file=sys.stderr
        )
        return 2

    from mpsched.bmv2 import free_port
    from mpsched.controller.__main__ import command as controller_command
    from mpsched.demo import RestClient, wait_controller
    from mpsched.emu.params import LinkParams
    from mpsched.runner import raise_interrupt
    from mpsched.topo.testbed import PathSpec, Testbed, TopoSpec

    signal.signal(signal.SIGINT, raise_interrupt)
    signal.signal(signal.SIGTERM, raise_interrupt)
    paths = tuple(
        PathSpec(
            LinkParams(delay_ms=d, loss=loss, rate_mbps=r),
            LinkParams(delay_ms=d, rate_mbps=r),
            cross_traffic=True,
        )
        for d, loss, r, _ in PATHS
    )
    tag = tag_bytes(art.bmv2_json)
    frame = PAYLOAD + 8 + 20 + 14 + tag
    out_dir = build_dir() / "logs" / "bench-telemetry"
    out_dir.mkdir(parents=True, exist_ok=True)
    procs: list[subprocess.Popen] = []
    try:
        with Testbed(TopoSpec(paths=paths, backend="linkem", log_dir=out_dir)) as bed:
            port = free_port()
            with (out_dir / "controller.log").open("wb") as logf:
                ctl = subprocess.Popen(
                    controller_command(bed.netcfg_path, port, 0.5),
                    stdout=logf,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                )
            procs.append(ctl)
            bed.registry.add_process(ctl.pid, " ".join(ctl.args))
            rest = RestClient(f"http://127.0.0.1:{port}")
            wait_controller(rest, ctl, timeout=30)
            gen = [sys.executable, "-m", "mpsched.traffic.gen"]
            for i in range(1, len(PATHS) + 1):
                sink_port = BASE_PORT + i
                procs.append(
                    bed.host(f"y{i}").popen(
                        [
                            *gen,
                            "sink",
                            "--port",
                            str(sink_port),
                            "--udp-port",
                            str(sink_port),
                            "--out",
                            str(out_dir / f"sink{i}.json"),
                        ]
                    )
                )
            time.sleep(1.0)
            started = time.time()
            for i, (_d, _l, _r, offered) in enumerate(PATHS, start=1):
                procs.append(
                    bed.host(f"x{i}").popen(
                        [
                            *gen,
                            "cbr",
                            "--dst",
                            f"10.0.2.{10 + i}",
                            "--port",
                            "0",
                            "--udp-port",
                            str(BASE_PORT + i),
                            "--rate-mbps",
                            str(offered),
                            "--size",
                            str(PAYLOAD),
                            "--seconds",
                            str(args.seconds),
                            "--out",
                            str(out_dir / f"cbr{i}.json"),
                        ]
                    )
                )
            time.sleep(max(6.0, args.seconds - 2))
            views = {i: rest.get(f"/paths/{i}/telemetry") for i in range(1, len(PATHS) + 1)}
            for proc in procs[-len(PATHS) :]:
                proc.wait(timeout=args.seconds + 10)
            for proc in procs[1 : 1 + len(PATHS)]:
                proc.terminate()
                proc.wait(timeout=10)
    except KeyboardInterrupt:
        print("bench-telemetry: interrupted; cleaned up", file=sys.stderr)
        return 130
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
    loss_errs, goodput_errs, rtt_errs = [], [], []
    print(f"{'path':>4} {'what':<10} {'configured':>12} {'measured':>12} {'error':>8}")
    for i, (delay, loss, _rate, _offered) in enumerate(PATHS, start=1):
        hist = views[i]["directions"].get("s1->s2", {}).get("history", [])
        cur = steady_mean([h for h in hist if h["t"] >= started + WARMUP_S])
        sink = json.loads((out_dir / f"sink{i}.json").read_text())["udp"]
        cbr = json.loads((out_dir / f"cbr{i}.json").read_text())
        seconds = cbr["ended"] - cbr["started"]
        got_l2 = sink["packets"] * frame * 8 / seconds / 1e6
        rows = [
            ("loss", loss, cur.get("loss"), loss_errs),
            ("goodput", got_l2, cur.get("goodput_mbps"), goodput_errs),
            ("rtt", 2 * delay, cur.get("srtt_ms"), rtt_errs),
        ]
        for what, expected, measured, errs in rows:
            err = rel_err(measured, expected)
            errs.append(err)
            shown = "n/a" if measured is None else f"{measured:.4g}"
            print(f"{i:>4} {what:<10} {expected:>12.4g} {shown:>12} {err:>8.3f}")
    worst = {
        k: max(v) if not any(math.isnan(x) for x in v) else math.nan
        for k, v in (("rtt", rtt_errs), ("loss", loss_errs), ("goodput", goodput_errs))
    }
    print("failover: not measured (no data-plane failover in this build)")
    print(f"rtt_rel_err={worst['rtt']:.3f}")
    print(f"loss_rel_err={worst['loss']:.3f}")
    print(f"goodput_rel_err={worst['goodput']:.3f}")
    print("failover_ms=nan")
    return 0


if __name__ == "__main__":
    sys.exit(main())
