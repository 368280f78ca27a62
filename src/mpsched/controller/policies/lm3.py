"""MPTCP-LM3: lightweight path management (MPTCP-LM3) on top of any policy, in-network form.

Paper (Cao et al., "Towards Adaptive Multipath Managing: A Lightweight Path Management
Mechanism", Applied Sciences 2020, doi:10.3390/app10010380; Section 3):
- R_p = sigma · cwnd_p + ε · RTT_p, sigma + ε = 1, sigma = ε = 1/2 by default, with
  cwnd_p = (cwnd - H_min) / (H_max - H_min) and RTT_p = (Π_max - RTT) / (Π_max - Π_min);
- Algorithm 1: a receiver buffer-blocking event
  increments buf_bloc_count; at 1 or 2 the number of active paths is halved (the better
  half by R is kept); at 3 only the best path is kept and the count is reset to 0;
- Algorithm 1 lines 15-22: every period (per RTT) a removed path is moved
  back into the active list when R_p >= the mean R of the active paths.

In-network reading (docs/scheduling.md, "LM3 path activation"):
- `Lm3.apply` runs once per control period (≈ the largest RTT) after the policy's
  `decide`, and zeroes the weights of the paths outside the active set.
- Buffer-blocking event: the egress sees arrivals out of order; `blocking_threshold`
  out-of-order arrivals in one period count as one event (`blocking_events` converts a
  count). `apply` takes the number of events of the period and makes at most one step per
  period (the paper's algorithm detects blocking at most once per RTT).
- Window stand-in x_p (`window_source`): "bdp" (default) = capacity · srtt, the window the
  path sustains regardless of how much the scheduler currently sends there; "inflight" =
  the latest bytes in flight. With "inflight" a removed path's window falls towards 0 and it
  can hardly be re-admitted, which is why "bdp" is the default. When the chosen source is
  missing the other one is used; when both are, cwnd_norm = 1/2 (neutral).
- Normalisation: H and Π are the bounds over the alive paths' current values, not each
  path's own history as the paper's text reads ("measured on p_i"): R then ranks paths
  against each other, which is what halving and re-admission compare. A range of 0 gives
  1/2 (neutral), as does an unknown srtt.

Reconstructions and deviations:
- Halving keeps ceil(n / 2) paths (3 -> 2 -> 1; the paper's ½ · path_num does not say how
  to round; rounding up keeps the one-after-three step meaningful).
- No re-admission in a period in which a blocking event shrank the set: otherwise paths
  with R equal to the kept ones (ties, or neutral unmeasured values) would undo the halving
  at once. Re-admission runs in every other period.
- Dead paths leave the active set at once. A path that was active when it died is active
  again when it returns (liveness removed it, not LM3: it gets its share back), unless a
  buffer-blocking event shrank the set meanwhile (then LM3 chose the set without it, and
  it comes back by re-admission like a path LM3 removed). Paths are all active at the start
  (p_A = p_list); a path first seen later starts as removed. If no alive path remains
  active, the set is reset to all alive paths and the count to 0.
- If the policy gave every active path weight 0 (e.g. winner-takes-all on a removed
  path), the active paths get equal weights; with no path alive the decision passes through.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from mpsched.controller.model.decision import Decision
from mpsched.controller.model.errors import FieldError
from mpsched.controller.model.paths import PathState
from mpsched.controller.policies.base import fmt_scores

log = logging.getLogger(__name__)

WINDOW_SOURCES = ("bdp", "inflight")


@dataclass(frozen=True)
class Lm3Params:
    sigma: float = field(
        default=0.5, metadata={"min": 0.0, "max": 1.0, "doc": "sigma: weight of the window term"}
    )
    epsilon: float = field(
        default=0.5, metadata={"min": 0.0, "max": 1.0, "doc": "ε: weight of the RTT term"}
    )
    blocking_threshold: int = field(
        default=16,
        metadata={
            "min": 1,
            "max": 1_000_000,
            "doc": "out-of-order arrivals in one period that count as one buffer-blocking event",
        },
    )
    window_source: str = field(
        default="bdp",
        metadata={"choices": WINDOW_SOURCES, "doc": "window stand-in: capacity·srtt or inflight"},
    )

    def __post_init__(self) -> None:
        if not math.isclose(self.sigma + self.epsilon, 1.0, abs_tol=1e-9):
            raise FieldError("sigma", "sigma + epsilon must be 1 (set both)")


def _norm(value: float | None, lo: float, hi: float, invert: bool = False) -> float:
    if value is None or hi - lo <= 0:
        return 0.5
    x = (value - lo) / (hi - lo)
    return 1.0 - x if invert else x


def quality(paths: Sequence[PathState], params: Lm3Params) -> dict[int, float]:
    """R_p = sigma · cwnd_norm + ε · rtt_norm over `paths` (bounds over these paths)."""

    def window(p: PathState) -> float | None:
        bdp = p.bdp_bytes()
        inflight = None if p.inflight_bytes is None else float(p.inflight_bytes)
        first, second = (bdp, inflight) if params.window_source == "bdp" else (inflight, bdp)
        return first if first is not None else second

    win = {p.path_id: window(p) for p in paths}
    rtt = {p.path_id: p.srtt_ms for p in paths}
    wk = [v for v in win.values() if v is not None]
    rk = [v for v in rtt.values() if v is not None]
    h_min, h_max = (min(wk), max(wk)) if wk else (0.0, 0.0)
    r_min, r_max = (min(rk), max(rk)) if rk else (0.0, 0.0)
    return {
        pid: params.sigma * _norm(win[pid], h_min, h_max)
        + params.epsilon * _norm(rtt[pid], r_min, r_max, invert=True)
        for pid in win
    }


def ranked(r: Mapping[int, float], ids: set[int] | frozenset[int]) -> list[int]:
    """ids by R descending, ties by the lower id."""
    return sorted(ids, key=lambda pid: (-r[pid], pid))


class Lm3:
    """The active path set; `apply` once per control period."""

    Params = Lm3Params

    def __init__(self, params: Lm3Params | None = None) -> None:
        self.params = params if params is not None else Lm3Params()
        self.buf_bloc_count = 0
        self._active: set[int] = set()
        self._known: set[int] = set()
        self._died_active: set[int] = set()  # active when they died: active again on return

    @property
    def active(self) -> frozenset[int]:
        return frozenset(self._active)

    def blocking_events(self, out_of_order: int) -> int:
        """Buffer-blocking events in `out_of_order` arrivals of one period."""
        return max(0, out_of_order) // self.params.blocking_threshold

    def apply(
        self, paths: Sequence[PathState], decision: Decision, blocking_events: int, now: float
    ) -> Decision:
        alive = {p.path_id for p in paths if p.alive}
        if not alive:
            return decision
        if not self._known:
            self._active = set(alive)
        self._known |= {p.path_id for p in paths}
        self._died_active |= self._active - alive
        self._active &= alive
        notes: list[str] = []
        returned = sorted(self._died_active & alive)
        if returned:
            self._active |= set(returned)
            self._died_active -= set(returned)
            notes.append(f"returned {returned}")
        if not self._active:
            self._active = set(alive)
            self.buf_bloc_count = 0
            notes.append("no active path alive: reset to all alive")
        r = quality([p for p in paths if p.alive], self.params)
        shrank = False
        if blocking_events > 0:
            self.buf_bloc_count += 1
            order = ranked(r, self._active)
            if self.buf_bloc_count >= 3:
                keep = 1
                self.buf_bloc_count = 0
            else:
                keep = math.ceil(len(order) / 2)
            shrank = keep < len(order)
            self._active = set(order[:keep])
            if shrank:
                self._died_active.clear()
            notes.append(f"buffer blocking: keep {keep} {sorted(self._active)}")
        if not shrank:
            mean = sum(r[pid] for pid in self._active) / len(self._active)
            back = sorted(pid for pid in alive - self._active if r[pid] >= mean)
            if back:
                self._active |= set(back)
                notes.append(f"re-admitted {back} (R >= mean {mean:.3g})")
        weights = {pid: (w if pid in self._active else 0.0) for pid, w in decision.weights.items()}
        if not any(weights.values()):
            weights = {pid: (1.0 if pid in self._active else 0.0) for pid in decision.weights}
            notes.append("policy weighted no active path: equal weights over the active set")
        vq = {pid: v for pid, v in decision.vq.items() if pid in self._active}
        extra = f" {'; '.join(notes)};" if notes else ""
        reason = (
            f"{decision.reason} | lm3: active {sorted(self._active)}"
            f" (count {self.buf_bloc_count});{extra} R {fmt_scores(r)}"
        )
        log.debug("lm3 at %.3f: %s", now, reason)
        return replace(decision, weights=weights, vq=vq, reason=reason)
