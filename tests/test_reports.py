"""Digest values to PathReport: names shared with the P4 struct, missing members named."""

from __future__ import annotations

import pytest

from mpsched.controller.reports import DIGEST_FIELDS, DigestFormatError, check_members, path_report

VALUES = {"path_id": 2, "seq": 7, "tx_ts": 1_000_000, "rx_ts": 1_020_000, "rx_packets": 99,
          "rx_bytes": 99_000, "lost": 1, "reordered": 0}


def test_a_report_from_decoded_values():
    r = path_report({**VALUES, "extra": 5}, "s2", 5.0)
    assert (r.path_id, r.seq, r.tx_ts, r.rx_ts, r.switch) == (2, 7, 1_000_000, 1_020_000, "s2")


def test_missing_members_are_named():
    with pytest.raises(DigestFormatError, match="lacks reordered"):
        check_members([m for m in VALUES if m != "reordered"])
    with pytest.raises(DigestFormatError, match="lacks lost"):
        path_report({k: v for k, v in VALUES.items() if k != "lost"}, "s2", 0.0)
    check_members(VALUES)
    assert set(DIGEST_FIELDS) == set(VALUES)


def test_the_compiled_program_carries_every_member(artifacts):
    from mpsched.p4info import P4Info
    from mpsched.pipeline import Pipeline

    _, members = Pipeline(P4Info.from_file(artifacts.p4info)).path_report_digest()
    check_members(members)
