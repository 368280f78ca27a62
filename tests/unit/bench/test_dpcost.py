"""`make bench-dpcost`: parsing perf's counts and nm's symbols, and, end to end, the counts of
the three programs on BMv2."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from mpsched.bench.dpcost_probes import (
    defined_symbols,
    parse_perf_stat,
    per_packet,
    shared_libraries,
    symbol_locations,
)


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


def test_role_lines_give_the_edge_and_the_transit_cost_of_the_full_program():
    from mpsched.bench.dpcost import Cost, role_lines

    full_tagged = Cost(62.04, 404.0, 24.25, 30.5)
    costs = {"tagged": {"full": full_tagged, "lean": Cost(1, 1, 1, 1)},
             "transit": {"full": Cost(45.0, 260.0, 2.0, None)}, "udp": {"full": Cost(9, 9, 9, 9)}}
    assert role_lines(costs) == [
        "dpcost_edge_us=62.0", "dpcost_edge_table_applies=24.2", "dpcost_edge_conditions=30.5",
        "dpcost_edge_field_writes=404.0", "dpcost_transit_us=45.0",
        "dpcost_transit_table_applies=2.0", "dpcost_transit_conditions=n/a",
        "dpcost_transit_field_writes=260.0"]
    assert role_lines({"udp": {"full": full_tagged}}) == []
