"""What a run (src/mpsched/lab/runner.py) reads while it runs and at its end: the switches'
per-path counters over REST and the links' delivered bytes every poll (a fabric's links'
instead), and the controller's decision log and views once the workloads are done."""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import requests

from mpsched.client.rest import RestClient
from mpsched.lab.testbeds import delivered_bytes

if TYPE_CHECKING:
    from mpsched.lab.runner import RunRaw

log = logging.getLogger(__name__)


def path_counters(paths: list[dict[str, Any]]) -> dict[int, int]:
    """Per path id (GET /paths): the bytes s1, the sending edge, sent on it."""
    counters = {}
    for p in paths:
        s1 = p.get("by_switch", {}).get("s1") or {}
        counters[int(p["id"])] = int(s1.get("tx_bytes", 0))
    return counters


def poll(raw: RunRaw, bed: Any, rest: RestClient | None) -> str | None:
    """One poll of the run's counters into `raw`: two edges' per-path counters and their
    paths' delivered bytes, or a fabric's links' delivered bytes (the controller only asked
    whether it answers); the failure to report when the controller does not answer, else
    None."""
    if raw.scenario.fabric is not None:
        return _poll_fabric(raw, bed, rest)
    if rest is None:  # two edges always run under the controller (plain_ecmp.py)
        return None
    try:
        paths = rest.get("/paths")
    except requests.RequestException as exc:
        return f"controller REST: {exc}"
    raw.path_counters.append((time.time(), path_counters(paths)))
    try:
        stats = bed.link_stats()
    except Exception as exc:  # an emulator that died is caught by dead_switches()
        log.debug("link stats: %s", exc)
        return None
    delivered = {i: int(s.get("ab", {}).get("tx_bytes", 0)) for i, s in stats.items()}
    raw.link_tx.append((time.time(), delivered))
    return None


def _poll_fabric(raw: RunRaw, bed: Any, rest: RestClient | None) -> str | None:
    try:
        if rest is not None:
            rest.get("/switches")
    except requests.RequestException as exc:
        return f"controller REST: {exc}"
    try:
        stats = bed.link_stats()
    except Exception as exc:  # an emulator that died is caught by dead_switches()
        log.debug("link stats: %s", exc)
        return None
    raw.link_bytes.append((time.time(), delivered_bytes(stats)))
    return None


def save_controller_views(rest: RestClient, run_dir: Path, policy: str) -> None:
    """The controller's decision log of the run (decisions.json in `run_dir`), the switches'
    sessions, drop counts and probes (GET /switches, switches.json) and, for `adaptive`, what
    it learned and its latest dwells (GET /classes/0/adaptive, adaptive.json)."""
    try:
        decisions = rest.get("/decisions", {"since": 0, "limit": 1000})
    except requests.RequestException as exc:
        log.debug("decision log: %s", exc)
        return
    (run_dir / "decisions.json").write_text(json.dumps(decisions, indent=1))
    try:
        switches = rest.get("/switches")
    except requests.RequestException as exc:
        log.debug("switches: %s", exc)
    else:
        (run_dir / "switches.json").write_text(json.dumps(switches, indent=1))
    if policy != "adaptive":
        return
    try:
        view = rest.get("/classes/0/adaptive")
    except requests.RequestException as exc:
        log.debug("adaptive view: %s", exc)
        return
    (run_dir / "adaptive.json").write_text(json.dumps(view, indent=1))
