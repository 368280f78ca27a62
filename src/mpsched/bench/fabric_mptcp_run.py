"""A fabric run that samples the controller's MPTCP connections (`make bench-fabric-mptcp`).

`SamplingRun` is the runner's `Run` (src/mpsched/lab/runner.py) plus, for the measured time, a
thread that reads `GET /mptcp/connections` every `SAMPLE_S` and, at the end, writes the
samples to ``mptcp.json`` in the run's directory: ``[{"t": s after the start, "steering":
bool, "connections": [...]}, ...]`` (each connection as the REST answer gives it: its
subflows with their pinned path ids). It also keeps what the analysis of the MPTCP
connections reads (src/mpsched/lab/fabric_mptcp.py) for a later look: the links' counters as
polled (``link_bytes.json``: ``[[wall time, {"<link>:ab|ba": bytes}], ...]``) beside the
receiving hosts' captures, which the run leaves in place. `distinct_share` says how often
each connection's subflows were on distinct paths (with steering; hashed subflows have no
pins to read).
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import requests

from mpsched.lab.runner import Run

log = logging.getLogger(__name__)

SAMPLE_S = 1.0
SAMPLES_FILE = "mptcp.json"
LINK_BYTES_FILE = "link_bytes.json"


def subflow_paths(connection: Mapping[str, Any]) -> list[int | None]:
    """The pinned path id of each subflow of a connection (None: not pinned)."""
    return [s.get("path_id") for s in connection.get("subflows", [])]


def distinct_share(samples: Iterable[Mapping[str, Any]], t0: float = 0.0,
                   t1: float = float("inf")) -> tuple[int, int]:
    """(distinct, counted) over the samples in [t0, t1] and their connections with at least
    two subflows, all pinned: how many had every subflow on its own path."""
    distinct = counted = 0
    for sample in samples:
        if not t0 <= float(sample.get("t", 0.0)) <= t1:
            continue
        for conn in sample.get("connections", []):
            paths = subflow_paths(conn)
            if len(paths) < 2 or None in paths:
                continue
            counted += 1
            distinct += len(set(paths)) == len(paths)
    return distinct, counted


class SamplingRun(Run):
    """`Run` with the MPTCP connections sampled through the run (module docstring)."""

    def execute(self, progress: Callable[[str], None] = lambda _m: None) -> Any:
        try:
            return super().execute(progress)
        finally:
            (self.raw.dir / LINK_BYTES_FILE).write_text(json.dumps(self.raw.link_bytes))

    def _measure(self, rest: Any, t0: float, progress: Callable[[str], None]) -> None:
        samples: list[dict[str, Any]] = []
        stop = threading.Event()

        def sample() -> None:
            while not stop.wait(SAMPLE_S):
                try:
                    got = rest.get("/mptcp/connections")
                except requests.RequestException as exc:
                    log.debug("mptcp connections: %s", exc)
                    continue
                samples.append({"t": round(time.monotonic() - t0, 3), **got})

        thread = threading.Thread(target=sample, name="mptcp-sampler", daemon=True)
        thread.start()
        try:
            super()._measure(rest, t0, progress)
        finally:
            stop.set()
            thread.join(timeout=5)
            (self.raw.dir / SAMPLES_FILE).write_text(json.dumps(samples, indent=1))
