"""`make bench-dpcost`: parsing perf's counts and nm's symbols, and, end to end, the counts of
the three programs on BMv2."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys

import pytest

from tests.conftest import require

COUNTS = {"field_writes": 1, "table_applies": 2, "conditions": 3}  # column after the CPU time
ROW = re.compile(r"^(\w+)\s+([\d.]+)\s+([\d.]+|n/a)\s+([\d.]+|n/a)\s+([\d.]+|n/a)$", re.M)


@pytest.fixture(scope="module")
def dpcost():
    """One run of the benchmark on the installed BMv2: its rows and its `not counted` lines."""
    require("root", "simple_switch_grpc")
    if shutil.which("perf") is None:
        pytest.skip("missing: perf (make setup installs linux-perf)")
    from mpsched.bench.dataplane_programs import missing_programs

    if missing_programs():
        pytest.skip(missing_programs()[0])
    out = subprocess.run(
        [sys.executable, "-m", "mpsched.bench.dpcost", "--seconds", "0.5", "--rate", "5000"],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert out.returncode == 0, out.stderr
    rows = {
        m[0]: [None if x == "n/a" else float(x) for x in m[1:]] for m in ROW.findall(out.stdout)
    }
    not_counted = dict(re.findall(r"^not counted: (\w+) \((.*)\)$", out.stdout, re.M))
    listed = subprocess.run(["perf", "probe", "-l"], capture_output=True, text=True).stdout
    return rows, not_counted, out.stdout, listed


def _column(dpcost, event):
    rows, not_counted, text, _ = dpcost
    assert set(rows) == {"minimal", "ipv4", "full"}, text
    if event in not_counted:
        pytest.skip(f"{event} not counted on this BMv2: {not_counted[event]}")
    column = {name: row[COUNTS[event]] for name, row in rows.items()}
    assert None not in column.values(), text  # counted, so every program has a figure
    return column


@pytest.mark.integration
def test_dpcost_every_program_has_a_cpu_time_and_the_probes_are_gone(dpcost):
    rows, _, text, listed = dpcost
    assert set(rows) == {"minimal", "ipv4", "full"}, text
    assert all(row[0] > 0 for row in rows.values()), text
    assert "mpsched_dpcost" not in listed  # the probes are removed afterwards


@pytest.mark.integration
def test_dpcost_table_applies(dpcost):
    """One table in the minimal and the IPv4 program; the full program applies more."""
    col = _column(dpcost, "table_applies")
    assert col["minimal"] == 1.0 and col["ipv4"] == 1.0 and col["full"] > 1, col


@pytest.mark.integration
def test_dpcost_conditions(dpcost):
    """None in the minimal program; IPv4 forwarding adds one (the TTL check)."""
    col = _column(dpcost, "conditions")
    assert col["minimal"] == 0.0 and col["ipv4"] == 1.0 and col["full"] > 1, col


@pytest.mark.integration
def test_dpcost_field_writes(dpcost):
    """The full program writes more fields than IPv4 forwarding, which writes more than the
    minimal one."""
    col = _column(dpcost, "field_writes")
    assert col["full"] > col["ipv4"] > col["minimal"], col
