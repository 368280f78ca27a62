"""src/mpsched/controller/model/reports.py: the reports' data fields are the members of the P4
digests' structs, by name (the decoder relies on it: southbound/reports.py)."""

from __future__ import annotations

import dataclasses
import re

from mpsched.controller.model.reports import PathReport, RttReport
from mpsched.proc.layout import REPO_ROOT

CONTEXT = {"switch", "received_at"}  # the controller's, not the digest's


def struct_members(name: str) -> set[str]:
    """The members of P4 struct `name` in p4src/include/."""
    for path in sorted((REPO_ROOT / "p4src" / "include").glob("*.p4")):
        found = re.search(r"struct\s+" + name + r"\s*\{(.*?)\}", path.read_text(), re.S)
        if found:
            return set(re.findall(r"^\s*\S+(?:<\d+>)?\s+(\w+)\s*;", found.group(1), re.M))
    raise AssertionError(f"struct {name} not in p4src/include")


def data_fields(cls: type) -> set[str]:
    return {f.name for f in dataclasses.fields(cls)} - CONTEXT


def test_path_report_fields_are_path_report_t_members():
    assert data_fields(PathReport) == struct_members("path_report_t")


def test_rtt_report_fields_are_rtt_report_t_members():
    assert data_fields(RttReport) == struct_members("rtt_report_t")


def test_a_report_from_an_unknown_edge():
    r = PathReport("s2", 1, 7, 1000, 1020, 9, 9000, 0, 0, 0, received_at=5.0)
    assert r.src_edge == 0  # not known: the switch's one peer
