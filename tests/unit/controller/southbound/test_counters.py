"""southbound/counters.py: an edge's per-path counters, how often they are read and what a
read hands on."""

from __future__ import annotations

import pytest

from mpsched.controller.southbound.counters import (
    COUNTER_BUDGET_CPS,
    path_poll_interval,
    path_samples,
)
from mpsched.p4rt.client import CounterValue
from tests.unit.controller.helpers import pipeline


def test_the_edges_read_their_path_counters_within_the_budget_of_all_of_them():
    # 8 edges of 975 cells (the 64-edge build's three counters): 7 800 cells a second
    assert path_poll_interval(1.0, 8, 975, COUNTER_BUDGET_CPS) == 1.0
    # 64 of them: 62 400 a second at 1 s; under 20 000 a second, every 3.12 s
    assert path_poll_interval(1.0, 64, 975, 20_000) == pytest.approx(3.12)
    assert path_poll_interval(1.0, 64, 975, None) == 1.0  # no budget
    assert path_poll_interval(5.0, 64, 975, 20_000) == 5.0  # never more often than asked


def test_a_read_sums_each_path_ids_cells_over_the_peers():
    pl = pipeline()
    tx = {pl.edge_path_index(2, 1): CounterValue(5, 500),
          pl.edge_path_index(3, 1): CounterValue(7, 700),
          pl.edge_path_index(3, 2): CounterValue(1, 100),
          pl.edge_path_index(4, 2): CounterValue(9, 900)}  # edge 4 is no peer here
    samples = path_samples(pl, [2, 3], [1, 2], tx, {}, 10.0)
    assert (samples[1].tx_packets, samples[1].tx_bytes, samples[2].tx_packets) == (12, 1200, 1)
    assert samples[1].rx_packets == 0 and samples[1].time == 10.0
