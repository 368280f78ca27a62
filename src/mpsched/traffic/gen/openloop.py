"""Open-loop roles: every flow starts at its arrival time in a thread of its own, and its
FCT counts from that arrival (`files`: given sizes, Poisson arrivals; `poisson`: a published
size CDF at an offered load; `plan`: a schedule, each flow to its own destination)."""

from __future__ import annotations

import argparse
import json
import random
import threading
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from mpsched.traffic import flowsizes
from mpsched.traffic.gen.base import Stopper
from mpsched.traffic.gen.sender import port_rng, transfer


def open_loop(
    args: argparse.Namespace,
    stop: Stopper,
    arrivals: Iterable[tuple[float, int] | tuple[float, int, str]],
    max_concurrent: int = 0,
    until_s: float | None = None,
) -> list[dict[str, Any]]:
    """Start one flow per `(arrival s after now, size bytes)` at its arrival, each in a thread
    of its own, until `until_s` (or the deadline); returns the flows' records in arrival
    order. `max_concurrent` > 0 bounds the flows in progress: a flow that arrives while that
    many run waits for a slot inside its own thread (later arrivals are not held back), and
    its FCT includes the wait. Each record has `arrival` (wall-clock time of its arrival).
    An arrival `(s, size, dst)` goes to address `dst` instead of `--dst` (its record says
    `dst`)."""
    slots = threading.Semaphore(max_concurrent) if max_concurrent > 0 else None
    records: list[dict[str, Any]] = []
    threads = []
    t0 = time.monotonic()
    wall0 = time.time()

    def one(size: int, flow: int, arrival: float, rec: dict[str, Any]) -> None:
        to = args if "dst" not in rec else argparse.Namespace(**{**vars(args), "dst": rec["dst"]})
        if slots is not None:
            while not slots.acquire(timeout=0.2):
                if stop.done():
                    rec.update(wait_s=time.monotonic() - arrival, incomplete=True)
                    return
        try:
            rec.update(transfer(to, size, stop, port_rng(args.seed, flow), arrival))
        finally:
            if slots is not None:
                slots.release()

    for flow, (at, size, *dst) in enumerate(arrivals):
        if until_s is not None and at >= until_s:
            break
        if stop.wait(max(0.0, t0 + at - time.monotonic())):
            break
        rec: dict[str, Any] = {"arrival": wall0 + at, "size": size}
        if dst:
            rec["dst"] = dst[0]
        records.append(rec)
        t = threading.Thread(target=one, args=(size, flow, t0 + at, rec), daemon=True)
        t.start()
        threads.append(t)
    for t in threads:
        t.join(timeout=max(0.0, (stop.deadline or time.monotonic()) - time.monotonic()) + 1)
    return [dict(r) for r in records]


def role_files(args: argparse.Namespace, stop: Stopper) -> dict[str, Any]:
    rng = random.Random(args.seed)
    sizes = [int(s) * 1000 for s in args.sizes_kb.split(",")]
    plan = [sizes[i % len(sizes)] for i in range(args.count)]
    rng.shuffle(plan)
    arrivals = []
    at = 0.0
    for size in plan:
        at += rng.expovariate(1000.0 / args.interarrival_ms)
        arrivals.append((at, size))
    results = open_loop(args, stop, arrivals, args.concurrency)
    return {"role": "files", "transfers": results, "planned": len(plan)}


def role_poisson(args: argparse.Namespace, stop: Stopper) -> dict[str, Any]:
    dist = flowsizes.distribution(args.sizes, args.max_kb * 1000, args.scale)
    arrivals = flowsizes.poisson_arrivals(random.Random(args.seed), dist, args.rate_mbps)
    results = open_loop(args, stop, arrivals, args.max_concurrent, args.arrivals_s)
    return {
        "role": "poisson",
        "transfers": results,
        "planned": len(results),
        "sizes": args.sizes,
        "rate_mbps": args.rate_mbps,
        "mean_size": dist.mean(),
    }


def read_flows(path: str) -> list[tuple[float, int, str]]:
    """A `plan` role's schedule: the JSON file's ``flows``, each ``[at_s, dst, size]``."""
    doc = json.loads(Path(path).read_text())
    return [(float(at), int(size), str(dst)) for at, dst, size in doc["flows"]]


def role_plan(args: argparse.Namespace, stop: Stopper) -> dict[str, Any]:
    flows = read_flows(args.flows)
    results = open_loop(args, stop, flows, args.max_concurrent)
    return {"role": "plan", "transfers": results, "planned": len(flows)}
