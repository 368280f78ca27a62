"""src/mpsched/stats.py against hand-computed values, numpy and printed Student-t tables."""

from __future__ import annotations

import math
import random
import statistics

import pytest

from mpsched import stats

# --------------------------------------------------------------------------------------------
# percentile


def test_percentile_known_values():
    xs = [4, 1, 3, 2]  # sorted 1 2 3 4, h = 3 q / 100
    assert stats.percentile(xs, 50) == 2.5
    assert stats.percentile(xs, 25) == 1.75
    assert stats.percentile(xs, 90) == pytest.approx(3.7)
    assert stats.percentile(xs, 0) == 1 and stats.percentile(xs, 100) == 4
    assert stats.percentile([7], 99) == 7
    assert stats.percentile(range(101), 90) == 90


def test_percentile_matches_numpy_linear():
    np = pytest.importorskip("numpy")
    rng = random.Random(1)
    for n in (2, 5, 37, 100):
        xs = [rng.expovariate(1.0) for _ in range(n)]
        for q in (0, 1, 10, 25, 33.3, 50, 90, 95, 99, 100):
            want = float(np.percentile(xs, q, method="linear"))
            assert stats.percentile(xs, q) == pytest.approx(want, rel=1e-12), (n, q)


def test_mean_and_median_as_the_statistics_module_has_them():
    rng = random.Random(2)
    for n in (1, 2, 7, 40):
        xs = [rng.uniform(-5, 5) for _ in range(n)]
        assert stats.mean(xs) == pytest.approx(statistics.fmean(xs), rel=1e-12)
        assert stats.median(xs) == pytest.approx(statistics.median(xs), rel=1e-12)
    assert stats.mean([1, 2, 3, 4]) == 2.5 and stats.median([4, 1, 3, 2]) == 2.5
    assert stats.mean([0.1] * 10) == 0.1  # fsum: exactly, where sum() gives 0.09999999999999999
    assert math.isnan(stats.mean([])) and math.isnan(stats.median(iter(())))


def test_percentile_of_nothing_is_nan():
    assert math.isnan(stats.percentile([], 50))
    assert math.isnan(stats.percentile(iter(()), 0))


@pytest.mark.parametrize("q", [-0.1, 100.5, 101, math.nan])
def test_percentile_rejects_q_outside_0_100(q):
    with pytest.raises(ValueError, match="percentile q"):
        stats.percentile([1.0, 2.0], q)


# --------------------------------------------------------------------------------------------
# empirical CDF, Student-t interval, summary


def test_cdf():
    assert stats.cdf([3, 1, 2]) == ([1.0, 2.0, 3.0], [1 / 3, 2 / 3, 1.0])
    assert stats.cdf([]) == ([], [])


def test_t_quantiles():
    assert stats.t_quantile_975(1) == 12.706205
    assert stats.t_quantile_975(4) == 2.776445
    assert stats.t_quantile_975(30) == 2.042272
    # beyond the table: printed values t(40), t(60), t(120), and the normal limit
    assert stats.t_quantile_975(40) == pytest.approx(2.021075, abs=1e-6)
    assert stats.t_quantile_975(60) == pytest.approx(2.000298, abs=1e-6)
    assert stats.t_quantile_975(120) == pytest.approx(1.979930, abs=1e-6)
    assert stats.t_quantile_975(10**8) == pytest.approx(1.959964, abs=1e-6)
    assert stats.t_quantile_975(31) == pytest.approx(2.039513, abs=1e-6)
    with pytest.raises(ValueError):
        stats.t_quantile_975(0)


def test_mean_ci95():
    mean, h = stats.mean_ci95([1, 2, 3, 4, 5])
    # s = sqrt(2.5), h = t(4) * s / sqrt(5) = 2.776445 * 0.7071068
    assert mean == 3.0 and h == pytest.approx(1.963243, abs=1e-6)
    mean, h = stats.mean_ci95([10.0, 12.0])  # s = sqrt(2), h = 12.706205 * sqrt(2)/sqrt(2)
    assert mean == 11.0 and h == pytest.approx(12.706205)
    mean, h = stats.mean_ci95([4.2])
    assert mean == 4.2 and math.isnan(h)
    assert all(math.isnan(v) for v in stats.mean_ci95([]))


def test_summarize():
    s = stats.summarize([2, 4, 4, 4, 5, 5, 7, 9])
    assert (s.n, s.mean, s.min, s.max) == (8, 5.0, 2.0, 9.0)
    assert s.std == pytest.approx(math.sqrt(32 / 7))
    assert s.ci95 == pytest.approx(2.364624 * math.sqrt(32 / 7) / math.sqrt(8))
    one = stats.summarize([3])
    assert one.n == 1 and one.mean == 3 and math.isnan(one.ci95) and math.isnan(one.std)
    assert stats.summarize([]).n == 0


def test_iqr_is_the_spread_of_the_middle_half():
    assert stats.iqr([1, 2, 3, 4, 5]) == 2.0
    assert math.isnan(stats.iqr([]))


def test_slope_least_squares() -> None:
    assert stats.slope([(0, 1), (1, 3), (2, 5)]) == 2.0
    assert math.isclose(stats.slope([(0, 0), (1, 1), (2, 1), (3, 2)]), 0.6)
    assert math.isnan(stats.slope([(1, 1), (1, 2)]))
    assert math.isnan(stats.slope([]))


def test_theil_sen_slope_follows_a_steady_rise_and_not_one_step() -> None:
    rise = [(t, 100 + 2 * t) for t in range(50)]
    assert stats.theil_sen_slope(rise) == 2.0
    # one step of +50 a fifth into the span: least squares reads a slope, Theil-Sen none
    step = [(t, 100 + (50 if t >= 10 else 0)) for t in range(50)]
    assert stats.slope(step) > 0.9
    assert stats.theil_sen_slope(step) == 0.0
    # steps that keep coming (+5 every 5): a leak in steps keeps its slope
    stairs = [(t, 100 + 5 * (t // 5)) for t in range(50)]
    assert 0.8 <= stats.theil_sen_slope(stairs) <= 1.2
    assert stats.theil_sen_slope([(0, 1), (2, 5), (1, 3)]) == 2.0  # in any order
    assert math.isnan(stats.theil_sen_slope([(1, 1), (1, 2)]))
    assert math.isnan(stats.theil_sen_slope([]))


# --------------------------------------------------------------------------------------------
# ratios paired by seed


def test_ratio_is_nan_without_a_usable_reference():
    assert stats.ratio(3.0, 4.0) == 0.75
    assert stats.ratio(0.0, 2.0) == 0.0
    for a, b in ((1.0, 0.0), (1.0, -2.0), (math.nan, 1.0), (1.0, math.inf), (math.inf, 1.0)):
        assert math.isnan(stats.ratio(a, b)), (a, b)


def test_paired_ratios_pair_by_key_and_leave_out_what_has_no_ratio():
    values = {1: 0.9, 2: 0.94, 3: 0.5, 4: math.nan, 5: 0.7}
    reference = {2: 0.8, 1: 0.6, 3: 0.0, 4: 0.5, 6: 0.9}  # 3: zero, 4: no value, 5 and 6: alone
    assert stats.paired_ratios(values, reference) == [0.9 / 0.6, 0.94 / 0.8]
    assert stats.paired_ratios({}, reference) == []


def test_paired_ratio_is_the_t_interval_of_the_ratios():
    got = stats.paired_ratio({1: 0.9, 2: 0.94}, {1: 0.6, 2: 0.8})
    # ratios 1.5 and 1.175: s = 0.325 / sqrt(2), h = t(1) * s / sqrt(2) = 12.706205 * 0.1625
    assert got.n == 2
    assert got.mean == pytest.approx(1.3375)
    assert got.ci95 == pytest.approx(2.064758, abs=1e-6)
    one = stats.paired_ratio({"a": 2.0, "b": 1.0}, {"a": 4.0})
    assert (one.mean, one.n) == (0.5, 1) and math.isnan(one.ci95)
    none = stats.paired_ratio({1: 1.0}, {2: 1.0})
    assert none.n == 0 and math.isnan(none.mean) and math.isnan(none.ci95)


def test_pairing_narrows_the_interval_when_seeds_share_their_spread():
    """Seeds that scale both policies alike (the load a seed draws) widen each mean's interval
    but cancel in the ratio: what paired observations are for."""
    load = {seed: 1.0 + seed for seed in range(6)}
    ours = {seed: 0.8 * x * (1 + 0.01 * (seed % 2)) for seed, x in load.items()}
    unpaired = stats.mean_ci95(ours.values())[1] / stats.mean(ours.values())
    paired = stats.paired_ratio(ours, load)
    assert paired.mean == pytest.approx(0.804, abs=1e-9)
    assert paired.ci95 < 0.01 < 0.3 < unpaired
