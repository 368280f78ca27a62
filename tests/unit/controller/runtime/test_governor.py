"""src/mpsched/controller/runtime/governor.py: the step's share of the period under the process's
CPU
budget."""

from __future__ import annotations

import pytest

from mpsched.controller.runtime.governor import AIM, GAIN, MIN_STEP_SHARE, CpuGovernor, next_share
from tests.unit.controller.fakes import Clocks


def governed() -> tuple[CpuGovernor, Clocks]:
    clocks = Clocks()
    return CpuGovernor(clock=lambda: clocks.wall, cpu_clock=lambda: clocks.cpu), clocks


def test_the_share_falls_with_the_excess_and_comes_back_under_the_budget():
    assert next_share(0.25, 0.25, 0.70, 0.50) == pytest.approx(0.25 - GAIN * 0.20)
    assert next_share(0.10, 0.25, 0.40, 0.50) == pytest.approx(0.10 + GAIN * 0.10)
    assert next_share(0.24, 0.25, 0.10, 0.50) == 0.25  # never above the parameter's
    assert next_share(0.05, 0.25, 2.00, 0.50) == MIN_STEP_SHARE  # nor below the floor
    assert next_share(0.01, 0.01, 2.00, 0.50) == 0.01  # a parameter under the floor stays


def test_a_window_of_the_process_over_its_budget_lowers_the_share_until_it_is_under():
    gov, clocks = governed()
    assert gov.step_share(0.25, 0.50) == 0.25  # the first window starts
    clocks.run(1.0, 0.90)
    assert gov.step_share(0.25, 0.50) == 0.25 and gov.cpu_share is None  # not a whole window
    clocks.run(1.0, 0.90)
    # 0.25 less half the excess over what it aims at (AIM of the budget)
    assert gov.step_share(0.25, 0.50) == pytest.approx(0.25 - GAIN * (0.90 - AIM * 0.50))
    assert gov.cpu_share == pytest.approx(0.90)
    clocks.run(2.0, 0.90)
    assert gov.step_share(0.25, 0.50) == MIN_STEP_SHARE
    clocks.run(2.0, 0.40)  # under: the share comes back by half the margin each window
    back = MIN_STEP_SHARE + GAIN * (AIM * 0.50 - 0.40)
    assert gov.step_share(0.25, 0.50) == pytest.approx(back)
    assert gov.share_now(0.25) == pytest.approx(back)
    assert gov.share_now(0.04) == 0.04  # a lower parameter wins at once


def test_without_a_budget_the_share_is_the_parameters():
    gov, clocks = governed()
    gov.step_share(0.25, 0.50)
    clocks.run(2.0, 0.90)
    assert gov.step_share(0.25, 0.50) < 0.25
    clocks.run(2.0, 0.90)
    assert gov.step_share(0.25, None) == 0.25  # no budget: at once, and measured still
    assert gov.cpu_share == pytest.approx(0.90)
    clocks.run(2.0, 0.30)
    assert gov.step_share(0.25, 0.50) == 0.25  # a budget again starts from the parameter


def test_a_process_within_its_budget_keeps_the_parameters_share():
    gov, clocks = governed()
    for _ in range(10):
        clocks.run(0.5, 0.45)  # under AIM of the budget
        assert gov.step_share(0.25, 0.50) == 0.25
