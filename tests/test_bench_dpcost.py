"""`make bench-dpcost`: parsing perf's counts and nm's symbols, and, end to end, the counts of
the three programs on BMv2."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys

import pytest

from mpsched.bench.dpcost import parse_perf_stat, per_packet, symbol_addresses

from .conftest import require


def test_parse_perf_stat_takes_counted_events_only():
    text = (
        "1200,,mpsched_dpcost:rx,2000000,100.00,,\n"
        "276000,,mpsched_dpcost:field_writes,2000000,100.00,,\n"
        "<not counted>,,mpsched_dpcost:conditions,0,0.00,,\n"
        "\n"
        "garbage line\n"
    )
    counts = parse_perf_stat(text)
    assert counts == {"rx": 1200, "field_writes": 276000}
    assert per_packet(counts, "field_writes") == 230
    assert per_packet(counts, "conditions") is None
    assert per_packet({"field_writes": 5}, "field_writes") is None  # no packets: no figure


def test_symbol_addresses_finds_defined_functions(tmp_path):
    if shutil.which("cc") is None or shutil.which("nm") is None:
        pytest.skip("missing: cc or nm (make setup installs gcc and binutils)")
    src = tmp_path / "x.c"
    src.write_text(
        "int probe_me(int x) { return x + 1; }\nint main(void) { return probe_me(0); }\n"
    )
    subprocess.run(["cc", "-O0", "-o", str(tmp_path / "x"), str(src)], check=True)
    found = symbol_addresses(str(tmp_path / "x"), ["probe_me", "main", "not_there"])
    assert set(found) == {"probe_me", "main"} and found["probe_me"] > 0


@pytest.mark.integration
def test_dpcost_counts_what_the_programs_do(artifacts):
    require("root", "simple_switch_grpc")
    if shutil.which("perf") is None:
        pytest.skip("missing: perf (make setup installs linux-perf)")
    from mpsched.bench.dataplane import missing_programs

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
        m[0]: [float(x) for x in m[1:]]
        for m in re.findall(
            r"^(\w+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)$", out.stdout, re.M
        )
    }
    assert set(rows) == {"minimal", "ipv4", "full"}, out.stdout
    # one table, no condition in the minimal program; IPv4 forwarding adds one condition
    assert rows["minimal"][2:] == [1.0, 0.0] and rows["ipv4"][2:] == [1.0, 1.0], out.stdout
    # the full program writes more fields and applies more tables than either reference
    assert rows["full"][1] > rows["ipv4"][1] > rows["minimal"][1], out.stdout
    assert rows["full"][2] > 1, out.stdout
    listed = subprocess.run(["perf", "probe", "-l"], capture_output=True, text=True).stdout
    assert "mpsched_dpcost" not in listed  # the probes are gone
