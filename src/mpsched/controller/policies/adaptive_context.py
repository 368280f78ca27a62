"""The network context of the `adaptive` policy, discretised with Gaussian memberships (the
QoS-MPTCP paper, docs/scheduling.md "Papers").

Paper (QoS-MPTCP, Section 4.2.2, Algorithm 1 and eqs. 5-6): a continuous
context value x is discretised by membership functions

    g_i(x) = k_i · exp(-((x - mu_i) / sigma_i)²)                                           (eq. 6)

one per discrete value DC_i, with k_i normalised by the largest k; the discrete value of a
sample is the one of largest membership (Algorithm 1, line 4: dv_s = max f_v(s)). The paper
fits mu_i, sigma_i and k_i to a kernel density of the samples (MEMFUNC_ACQ) and gives no values;
here they are parameters (`Level`), with defaults reconstructed for this testbed (documented
in docs/adaptive-policy.md, "Adaptive policy selection"): three levels low / mid / high per
feature. The argmax is taken over ln g_i = ln k_i - ((x - mu_i)/sigma_i)², so a value far from
every centre still gets the nearest level (no underflow to an all-zero tie).

Features per alive path (`PathFeatures`), from the controller's estimates (`PathState`):
- loss: `loss_rate` (fraction, the estimator's window);
- delay: `owd_ms`, the queueing delay (one-way delay above its window minimum), ms;
- jitter: the standard deviation of the recent one-way delays `owd_series_ms` (ms), else
  `rttvar_ms`;
- load: utilisation, `goodput_mbps / capacity_mbps`.
An unknown value (None) takes the lowest level: an unmeasured path carries nothing yet.

The path set's context (`Context.key`, mode "set", the default) is, per feature, the level of
the worst alive path (the largest loss, delay, jitter) and of the set's load (summed goodput /
summed capacity of the alive paths), plus the number of alive paths, e.g.
``loss=high delay=low jitter=low load=mid alive=3/4``. Mode "paths" keys on every path's
levels instead (``1:loss=low,delay=low,jitter=low,load=mid 2:dead ...``): finer, so it needs
more dwells per context to learn.

Hysteresis (reconstructed, not in the paper; `hysteresis` h in units of ln g, default 0 = the
paper's argmax): a value near the boundary of two levels flips between them from one estimate
to the next (on cmt-la the worst path's jitter sat near the mid/high boundary, 4.75 ms with the
default levels), and every flip that holds for a few periods ends the arm's dwell unscored.
Given the level of the previous period, a feature moves to the level of largest membership only
when ln g_new - ln g_held > h, i.e. when the new level's membership is e^h times the held one's.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from mpsched.controller.model.errors import FieldError
from mpsched.controller.model.paths import PathState

FEATURES = ("loss", "delay", "jitter", "load")
CONTEXT_MODES = ("set", "paths")


@dataclass(frozen=True)
class Level:
    """One discrete value of a feature: its Gaussian membership (eq. 6)."""

    name: str
    centre: float  # mu
    width: float  # sigma > 0
    k: float = 1.0  # coefficient, 0 < k <= 1 (normalised by the largest)

    def log_membership(self, x: float) -> float:
        """ln g(x) = ln k - ((x - mu) / sigma)²."""
        return math.log(self.k) - ((x - self.centre) / self.width) ** 2

    def membership(self, x: float) -> float:
        """g(x) = k · exp(-((x - mu) / sigma)²)."""
        return math.exp(self.log_membership(x))


# Reconstructed defaults (the paper fits them to samples and prints none), as parameter strings
# "name:centre:width[:k],...". Loss: below ~0.3 % low, around 1 % mid, from ~2 % high (a TCP
# flow's window suffers visibly from 1 %). Queueing delay: a few ms low, ~15 ms mid (a 50-packet
# queue at 6 Mbit/s holds 100 ms), tens of ms high. Jitter: the spread of the one-way delay.
# Load: the share of the capacity delivered.
DEFAULT_LEVELS = {
    "loss": "low:0:0.003,mid:0.01:0.005,high:0.05:0.03",
    "delay": "low:0:5,mid:15:10,high:60:40",
    "jitter": "low:0:1,mid:3:2,high:10:6",
    "load": "low:0:0.3,mid:0.5:0.2,high:0.9:0.2",
}


def parse_levels(text: str, field_name: str) -> tuple[Level, ...]:
    """'low:0:0.003,mid:0.01:0.005,...' -> Levels; FieldError(field_name) on bad input."""
    given: object = text  # checked as given: a REST body or state file may hold anything
    if not isinstance(given, str) or not given.strip():
        raise FieldError(field_name, "must list at least one level 'name:centre:width[:k]'")
    levels: list[Level] = []
    for item in text.split(","):
        parts = [s.strip() for s in item.split(":")]
        if len(parts) not in (3, 4) or not parts[0]:
            raise FieldError(field_name, f"level {item.strip()!r} is not 'name:centre:width[:k]'")
        try:
            values = [float(v) for v in parts[1:]]
        except ValueError:
            raise FieldError(field_name, f"level {item.strip()!r}: numbers expected") from None
        if not all(math.isfinite(v) for v in values):
            raise FieldError(field_name, f"level {item.strip()!r}: numbers must be finite")
        centre, width = values[0], values[1]
        k = values[2] if len(values) == 3 else 1.0
        if width <= 0:
            raise FieldError(field_name, f"level {parts[0]!r}: width must be > 0")
        if not 0 < k <= 1:
            raise FieldError(field_name, f"level {parts[0]!r}: k must be in (0, 1]")
        if not parts[0].isidentifier():
            raise FieldError(field_name, f"level name {parts[0]!r}: letters, digits, _")
        if any(lv.name == parts[0] for lv in levels):
            raise FieldError(field_name, f"level name {parts[0]!r} given twice")
        levels.append(Level(parts[0], centre, width, k))
    top = max(lv.k for lv in levels)
    return tuple(Level(lv.name, lv.centre, lv.width, lv.k / top) for lv in levels)


def discretise(
    x: float | None, levels: Sequence[Level], held: str | None = None, hysteresis: float = 0.0
) -> str:
    """The level of largest membership (ties: the first); None -> the first level. With the
    level `held` of the previous period, it is kept unless the best level's ln membership
    exceeds its own by more than `hysteresis`."""
    if x is None:
        return levels[0].name
    best = max(range(len(levels)), key=lambda i: (levels[i].log_membership(x), -i))
    kept = next((lv for lv in levels if lv.name == held), None) if hysteresis > 0 else None
    if kept is not None and levels[best].log_membership(x) - kept.log_membership(x) <= hysteresis:
        return kept.name
    return levels[best].name


@dataclass(frozen=True)
class PathFeatures:
    """One path's continuous context values (None: not measured)."""

    path_id: int
    alive: bool
    loss: float | None = None
    delay: float | None = None
    jitter: float | None = None
    load: float | None = None

    def value(self, feature: str) -> float | None:
        return getattr(self, feature)


def features(p: PathState) -> PathFeatures:
    """A path's context values from its estimates."""
    if len(p.owd_series_ms) >= 2:
        jitter: float | None = statistics.pstdev(p.owd_series_ms)
    else:
        jitter = p.rttvar_ms
    load = None
    if p.goodput_mbps is not None and p.capacity_mbps:
        load = p.goodput_mbps / p.capacity_mbps
    return PathFeatures(p.path_id, p.alive, p.loss_rate, p.owd_ms, jitter, load)


@dataclass(frozen=True)
class Context:
    """The discretised context of one period: the key the mapping learns on, the levels per
    path and of the set, and the values they came from."""

    key: str
    levels: Mapping[str, str]  # feature -> level of the path set (+ "alive": "n/N")
    paths: Mapping[int, Mapping[str, str]]  # path id -> feature -> level ({} when dead)
    values: Mapping[int, PathFeatures]

    def to_dict(self) -> dict:
        return {
            "key": self.key,
            "set": dict(self.levels),
            "paths": {
                str(pid): {
                    "alive": self.values[pid].alive,
                    **{
                        f: {"level": lv, "value": _round(self.values[pid].value(f))}
                        for f, lv in self.paths[pid].items()
                    },
                }
                for pid in sorted(self.paths)
            },
        }


def _round(x: float | None) -> float | None:
    return None if x is None else round(x, 6)


def context(
    paths: Sequence[PathState],
    levels: Mapping[str, Sequence[Level]],
    mode: str = "set",
    previous: Context | None = None,
    hysteresis: float = 0.0,
) -> Context:
    """The discretised context of `paths` (module docstring); `levels` per feature; with the
    `previous` period's context, levels move with `hysteresis`."""
    values = {p.path_id: features(p) for p in paths}
    alive = [v for v in values.values() if v.alive]

    def held_path(pid: int, f: str) -> str | None:
        return None if previous is None else previous.paths.get(pid, {}).get(f)

    def held_set(f: str) -> str | None:
        return None if previous is None else previous.levels.get(f)

    per_path = {
        pid: (
            {f: discretise(v.value(f), levels[f], held_path(pid, f), hysteresis)
             for f in FEATURES}
            if v.alive else {}
        )
        for pid, v in values.items()
    }
    set_levels: dict[str, str] = {}
    for f in ("loss", "delay", "jitter"):
        known = [x for x in (v.value(f) for v in alive) if x is not None]
        set_levels[f] = discretise(
            max(known) if known else None, levels[f], held_set(f), hysteresis
        )
    goodput = [p.goodput_mbps for p in paths if p.alive and p.goodput_mbps is not None]
    capacity = [p.capacity_mbps for p in paths if p.alive and p.capacity_mbps]
    load = sum(goodput) / sum(capacity) if goodput and capacity else None
    set_levels["load"] = discretise(load, levels["load"], held_set("load"), hysteresis)
    set_levels["alive"] = f"{len(alive)}/{len(paths)}"
    if mode == "paths":
        key = " ".join(
            f"{pid}:" + (",".join(f"{f}={lv[f]}" for f in FEATURES) if lv else "dead")
            for pid, lv in sorted(per_path.items())
        )
    else:
        key = " ".join(f"{f}={set_levels[f]}" for f in (*FEATURES, "alive"))
    return Context(key, set_levels, per_path, values)
