"""southbound/agent_model.py: an agent's settings, status and programming as the views read
them."""

from __future__ import annotations

from mpsched.controller.southbound.agent_model import (
    AgentSettings,
    AgentStatus,
    JobTime,
    Programming,
)
from mpsched.controller.southbound.counters import COUNTER_BUDGET_CPS


def test_an_agent_starts_connecting_with_one_second_polls_under_the_counter_budget():
    assert AgentStatus().state == "connecting" and AgentStatus().error is None
    settings = AgentSettings()
    assert (settings.poll_interval, settings.counter_budget_cps) == (1.0, COUNTER_BUDGET_CPS)
    assert settings.election_id == (0, 1)


def test_programming_reads_as_how_and_what():
    assert Programming("pushed", "3 entries", 1.0).as_tuple() == ("pushed", "3 entries")
    assert JobTime(0.5, 0.25).ran_s == 0.25
