"""southbound/entries.py: only what changed is written; the classifier; removed classes."""

from __future__ import annotations

from mpsched.controller.model.decision import CaCost
from mpsched.controller.model.placement import Change, Placement
from mpsched.controller.scheduling.classes import (
    DEFAULT_CLASS_ID,
    Match,
    TrafficClass,
)
from mpsched.controller.southbound.entries import (
    change_entries,
    class_entries,
    classifier_entries,
)
from mpsched.p4rt.p4info import P4Info
from mpsched.p4rt.pipeline import (
    TABLE_CA,
    TABLE_MVQS,
    TABLE_TRAFFIC_CLASS,
    TABLE_WEIGHTS,
    Pipeline,
)
from tests.fake_p4rt import synthetic_p4info

PIPELINE = Pipeline(P4Info(synthetic_p4info()))
WCMP = Placement(((1, 200), (2, 55)), "hash", 0)


def tables(entries) -> list[str]:
    return [e.table for e in entries]


def test_a_new_placement_writes_its_weights():
    assert tables(change_entries(PIPELINE, Change("s1", 0, WCMP), 2)) == [TABLE_WEIGHTS]


def test_an_unchanged_placement_writes_nothing_and_a_new_vq_only_the_vq():
    assert change_entries(PIPELINE, Change("s1", 0, WCMP, WCMP), 2) == []
    old = Placement(WCMP.weights, "vq", 0, vq=((1, (1, 2, 3, 4)),))
    new = Placement(WCMP.weights, "vq", 0, vq=((1, (5, 6, 7, 8)),))
    assert tables(change_entries(PIPELINE, Change("s1", 0, new, old), 2)) == [TABLE_MVQS]
    assert tables(change_entries(PIPELINE, Change("s1", 0, new, WCMP), 2)) == [
        TABLE_MVQS,
        TABLE_WEIGHTS,  # the mode changed too
    ]


def test_a_mode_ca_placement_writes_its_cost_parameters():
    ca = Placement(WCMP.weights, "ca", 0, ca=CaCost())
    assert tables(change_entries(PIPELINE, Change("s1", 0, ca), 2)) == [
        TABLE_CA,
        TABLE_WEIGHTS,
    ]


def test_the_classifier_leaves_out_the_default_class():
    voip = TrafficClass(5, "voip", priority=3, match=Match(dscp=46))
    entries = classifier_entries(PIPELINE, [TrafficClass(DEFAULT_CLASS_ID, "default"), voip])
    assert tables(entries) == [TABLE_TRAFFIC_CLASS]


def test_a_removed_class_takes_its_weights_mvqs_and_ca_entries():
    assert tables(class_entries(PIPELINE, [5, 6], 2)) == [
        TABLE_WEIGHTS, TABLE_MVQS, TABLE_CA,
        TABLE_WEIGHTS, TABLE_MVQS, TABLE_CA,
    ]


def test_syn_copy_is_part_of_the_weights_entry():
    """A placement that starts or stops copying SYNs rewrites its weights entry, whose
    syn_copy parameter says which."""
    copying = Placement(WCMP.weights, "hash", 0, syn_copy=True)
    (entry,) = change_entries(PIPELINE, Change("s1", 0, copying, WCMP), 2)
    assert entry.table == TABLE_WEIGHTS and entry.params["syn_copy"] == 1
    (entry,) = change_entries(PIPELINE, Change("s1", 0, WCMP, copying), 2)
    assert entry.params["syn_copy"] == 0
    assert change_entries(PIPELINE, Change("s1", 0, copying, copying), 2) == []
