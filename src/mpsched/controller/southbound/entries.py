"""The table entries of the scheduler's decisions (pure: no switch is written here).

`change_entries` writes only what differs from the previous placement of a class on a
switch; `classifier_entries` is the classifier of the whole class table;
`class_entries` the per-class entries that go when a class is removed.
"""

from __future__ import annotations

from collections.abc import Iterable

from mpsched.controller.model.placement import Change
from mpsched.controller.policies.ca import ca_fixed_point
from mpsched.controller.scheduling.classes import DEFAULT_CLASS_ID, TrafficClass
from mpsched.p4rt.client import TableEntry
from mpsched.p4rt.pipeline import Pipeline


def change_entries(pipeline: Pipeline, change: Change, dst_edge: int) -> list[TableEntry]:
    """The entries of a change of the placements towards edge dst_edge (the switch's peer);
    only the parts that differ from `change.previous`."""
    pl, old = change.placement, change.previous
    entries = []
    if pl.vq and (old is None or old.vq != pl.vq):
        entries.append(pipeline.mvqs_params(dst_edge, change.class_id, pl.vq_map()))
    if pl.ca is not None and (old is None or old.ca != pl.ca):
        fixed = ca_fixed_point(pl.ca, pipeline.max_paths, pipeline.ca_units)
        entries.append(pipeline.ca_params(dst_edge, change.class_id, fixed))
    if old is None or (old.weights, old.mode, old.flowlet_gap_us, old.syn_copy) != (
        pl.weights,
        pl.mode,
        pl.flowlet_gap_us,
        pl.syn_copy,
    ):
        entries.append(
            pipeline.weights(dst_edge, change.class_id, pl.weight_map(), pl.mode,
                             pl.flowlet_gap_us, pl.syn_copy)
        )
    return entries


def classifier_entries(pipeline: Pipeline, classes: Iterable[TrafficClass]) -> list[TableEntry]:
    """The traffic_class entries of every class but the default one (which matches the
    rest)."""
    out = []
    for c in classes:
        if c.id == DEFAULT_CLASS_ID:
            continue
        m = c.match
        out.append(
            pipeline.traffic_class(
                c.id, c.priority, m.dscp, m.src, m.dst, m.proto, m.src_port, m.dst_port
            )
        )
    return out


def class_entries(
    pipeline: Pipeline, class_ids: Iterable[int], dst_edge: int
) -> list[TableEntry]:
    """The per-class entries of `class_ids` towards edge dst_edge (weights, MVQS and, where
    the program has them, mode-ca parameters), as keys to delete."""
    out = []
    for cid in class_ids:
        out += [pipeline.weights(dst_edge, cid, {}), pipeline.mvqs_params(dst_edge, cid, {})]
        if pipeline.has_congestion:
            out.append(pipeline.ca_params(dst_edge, cid, {}))
    return out
