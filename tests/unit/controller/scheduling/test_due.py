"""scheduling/due.py: a pair is stepped again only when its inputs, the configuration or
the routing changed, or its view moves with time."""

from __future__ import annotations

import math

from mpsched.controller.scheduling.due import Stepped, is_due

CTX = ("scheduler", 1, frozenset(), 0)


def test_a_pair_never_stepped_is_due():
    assert is_due(None, 0, CTX, 10.0)


def test_nothing_changed_nothing_due():
    last = Stepped(inputs=5, context=CTX, until=math.inf)
    assert not is_due(last, 5, CTX, 1e9)


def test_new_inputs_a_new_context_or_the_time_make_it_due():
    last = Stepped(inputs=5, context=CTX, until=12.0)
    assert not is_due(last, 5, CTX, 11.9)
    assert is_due(last, 6, CTX, 11.9)
    assert is_due(last, 5, ("scheduler", 2, frozenset(), 0), 11.9)
    assert is_due(last, 5, ("scheduler", 1, frozenset({3}), 0), 11.9)
    assert is_due(last, 5, CTX, 12.0)


def test_a_policy_that_does_not_repeat_is_stepped_every_time():
    last = Stepped(inputs=5, context=CTX, until=math.inf)
    assert is_due(last, 5, CTX, 11.0, repeats=False)


def test_a_due_pair_waits_since_its_earliest_reason():
    from mpsched.controller.scheduling.due import overdue_since

    aging = Stepped(inputs=5, context=CTX, until=12.0)
    assert overdue_since(13.0, None, None, 13.0) == 13.0  # first step: when first found due
    assert overdue_since(13.0, 12.5, aging, 11.0) == 12.5  # an input; the view not aged yet
    assert overdue_since(13.0, 12.5, aging, 13.0) == 12.0  # the view aged before the input
    assert overdue_since(13.0, None, Stepped(5, CTX, math.inf), 13.0) == 13.0


def test_the_budget_steps_the_most_overdue_first_and_leaves_the_rest_due():
    from mpsched.controller.scheduling.due import by_overdue, within_budget

    due = [(3.0, "c"), (1.0, "a"), (2.0, "b"), (1.0, "a2")]
    assert [p for _, p in by_overdue(due)] == ["a", "a2", "b", "c"]  # ties keep their order
    ticks = iter(range(100))  # a clock that advances 1 s per reading
    stepped: list[str] = []
    left = within_budget(due, lambda since, p: stepped.append(p), 2.0, lambda: next(ticks))
    assert stepped == ["a", "a2"] and left == [(2.0, "b"), (3.0, "c")]
    stepped.clear()
    assert within_budget(due, lambda since, p: stepped.append(p), None) == []
    assert stepped == ["a", "a2", "b", "c"]  # no budget: every due pair
    stepped.clear()
    left = within_budget(due, lambda since, p: stepped.append(p), 0.0)
    assert stepped == ["a"] and len(left) == 3  # at least one, whatever the budget


def test_the_budget_counts_from_the_steps_start():
    from mpsched.controller.scheduling.due import within_budget

    stepped: list[str] = []
    due = [(1.0, "a"), (2.0, "b")]
    # finding the due pairs took the whole budget already: one pair, the rest waits
    left = within_budget(due, lambda since, p: stepped.append(p), 0.5, lambda: 10.0, start=9.0)
    assert stepped == ["a"] and left == [(2.0, "b")]
