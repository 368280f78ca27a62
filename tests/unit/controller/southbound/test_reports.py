"""Digest values to PathReport: names shared with the P4 struct, missing members named."""

from __future__ import annotations

import pytest

from mpsched.controller.southbound.reports import (
    DIGEST_FIELDS,
    SRC_EDGE_MEMBER,
    DigestFormatError,
    check_members,
    path_report,
    reports_from,
)

VALUES = {"path_id": 2, "seq": 7, "tx_ts": 1_000_000, "rx_ts": 1_020_000, "rx_packets": 99,
          "rx_bytes": 99_000, "lost": 1, "reordered": 0, "flow_ooo": 0, "src_edge": 1}


def test_a_report_from_decoded_values():
    r = path_report({**VALUES, "extra": 5}, "s2", 5.0)
    assert (r.path_id, r.seq, r.tx_ts, r.rx_ts, r.switch) == (2, 7, 1_000_000, 1_020_000, "s2")
    assert r.src_edge == 1  # the ingress edge of the path (a fabric has many)


def test_missing_members_are_named():
    with pytest.raises(DigestFormatError, match="lacks reordered"):
        check_members([m for m in VALUES if m != "reordered"])
    with pytest.raises(DigestFormatError, match="lacks lost"):
        path_report({k: v for k, v in VALUES.items() if k != "lost"}, "s2", 0.0)
    with pytest.raises(DigestFormatError, match="lacks src_edge"):
        check_members([m for m in VALUES if m != SRC_EDGE_MEMBER])
    check_members(VALUES)
    assert set(DIGEST_FIELDS) == set(VALUES)


def test_a_report_is_from_the_edge_it_names():
    """Path ids are numbered per pair of edges: a report is only about the named edge's."""
    assert reports_from({**VALUES, SRC_EDGE_MEMBER: 2}, 2)
    assert not reports_from({**VALUES, SRC_EDGE_MEMBER: 3}, 2)
    without = {k: v for k, v in VALUES.items() if k != SRC_EDGE_MEMBER}
    assert not reports_from(without, 2)  # a program without edges in its reports


def test_the_compiled_program_carries_every_member(artifacts):
    from mpsched.p4rt.p4info import P4Info
    from mpsched.p4rt.pipeline import Pipeline

    _, members = Pipeline(P4Info.from_file(artifacts.p4info)).path_report_digest()
    check_members(members)


RTT_VALUES = {"path_id": 3, "peer_edge": 2, "rtt_us": 41_500, "retrans": 2,
              "inflight_bytes": 64_000}


def test_an_rtt_report_from_decoded_values():
    from mpsched.controller.southbound.reports import (
        RTT_DIGEST_FIELDS,
        check_rtt_members,
        rtt_report,
    )

    r = rtt_report({**RTT_VALUES, "extra": 1}, "s1", 3.0)
    assert (r.switch, r.path_id, r.peer_edge, r.rtt_us, r.retrans, r.inflight_bytes,
            r.received_at) == ("s1", 3, 2, 41_500, 2, 64_000, 3.0)
    assert set(RTT_DIGEST_FIELDS) == set(RTT_VALUES)
    check_rtt_members(RTT_VALUES)
    with pytest.raises(DigestFormatError, match="RTT report digest lacks inflight_bytes"):
        check_rtt_members([m for m in RTT_VALUES if m != "inflight_bytes"])
    with pytest.raises(DigestFormatError, match="lacks rtt_us"):
        rtt_report({k: v for k, v in RTT_VALUES.items() if k != "rtt_us"}, "s1", 0.0)


def test_an_rtt_report_names_its_peer_edge():
    from mpsched.controller.southbound.reports import rtt_report

    assert rtt_report({**RTT_VALUES, "peer_edge": 3}, "s1", 3.0).peer_edge == 3
    with pytest.raises(DigestFormatError, match="lacks peer_edge"):
        rtt_report({k: v for k, v in RTT_VALUES.items() if k != "peer_edge"}, "s1", 0.0)


def test_the_compiled_program_carries_every_rtt_member(artifacts):
    from mpsched.controller.southbound.reports import check_rtt_members
    from mpsched.p4rt.p4info import P4Info
    from mpsched.p4rt.pipeline import DIGEST_RTT_REPORT, Pipeline
    from tests.fake_p4rt import RTT_REPORT_MEMBERS

    p4info = P4Info.from_file(artifacts.p4info)
    digest_id, members = Pipeline(p4info).rtt_report_digest()
    assert digest_id == p4info.digest_id(DIGEST_RTT_REPORT)
    assert p4info.digest_members(DIGEST_RTT_REPORT) == RTT_REPORT_MEMBERS
    check_rtt_members(members)
    entry = Pipeline(p4info).rtt_config(2, 1, 10_000)
    assert entry.match == {"peer_edge": 2, "path_id": 1}
    assert entry.params == {"interval_us": 10_000}
    with pytest.raises(ValueError, match="path id"):
        Pipeline(p4info).rtt_config(2, 0, 10_000)
    with pytest.raises(ValueError, match="edge id"):
        Pipeline(p4info).rtt_config(0, 1, 10_000)
