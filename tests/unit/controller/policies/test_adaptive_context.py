"""src/mpsched/controller/policies/adaptive_context.py: Gaussian context memberships (eq. 6 of
QoS-MPTCP;
docs/scheduling.md), hysteresis, the levels' parsing and the context of a path set."""

from __future__ import annotations

import math

import pytest

from mpsched.controller.model.errors import FieldError
from mpsched.controller.model.paths import PathState
from mpsched.controller.policies import make_policy
from mpsched.controller.policies.adaptive_context import (
    Level,
    context,
    discretise,
    parse_levels,
)
from mpsched.controller.policies.adaptive_params import (
    AdaptiveParams,
)

LOSS = parse_levels("low:0:0.003,mid:0.01:0.005,high:0.05:0.03", "loss_levels")


def test_membership_is_eq_6():
    lv = Level("mid", 0.01, 0.005, 0.5)
    # g(x) = k · exp(-((x - mu) / sigma)^2): at x = 0.015, ((0.005) / 0.005)^2 = 1
    assert lv.membership(0.015) == pytest.approx(0.5 * math.exp(-1))
    assert lv.membership(0.01) == pytest.approx(0.5)


@pytest.mark.parametrize(
    ("x", "level"),
    [
        (0.0, "low"),
        (0.002, "low"),  # low exp(-0.444) = 0.64 > mid exp(-2.56) = 0.077
        (0.005, "mid"),  # low exp(-2.78) = 0.062 < mid exp(-1) = 0.37
        (0.02, "high"),  # mid exp(-4) = 0.018 < high exp(-1) = 0.37
        (0.9, "high"),  # far from every centre: still the nearest (log memberships)
        (None, "low"),  # not measured: the lowest level
    ],
)
def test_discretise_takes_the_largest_membership(x, level):
    assert discretise(x, LOSS) == level


def test_k_is_normalised_by_the_largest_and_weighs_in():
    levels = parse_levels("a:0:1:0.5,b:2:1:0.25", "f")
    assert [lv.k for lv in levels] == [1.0, 0.5]
    # at x = 1 both exponents are -1: k decides (a)
    assert discretise(1.0, levels) == "a"


JITTER = parse_levels("low:0:1,mid:3:2,high:10:6", "jitter_levels")


@pytest.mark.parametrize(
    ("x", "held", "level"),
    [
        # ln g: mid -((x - 3) / 2)², high -((x - 10) / 6)²; argmax changes at 4.75 ms
        (5.0, "mid", "mid"),  # high by 1 - 0.694 = 0.31 <= 1: held
        (5.8, "mid", "high"),  # mid -1.96, high -0.49: by 1.47 > 1
        (4.0, "high", "high"),  # mid -0.25, high -1.0: by 0.75 <= 1
        (3.5, "high", "mid"),  # mid -0.0625, high -1.174: by 1.11 > 1
        (5.0, None, "high"),  # nothing held: the argmax
        (5.0, "gone", "high"),  # a level the parameters no longer have
    ],
)
def test_hysteresis_keeps_the_held_level_near_a_boundary(x, held, level):
    assert discretise(x, JITTER, held, hysteresis=1.0) == level
    assert discretise(x, JITTER, held) == ("mid" if x < 4.75 else "high")  # h = 0: argmax


def test_the_context_moves_its_levels_with_hysteresis():
    def paths(jitter_ms: float) -> list[PathState]:
        return [PathState(1, True, rttvar_ms=jitter_ms), PathState(2, True, rttvar_ms=0.0)]

    first = context(paths(6.0), _levels(), "set", None, 1.0)
    assert first.levels["jitter"] == "high" and first.paths[1]["jitter"] == "high"
    near = context(paths(4.2), _levels(), "set", first, 1.0)  # argmax mid, by 0.57
    assert near.key == first.key and near.paths[1]["jitter"] == "high"
    assert context(paths(4.2), _levels(), "set", first).levels["jitter"] == "mid"  # no h
    assert context(paths(3.0), _levels(), "set", near, 1.0).levels["jitter"] == "mid"


@pytest.mark.parametrize(
    ("text", "piece"),
    [
        ("", "at least one level"),
        ("low:0", "name:centre:width"),
        ("low:x:1", "numbers expected"),
        ("low:0:0", "width must be > 0"),
        ("low:0:1:2", "k must be in (0, 1]"),
        ("low:0:1,low:1:1", "given twice"),
        ("low:nan:1", "finite"),
    ],
)
def test_bad_levels_name_the_field(text, piece):
    with pytest.raises(FieldError) as err:
        make_policy("adaptive", {"loss_levels": text})
    assert err.value.field == "params.loss_levels"
    assert piece in err.value.message


def _levels() -> dict:
    p = AdaptiveParams()
    return {f: parse_levels(getattr(p, f"{f}_levels"), f) for f in ("loss", "delay", "jitter",
                                                                    "load")}


def test_context_of_the_path_set_and_per_path():
    paths = [
        PathState(1, True, loss_rate=0.0, owd_ms=2.0, goodput_mbps=4.0, capacity_mbps=10.0),
        PathState(2, True, loss_rate=0.06, owd_ms=1.0, goodput_mbps=1.0, capacity_mbps=10.0,
                  owd_series_ms=(1.0, 3.0)),  # pstdev 1.0 ms
        PathState(3, False, loss_rate=0.5),
    ]
    ctx = context(paths, _levels())
    # worst loss 0.06 -> high; worst queueing delay 2 ms -> low; worst jitter 1 ms: low
    # exp(-1) = 0.37 vs mid exp(-1) = 0.37 -> tie, the first level; load 5/20 = 0.25: low
    # exp(-0.69) = 0.50 > mid exp(-1.56) = 0.21; 2 of 3 paths alive
    assert ctx.key == "loss=high delay=low jitter=low load=low alive=2/3"
    assert ctx.paths[2] == {"loss": "high", "delay": "low", "jitter": "low", "load": "low"}
    assert ctx.paths[3] == {}
    per_path = context(paths, _levels(), "paths")
    assert per_path.key.startswith("1:loss=low,delay=low,jitter=low,load=mid 2:loss=high")
    assert per_path.key.endswith("3:dead")
    assert ctx.to_dict()["paths"]["2"]["loss"] == {"level": "high", "value": 0.06}
