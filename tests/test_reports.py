"""Digest decoding: member names from the P4Info order, bad shapes rejected."""

from __future__ import annotations

import pytest
from p4.v1 import p4data_pb2

from mpsched.controller.reports import DigestFormatError, check_members, path_report

MEMBERS = ["path_id", "seq", "tx_ts", "rx_ts", "rx_packets", "rx_bytes", "lost", "reordered"]


def digest(values: list[int], widths: list[int]) -> p4data_pb2.P4Data:
    data = p4data_pb2.P4Data()
    for v, w in zip(values, widths, strict=True):
        data.struct.members.add().bitstring = v.to_bytes((w + 7) // 8, "big")
    return data


def test_decodes_in_p4info_order():
    widths = [8, 32, 48, 48, 32, 32, 32, 32]
    r = path_report(digest([2, 7, 1_000_000, 1_020_000, 99, 99_000, 1, 0], widths),
                    MEMBERS, "s2", 5.0)
    assert (r.path_id, r.seq, r.tx_ts_us, r.rx_ts_us) == (2, 7, 1_000_000, 1_020_000)
    assert (r.rx_packets, r.rx_bytes, r.lost, r.reordered, r.switch) == (99, 99_000, 1, 0, "s2")
    # another member order in the P4 struct still decodes right
    order = list(reversed(MEMBERS))
    r2 = path_report(digest([0, 1, 99_000, 99, 1_020_000, 1_000_000, 7, 2],
                            list(reversed(widths))), order, "s2", 5.0)
    assert r2 == r


def test_bad_shapes_are_rejected():
    with pytest.raises(DigestFormatError):
        path_report(digest([1, 2], [8, 8]), MEMBERS, "s2", 0.0)
    with pytest.raises(DigestFormatError):
        path_report(p4data_pb2.P4Data(bitstring=b"\x01"), MEMBERS, "s2", 0.0)
    with pytest.raises(DigestFormatError, match="lacks reordered"):
        check_members(MEMBERS[:-1])
    check_members(MEMBERS)


def test_every_mapped_field_exists_on_path_report():
    from dataclasses import fields

    from mpsched.controller.reports import REPORT_FIELDS
    from mpsched.controller.telemetry import PathReport

    assert set(REPORT_FIELDS.values()) <= {f.name for f in fields(PathReport)}
