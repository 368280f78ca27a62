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


def queue_of(*due: tuple[float, str]):
    from mpsched.controller.scheduling.due import DueQueue

    q = DueQueue()
    for since, key in due:
        q.push(key, since)
    return q


def test_the_budget_steps_the_most_overdue_first_and_leaves_the_rest_due():
    from mpsched.controller.scheduling.due import within_budget

    due = [(3.0, "c"), (1.0, "a"), (2.0, "b"), (1.0, "a2")]
    ticks = iter(range(100))  # a clock that advances 1 s per reading
    stepped: list[str] = []
    q = queue_of(*due)
    assert within_budget(q, lambda since, p: stepped.append(p) is None, 2.0,
                         lambda: next(ticks)) == 2
    assert stepped == ["a", "a2"] and len(q) == 2  # ties keep their order; b and c wait
    stepped.clear()
    assert within_budget(queue_of(*due), lambda since, p: stepped.append(p) is None, None) == 4
    assert stepped == ["a", "a2", "b", "c"]  # no budget: every due pair
    stepped.clear()
    q = queue_of(*due)
    assert within_budget(q, lambda since, p: stepped.append(p) is None, 0.0) == 1
    assert stepped == ["a"] and len(q) == 3  # at least one, whatever the budget


def test_a_pair_no_longer_due_does_not_count_against_the_at_least_one():
    from mpsched.controller.scheduling.due import within_budget

    stepped: list[str] = []
    q = queue_of((1.0, "gone"), (2.0, "b"), (3.0, "c"))
    assert within_budget(q, lambda since, p: p != "gone" and stepped.append(p) is None,
                         0.0) == 1
    assert stepped == ["b"] and len(q) == 1


def test_the_budget_counts_from_the_steps_start():
    from mpsched.controller.scheduling.due import within_budget

    stepped: list[str] = []
    q = queue_of((1.0, "a"), (2.0, "b"))
    # finding the due pairs took the whole budget already: one pair, the rest waits
    assert within_budget(q, lambda since, p: stepped.append(p) is None, 0.5, lambda: 10.0,
                         start=9.0) == 1
    assert stepped == ["a"] and q.pop() == (2.0, "b")


def test_the_queue_keeps_each_pair_once_at_its_earliest_wait():
    q = queue_of((5.0, "a"), (3.0, "b"))
    q.push("a", 6.0)  # later: a waits since 5 still
    q.push("b", 1.0)  # earlier: b waits since 1
    assert len(q) == 2 and "a" in q
    assert (q.pop(), q.pop(), q.pop()) == ((1.0, "b"), (5.0, "a"), None)


def test_timers_come_back_when_their_time_comes():
    from mpsched.controller.scheduling.due import DueQueue

    q = DueQueue()
    q.timer("a", 12.0)
    q.timer("b", 11.0)
    q.timer("never", math.inf)
    assert q.expire(10.9) == []
    assert q.expire(12.0) == [(11.0, "b"), (12.0, "a")]
    assert q.expire(1e12) == []  # the infinite one was never kept
    q.push("x", 1.0)
    q.timer("y", 1.0)
    q.clear("new basis")
    assert (len(q), q.expire(2.0), q.basis) == (0, [], "new basis")


def test_a_pair_brings_its_groups_due_pairs_before_another_groups():
    """The most overdue pair first, then the rest of its ingress switch's (most overdue
    first), then the next most overdue pair's switch: a step writes to as few switches as
    its budget allows."""
    from mpsched.controller.scheduling.due import DueQueue, within_budget

    q = DueQueue()
    for since, key, group in [(1.0, "a1", "leafA"), (2.0, "b1", "leafB"), (3.0, "b2", "leafB"),
                              (4.0, "a2", "leafA"), (5.0, "c1", "leafC"), (9.0, "a3", "leafA")]:
        q.push(key, since, group)
    stepped: list[str] = []
    assert within_budget(q, lambda since, p: stepped.append(p) is None, None) == 6
    assert stepped == ["a1", "a2", "a3", "b1", "b2", "c1"]
    ticks = iter(range(100))
    for since, key, group in [(1.0, "a1", "leafA"), (2.0, "b1", "leafB"), (4.0, "a2", "leafA")]:
        q.push(key, since, group)
    stepped.clear()
    assert within_budget(q, lambda since, p: stepped.append(p) is None, 1.5,
                         lambda: next(ticks)) == 2
    assert stepped == ["a1", "a2"] and q.pop() == (2.0, "b1")  # b1 waits, first in line


def test_popped_and_replaced_entries_neither_come_back_nor_pile_up():
    from mpsched.controller.scheduling.due import COMPACT_SLACK, DueQueue

    q = DueQueue()
    q.push("a", 5.0, "g")
    q.push("a", 3.0, "g")  # replaces: the entry at 5.0 is left behind in both heaps
    assert q.pop_grouped("g") == (3.0, "a", "g")
    assert q.pop() is None and q.pop_grouped("g") is None
    q.push("a", 5.0, "g")  # queued again at the time of an entry left behind
    assert (q.pop(), q.pop_grouped("g")) == ((5.0, "a"), None)
    for i in range(10 * COMPACT_SLACK):  # pushed and popped through the other heap
        q.push(f"k{i}", float(i), f"g{i % 7}")
        assert q.pop() == (float(i), f"k{i}")
    assert len(q) == 0 and len(q._heap) <= COMPACT_SLACK + 1
    assert sum(len(h) for h in q._groups.values()) <= COMPACT_SLACK + 1
