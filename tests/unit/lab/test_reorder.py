"""Reordering at the receiver (src/mpsched/lab/reorder.py) against RFC 4737's examples and
hand-computed extents."""

from __future__ import annotations

from mpsched.lab import reorder


def test_in_order_and_loss_are_not_reordering():
    assert reorder.reordering([1, 2, 3, 4]) == reorder.ReorderStats(4, 0, 0, [])
    assert reorder.reordered_count([1, 2, 5, 9]) == 0


def test_rfc4737_examples():
    r = reorder.reordering([1, 2, 4, 3, 5])
    assert (r.reordered, r.extents) == (1, [1])
    r = reorder.reordering([1, 3, 4, 5, 2])
    assert (r.reordered, r.extents) == (1, [3])
    assert r.ratio == 0.2 and r.degree == 3.0 and r.max_extent == 3
    # 4, 5, 6 arrive after 7, 8, 9: all three reordered, extents 3, 4, 5
    r = reorder.reordering([1, 2, 3, 7, 8, 9, 4, 5, 6, 10])
    assert (r.reordered, r.extents, r.degree) == (3, [3, 4, 5], 4.0)
    assert reorder.reorder_extents([2, 1]) == [1] and reorder.reordering_degree([]) == 0.0


def test_duplicates_are_not_reordered():
    r = reorder.reordering([1, 2, 2, 3])
    assert (r.packets, r.duplicates, r.reordered) == (3, 1, 0)
    r = reorder.reordering([1, 2, 3, 1])  # a late copy of an old packet
    assert (r.duplicates, r.reordered) == (1, 0)
    # the copy does not shift arrival positions: 1, 3, 2 → extent 1
    r = reorder.reordering([1, 3, 3, 2])
    assert (r.duplicates, r.reordered, r.extents) == (1, 1, [1])


def test_wraparound_16_bit():
    seqs = [65534, 65535, 1, 0, 2]
    r = reorder.reordering(seqs, modulus=65536)
    assert (r.reordered, r.extents) == (1, [1])
    assert reorder.reordered_count(seqs) == 3  # without unwrapping 1, 0 and 2 look late
    assert reorder.unwrap([65535, 0, 65534, 1]) == [65535, 65536, 65534, 65537]
    # a late packet from before the wrap
    assert reorder.reordering([65533, 65535, 0, 65534], modulus=65536).extents == [2]


def test_merge_reorder_stats():
    a, b = reorder.reordering([1, 3, 2]), reorder.reordering([5, 6, 4, 4])
    merged = reorder.merge_reorder_stats([a, b])
    assert (merged.packets, merged.duplicates, merged.reordered) == (6, 1, 2)
    assert merged.extents == [1, 2] and merged.degree == 1.5
