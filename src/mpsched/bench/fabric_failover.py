"""`make bench-fabric`'s failover figure: how long new flowlets keep taking a failed link.

A run of scenarios/fabric-failure.yaml (a 4x2 leaf-spine, leaf1-spine2 down from 20 to 40 s
under all-to-all web-search flows) under the congestion-aware policy, with a capture on every
edge switch's ports towards the fabric (`tcpdump -Q out`: the frames the edge sends, 64 bytes
each, only the path tag's Ether type). Each captured frame's path tag gives (source edge,
destination edge, path id) and whether it is a probe (`PATH_FLAG_PROBE`). From the fabric's
paths (`mpsched.fabric.paths`), `crossing_keys` lists the (source, destination, path id) whose
path crosses the failed link; `failover` takes the data frames (not probes: those keep testing
the dead path on purpose) with such a tag sent between the down instant and the up instant,
and gives the time from the down instant to the last of them, the worst over the pairs. A
frame on the dead path is either a packet of a flowlet placed there before the failure was
noticed or a new flowlet the scheduler still sends there, so the figure bounds from above the
time until no new flowlet takes the dead path. It fails when detection or re-placement is slow
(the last such frame late), and it is empty rather than flattering when nothing used those
paths before the failure (`frames_before` = 0: the run proves nothing, and the bench says so).

The down instant is the wall-clock time the runner started the link schedules plus the
event's `down_s` (the schedule thread acts within a few ms of it); the capture's timestamps
are the kernel's wall clock. Edge ports, not transit ones: a tag's path is chosen at its
source edge, and every frame towards the failed link leaves some edge by the first link of its
path, so the source edge's capture sees every frame of every affected path. A fabric whose
re-routing gives a failed path's id to a new path (a graph's detour) would make the tag
ambiguous after the re-route: `crossing_keys` leaves such ids out.
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from mpsched.fabric.model import Fabric
from mpsched.fabric.paths import Failures, reroute, route
from mpsched.proc import cpulimit
from mpsched.proc.layout import REPO_ROOT
from mpsched.testing.tagcap import TagFrame, TagKey, read_tag_frames

log = logging.getLogger(__name__)

FAILURE_SCENARIO = REPO_ROOT / "scenarios" / "fabric-failure.yaml"
DEFAULT_POLICY = "ca"  # the policy under test, as bench-fabric's
FAILOVER_FILE = "failover.json"

def crossing_keys(fabric: Fabric, link: str) -> set[TagKey]:
    """The (source, destination, path id) of the intact fabric whose path crosses `link`,
    without those whose id the re-route after its failure gives to another path."""
    routing = route(fabric)
    after = reroute(fabric, routing, Failures(links=frozenset({link})))
    keys = set()
    for (src, dst), paths in routing.baseline.items():
        for pid, path in paths.items():
            if link in path.links and pid not in after.current[(src, dst)]:
                keys.add((src, dst, pid))
    return keys


@dataclass(frozen=True)
class Failover:
    """One run's failover: `ms` from the down instant to the last data frame on a path
    through the failed link (0 if none followed it; NaN if no such frame came in the
    `window_s` before it, so the run shows nothing), `frames_before` those in that window,
    `frames_after` those after it, `worst` the key of the last one, `late` each of those
    after it as (ms after the down instant, key), for looking at an outlier."""

    ms: float
    frames_before: int
    frames_after: int
    worst: TagKey | None
    late: tuple[tuple[float, TagKey], ...] = ()


def failover(frames: Iterable[TagFrame], keys: set[TagKey], down_t: float, up_t: float,
             window_s: float = 5.0) -> Failover:
    """The failover of one run (see `Failover`) from its captured frames."""
    before = 0
    late: list[tuple[float, TagKey]] = []
    last, worst = down_t, None
    for f in frames:
        if f.probe or f.key not in keys:
            continue
        if down_t - window_s <= f.ts < down_t:
            before += 1
        elif down_t <= f.ts < up_t:
            late.append((round((f.ts - down_t) * 1000.0, 1), f.key))
            if f.ts >= last:
                last, worst = f.ts, f.key
    ms = (last - down_t) * 1000.0 if before else math.nan
    return Failover(ms, before, len(late), worst, tuple(late))


def _up_steps(fabric: Fabric) -> list[tuple[str, float, bool]]:
    """(link, time, up) of every schedule step that sets a link's `up`."""
    out = []
    for link in fabric.links:
        for event in (*link.segment.forward_events, *link.segment.reverse_events):
            changes = getattr(event, "changes", {})
            if "up" in changes:
                out.append((link.name, float(event.at_s), bool(changes["up"])))
    return out


def failed_link(fabric: Fabric) -> tuple[str, float, float]:
    """The one link the fabric's schedules take down: (name, down_s, up_s; inf if it stays
    down). ValueError unless exactly one link goes down."""
    steps = _up_steps(fabric)
    names = sorted({name for name, _, up in steps if not up})
    if len(names) != 1:
        raise ValueError(f"the failover run needs one link that goes down, got {names}")
    down = min(t for name, t, up in steps if name == names[0] and not up)
    ups = [t for name, t, up in steps if name == names[0] and up and t > down]
    return names[0], down, min(ups, default=math.inf)


def explain(run_dir: Path, record: dict, fabric: Fabric, dead_after_s: float) -> list[str]:
    """With the run's inbound captures (`in-*.pcap`): per late frame, which of its pair's
    paths its sender then judged alive, and the spans in which the sending edges judged the
    paths of the failed link's pairs dead (fabric_liveness.py)."""
    from mpsched.bench import fabric_liveness as fl

    received = read_tag_frames(sorted(run_dir.glob("in-*.pcap")))
    if not received or "down_t" not in record:
        return []
    s = fl.signs(received)
    _, down_s, up_s = failed_link(fabric)
    down_t = record["down_t"]
    up_t = down_t + up_s - down_s
    k = max(len(p) for p in route(fabric).baseline.values())
    lines = []
    for ms, key, alive in fl.states_at(s, [(m, tuple(x)) for m, x in record["late"]], down_t, k,
                                       dead_after_s):
        lines.append(f"    late {ms:8.1f} ms {key}: sender's paths alive {alive}")
    for src, dst, _ in sorted(crossing_keys(fabric, record["link"])):
        for p in range(1, k + 1):
            spans = fl.dead_spans(s, (src, dst, p), dead_after_s, down_t - 5.0, up_t)
            shown = ", ".join(f"{(a - down_t) * 1e3:.0f}..{(b - down_t) * 1e3:.0f}"
                              for a, b in spans[:8])
            lines.append(f"    {src}->{dst} path {p}: dead {len(spans)} times (ms): {shown}")
    return lines


def read_failovers(out: Path) -> list[dict]:
    """The failover phase's records (OUT/failover/.../failover.json), in path order."""
    return [json.loads(p.read_text()) for p in sorted((out / "failover").rglob(FAILOVER_FILE))]


def failover_record(run_dir: Path, fabric: Fabric, start_wall: float) -> dict:
    """Evaluate one failover run's captures (its directory's tags-*.pcap) and write
    `failover.json` there."""
    link, down_s, up_s = failed_link(fabric)
    keys = crossing_keys(fabric, link)
    frames = read_tag_frames(sorted(run_dir.glob("tags-*.pcap")))
    down_t = start_wall + down_s
    got = failover(frames, keys, down_t, start_wall + up_s)
    record = {"run": run_dir.name, "link": link, "down_s": down_s, "down_t": down_t,
              "ms": got.ms,
              "frames_before": got.frames_before, "frames_after": got.frames_after,
              "worst": list(got.worst) if got.worst else None,
              "late": [[ms, list(key)] for ms, key in got.late],
              "probes_after": sum(1 for f in frames if f.probe and f.key in keys
                                  and f.ts >= down_t)}
    (run_dir / FAILOVER_FILE).write_text(json.dumps(record, indent=1, allow_nan=True))
    for pcap in run_dir.glob("tags-*.pcap"):
        pcap.unlink()
    return record


def run_failover(policy: str, runs: int, out: Path, duration_s: float | None,
                 inbound: bool = False) -> None:
    """The failover phase: `runs` runs of FAILURE_SCENARIO under `policy` into OUT/failover
    (`inbound`: capture what the edges receive too, `fabric_failover.start_captures`)."""
    import dataclasses

    from mpsched.bench.fabric_run import CapturingRun
    from mpsched.lab import analysis, report
    from mpsched.lab.scenario import load

    sc = load(FAILURE_SCENARIO, fabric=True)
    if duration_s is not None:
        sc = dataclasses.replace(sc, duration_s=max(duration_s, failed_link(sc.fabric)[1] + 5))
    for k in range(runs):
        run_dir = out / "failover" / sc.name / policy / f"run{k}"
        log.info("failover run %d/%d: %s", k + 1, runs, run_dir)
        run = CapturingRun(sc, policy, k, run_dir)
        run.inbound = inbound
        try:
            raw = run.execute()
            result = analysis.analyse(raw)
        except Exception as exc:  # one failed run must not lose the others
            log.error("failover run %d failed: %s", k, exc)
            continue
        report.write_run(run_dir, result)
        failover_record(run_dir, sc.fabric, run.schedule_wall)


def main(argv: list[str] | None = None) -> int:
    """Only `make bench-fabric`'s failover phase (src/mpsched/bench/fabric.py), or its report."""
    import argparse
    import json

    from mpsched.bench.fct import add_out_options, check_out_options, fresh_out
    from mpsched.lab.scenario import load

    p = argparse.ArgumentParser(prog="mpsched bench fabric-failover",
                                description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--runs", type=int, default=3, help="failover runs (default: %(default)s)")
    p.add_argument("--policy", default=DEFAULT_POLICY, help="default: %(default)s")
    p.add_argument("--duration", type=float, default=None, help="seconds per run (>= down_s + 5)")
    p.add_argument("--inbound", action="store_true",
                   help="capture what the edges receive too, and replay their liveness "
                        "(fabric_liveness.py) at each late frame")
    p.add_argument("--dead-after-ms", type=float, default=50.0,
                   help="the liveness dead_after to replay (default: %(default)s)")
    cpulimit.add_option(p)
    add_out_options(p, "bench-fabric-failover", "report the runs under DIR")
    args = p.parse_args(argv)
    check_out_options(p, args)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    refused = cpulimit.confine(args.cpu_limit, "bench-fabric-failover")
    if refused is not None:
        return refused
    source = args.reuse or fresh_out(args.out, "bench-fabric-failover")
    if args.reuse is None:
        run_failover(args.policy, args.runs, source, args.duration, args.inbound)
    fabric = load(FAILURE_SCENARIO, fabric=True).fabric
    for path in sorted((source / "failover").rglob(FAILOVER_FILE)):
        record = json.loads(path.read_text())
        print(f"{path.parent}: {record['ms']:.0f} ms, {record['frames_before']} / "
              f"{record['frames_after']} frames, last on {record['worst']}, late (ms, key): "
              f"{record['late'][-10:]}")
        print("\n".join(explain(path.parent, record, fabric, args.dead_after_ms / 1000)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
