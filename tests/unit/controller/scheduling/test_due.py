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
