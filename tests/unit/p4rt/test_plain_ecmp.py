"""The plain ECMP program's interface (src/mpsched/p4rt/plain_ecmp.py): bound to its P4Info,
the compiled one where `make p4` built it and the synthetic one of the unit tests."""

from __future__ import annotations

import pytest

from mpsched.p4rt.client import CounterValue
from mpsched.p4rt.p4info import P4Info, P4InfoError
from mpsched.p4rt.plain_ecmp import (
    ACTION_TO_EDGE,
    COUNTER_DROP_REASON,
    TABLE_NEXTHOP,
    TABLE_ROUTE,
    PlainEcmpPipeline,
)
from mpsched.proc.layout import plain_ecmp_artifacts
from tests.plain_p4info import DROP_REASONS, synthetic_plain_ecmp_p4info


@pytest.fixture
def compiled() -> P4Info:
    art = plain_ecmp_artifacts()
    if art.missing():
        pytest.skip(f"plain ECMP program not compiled ({art.missing()[0]}); run `make p4`")
    return P4Info.from_file(art.p4info)


def test_binds_to_the_compiled_program(compiled):
    pipeline = PlainEcmpPipeline(compiled)
    assert pipeline.max_edge_id == 255 and pipeline.max_group_size == 255
    assert pipeline.table_sizes == {TABLE_ROUTE: 1024, TABLE_NEXTHOP: 1024}
    assert pipeline.drop_reasons == {k.lower(): v for k, v in DROP_REASONS.items()}


def test_the_synthetic_p4info_has_the_compiled_shapes(compiled):
    fake = synthetic_plain_ecmp_p4info()
    for table in fake.tables:
        real = compiled.table(table.preamble.name)
        assert [(f.name, f.bitwidth, f.match_type) for f in table.match_fields] == [
            (f.name, f.bitwidth, f.match_type) for f in real.match_fields]
        assert table.size == real.size
    for action in fake.actions:
        real_action = compiled.action(action.preamble.name)
        assert [(p.name, p.bitwidth) for p in action.params] == [
            (p.name, p.bitwidth) for p in real_action.params]
    assert len(fake.actions) == len(compiled.message.actions) - 1  # but the drop helper


def test_entries_outside_what_the_program_holds_are_refused():
    pipeline = PlainEcmpPipeline(P4Info(synthetic_plain_ecmp_p4info()))
    entry = pipeline.route_to_edge("10.0.2.0/24", 2, 3)
    assert entry.action == ACTION_TO_EDGE and entry.match == {"dst_addr": ("10.0.2.0", 24)}
    with pytest.raises(ValueError, match=r"group_size 0 outside 1\.\.255"):
        pipeline.route_to_edge("10.0.2.0/24", 2, 0)  # BMv2 would divide by it
    with pytest.raises(ValueError, match=r"dst_edge 256 outside 1\.\.255"):
        pipeline.route_to_edge("10.0.2.0/24", 256, 1)
    with pytest.raises(ValueError, match=r"member 255 outside 0\.\.254"):
        pipeline.nexthop(2, 255, 3, "00:00:0a:00:01:fe", "00:00:0a:00:02:fe")


def test_a_program_without_a_name_is_refused():
    info = synthetic_plain_ecmp_p4info()
    route = next(t for t in info.tables if t.preamble.name == TABLE_ROUTE)
    del route.action_refs[1]  # route_to_edge
    with pytest.raises(P4InfoError, match=f"{TABLE_ROUTE} does not offer {ACTION_TO_EDGE}"):
        PlainEcmpPipeline(P4Info(info))
    info = synthetic_plain_ecmp_p4info()
    info.counters[0].preamble.ClearField("structured_annotations")
    with pytest.raises(P4InfoError, match=f"{COUNTER_DROP_REASON} lacks its @drop_reasons"):
        PlainEcmpPipeline(P4Info(info))


def test_drop_counts_by_reason_name():
    pipeline = PlainEcmpPipeline(P4Info(synthetic_plain_ecmp_p4info()))
    counts = pipeline.drop_counts({5: CounterValue(3, 0), 6: CounterValue(1, 0)})
    assert counts["ipv4_checksum"] == 3 and counts["ttl_expired"] == 1
    assert counts["no_route"] == 0 and len(counts) == len(DROP_REASONS)
