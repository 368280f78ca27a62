"""The `adaptive` policy's REST view of its table and dwell
(src/mpsched/controller/policies/adaptive_view.py)."""

from __future__ import annotations

import pytest

from mpsched.controller.policies.adaptive import Dwell
from mpsched.controller.policies.adaptive_arms import parse_arms
from mpsched.controller.policies.adaptive_bayes import BetaTable, Choice
from mpsched.controller.policies.adaptive_view import dwell_view, table_view

ARMS = parse_arms("ecmp,wcmp,letflow")


def test_table_view_shows_each_arms_posterior_and_evidence_per_context():
    table = BetaTable(alpha0=1.0, beta0=1.0, pool=0.5)
    table.update("calm", "ecmp", 1.0)
    table.update("calm", "ecmp", 0.5)
    table.update("lossy", "wcmp", 0.0)
    table.stats("calm").dwells = 2
    table.stats("calm").explored = 1
    view = table_view(table, ARMS)
    assert sorted(view) == ["calm", "lossy"]
    calm = view["calm"]
    assert (calm["dwells"], calm["explored"]) == (2, 1)
    # own evidence s = 1.5, f = 0.5: Beta(2.5, 1.5)
    assert calm["arms"]["ecmp"] == {"alpha": 2.5, "beta": 1.5, "mean": 0.625, "n": 2, "last": 0.5}
    # wcmp borrows half its evidence in "lossy" (f = 1): Beta(1, 1.5), nothing of its own
    assert calm["arms"]["wcmp"] == {"alpha": 1.0, "beta": 1.5, "mean": 0.4, "n": 0, "last": None}
    # an arm never tried anywhere is the prior
    assert view["lossy"]["arms"]["letflow"]["mean"] == pytest.approx(0.5)
    assert list(calm["arms"]) == ["ecmp", "wcmp", "letflow"]  # the arm list's order


def test_table_view_of_an_empty_table_is_empty():
    assert table_view(BetaTable(), ARMS) == {}


def test_dwell_view():
    assert dwell_view(None, 20) is None
    choice = Choice("wcmp", "ecmp", True, {"ecmp": 0.5, "wcmp": 0.5}, {}, "thompson")
    dwell = Dwell(ARMS[1], "calm", 12.34567, choice, periods=7)
    assert dwell_view(dwell, 20) == {
        "context": "calm", "periods": 7, "of": 20, "explored": True, "note": "thompson",
        "started": 12.346,
    }
