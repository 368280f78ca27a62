"""tests/ptf/test_ptf.py's reading of PTF's results: a skipped case is a skip, not a pass;
a runner that exits non-zero with no failed case (BMv2 died) is a failure."""

from __future__ import annotations

import pytest

from tests.ptf.test_ptf import PtfRun, check_case, check_exit, parse_xunit

XUNIT = """<?xml version="1.0" encoding="UTF-8"?>
<testsuite name="forwarding" tests="3">
  <testcase classname="forwarding.RouteToHostTest" name="runTest" time="0.1"/>
  <testcase classname="forwarding.WeightZeroTest" name="runTest" time="0.1">
    <skipped type="skip" message="stage compiled out"/>
  </testcase>
  <testcase classname="forwarding.HashTest" name="runTest" time="0.1">
    <failure type="AssertionError" message="paths differ">trace</failure>
  </testcase>
</testsuite>
"""


@pytest.fixture
def run(tmp_path) -> PtfRun:
    (tmp_path / "TEST-forwarding.xml").write_text(XUNIT)
    return PtfRun(parse_xunit(tmp_path), 1, "tail of the output")


def test_outcomes_are_read_per_case(run):
    assert run.outcomes == {
        "forwarding.RouteToHostTest.runTest": "passed",
        "forwarding.WeightZeroTest.runTest": "skipped: stage compiled out",
        "forwarding.HashTest.runTest": "failure: paths differ",
    }
    assert run.failed()


def test_a_passed_case_passes_a_skipped_one_skips_a_failed_one_fails(run):
    check_case(run, "forwarding.RouteToHostTest")
    with pytest.raises(pytest.skip.Exception, match="PTF skipped .*stage compiled out"):
        check_case(run, "forwarding.WeightZeroTest")
    with pytest.raises(AssertionError, match="paths differ"):
        check_case(run, "forwarding.HashTest")
    with pytest.raises(AssertionError, match="did not run"):
        check_case(run, "forwarding.NoSuchTest")


def test_exit_code_without_a_failed_case_fails():
    passed = {"forwarding.RouteToHostTest.runTest": "passed"}
    check_exit(PtfRun(passed, 0, ""))
    with pytest.raises(pytest.fail.Exception, match="exited 1 .*BMv2 died"):
        check_exit(PtfRun(passed, 1, "ptf: BMv2 died during the tests"))
    # a failed case explains the exit code itself
    check_exit(PtfRun({**passed, "x.Y.runTest": "error: boom"}, 1, ""))
