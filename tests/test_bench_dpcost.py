"""`make bench-dpcost`: parsing perf's counts and nm's symbols, and, end to end, the counts of
the three programs on BMv2."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys

import pytest

from mpsched.bench.dpcost import (
    defined_symbols,
    parse_perf_stat,
    per_packet,
    shared_libraries,
    symbol_locations,
)

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


def _cc(*args: str) -> None:
    subprocess.run(["cc", *args], check=True)


@pytest.fixture
def toolbox():
    missing = [t for t in ("cc", "nm", "ldd", "strip") if shutil.which(t) is None]
    if missing:
        pytest.skip(f"missing: {', '.join(missing)} (make setup installs gcc, binutils, libc-bin)")


def test_symbol_locations_in_an_unstripped_executable(tmp_path, toolbox):
    src = tmp_path / "x.c"
    src.write_text(
        "int probe_me(int x) { return x + 1; }\nint main(void) { return probe_me(0); }\n"
    )
    _cc("-O0", "-o", str(tmp_path / "x"), str(src))
    exe = str(tmp_path / "x")
    found = symbol_locations(exe, ["probe_me", "main", "not_there"])
    assert set(found) == {"probe_me", "main"}
    assert found["probe_me"][0] == exe and found["probe_me"][1] > 0


def test_symbol_locations_in_the_libraries_of_a_stripped_executable(tmp_path, toolbox):
    """As distributions ship BMv2: the executable stripped, the code in a shared library."""
    (tmp_path / "lib.c").write_text("int probe_me(int x) { return x + 1; }\n")
    (tmp_path / "main.c").write_text(
        "int probe_me(int x);\nint main(void) { return probe_me(0); }\n"
    )
    lib = tmp_path / "libprobe.so"
    _cc("-O0", "-shared", "-fPIC", "-o", str(lib), str(tmp_path / "lib.c"))
    exe = tmp_path / "x"
    _cc(
        "-O0", "-o", str(exe), str(tmp_path / "main.c"),
        f"-L{tmp_path}", "-lprobe", f"-Wl,-rpath,{tmp_path}",
    )  # fmt: skip
    subprocess.run(["strip", str(exe)], check=True)
    assert shared_libraries(str(exe)).count(str(lib)) == 1
    found = symbol_locations(str(exe), ["probe_me", "main"])
    assert set(found) == {"probe_me"}  # main went with the executable's symbol table
    assert found["probe_me"][0] == str(lib) and found["probe_me"][1] > 0


def test_a_stripped_object_has_no_symbols_and_raises_nothing(tmp_path, toolbox):
    (tmp_path / "x.c").write_text("int main(void) { return 0; }\n")
    _cc("-o", str(tmp_path / "x"), str(tmp_path / "x.c"))
    subprocess.run(["strip", str(tmp_path / "x")], check=True)
    assert defined_symbols(str(tmp_path / "x"), {"main"}, dynamic=False) == {}


COUNTS = {"field_writes": 1, "table_applies": 2, "conditions": 3}  # column after the CPU time
ROW = re.compile(r"^(\w+)\s+([\d.]+)\s+([\d.]+|n/a)\s+([\d.]+|n/a)\s+([\d.]+|n/a)$", re.M)


@pytest.fixture(scope="module")
def dpcost():
    """One run of the benchmark on the installed BMv2: its rows and its `not counted` lines."""
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
