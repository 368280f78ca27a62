"""The malformed-input corpus (src/mpsched/bench/scenario_fuzz*.py) through `mpsched check` in a
child limited to 1 GiB and 20 s a file: every case exits 2 naming the file and its field."""

from __future__ import annotations

import os
from collections import Counter

from mpsched.bench import scenario_fuzz
from mpsched.bench.scenario_fuzz_cases import FABRIC, SCENARIO, Case, dump
from mpsched.bench.scenario_fuzz_topology import DESCRIPTION, fabric_description

GROUPS = {"read", "yaml", "numbers", "scenario", "fabric", "trace", "description", "section"}


def test_the_corpus_has_every_group_and_over_100_cases():
    cases = scenario_fuzz.all_cases()
    assert len(cases) >= 100
    assert set(Counter(c.group for c in cases)) == GROUPS
    assert len({c.id for c in cases}) == len(cases), "case ids are unique"
    assert all(c.expect for c in cases)


def test_the_bases_the_cases_change_are_valid(tmp_path):
    """So that each case is refused for what it changed."""
    import json

    files = {"s.yaml": dump(SCENARIO), "f.yaml": dump(FABRIC), "g.yaml": dump(FABRIC["fabric"]),
             "net.json": json.dumps(DESCRIPTION).encode(),
             "fnet.json": json.dumps(fabric_description()).encode()}
    for name, content in files.items():
        (tmp_path / name).write_bytes(content)
    reports = scenario_fuzz.check_all([str(tmp_path / name) for name in files])
    assert [r["status"] for r in reports] == [0] * len(files), reports


def test_every_case_is_refused_naming_the_file_and_the_field(tmp_path):
    outcomes = scenario_fuzz.run(tmp_path)
    failed = [f"{o.case.id}: {o.problem}: {o.output.strip()[:300]}" for o in outcomes
              if not o.ok]
    assert not failed, "\n".join(failed)
    assert max(o.seconds for o in outcomes) < scenario_fuzz.TIMEOUT_S


def test_the_verdict_fails_what_is_accepted_crashes_or_misnames():
    case = Case("t", "x", "s.yaml", expect="name")
    assert scenario_fuzz.verdict(case, "f", 2, "f: name: bad") == ""
    assert scenario_fuzz.verdict(case, "f", 0, "f: ok (scenario)") == "accepted"
    assert scenario_fuzz.verdict(case, "f", None, "Traceback (most...") == "a traceback"
    assert scenario_fuzz.verdict(case, "f", 2, "f: seed: bad") == "the message lacks 'name'"
    assert scenario_fuzz.verdict(case, "f", 2, "g: name: bad").startswith("the message does")
    assert scenario_fuzz.verdict(case, "f", 2, "f: internal error while validating (x)") == (
        "an exception a validator let through")


def test_a_child_out_of_memory_or_hanging_is_a_failure_and_the_rest_go_on(tmp_path):
    good = tmp_path / "s.yaml"
    good.write_bytes(dump(SCENARIO))
    # 64 MiB of address space: the child cannot even import the validators. Where the
    # allocation fails decides how: a MemoryError kills the child (status None), or a module
    # half imported raises something else that the loader's guard names as an internal
    # error (exit 2). Either way the file is no clean result, and the bench counts it.
    [starved] = scenario_fuzz.check_all([str(good)], memory=64 << 20)
    assert (starved["status"] is None and "MemoryError" in starved["output"]) or (
        starved["status"] == 2 and "internal error while validating" in starved["output"]
    ), starved
    fifo = tmp_path / "p.yaml"
    os.mkfifo(fifo)
    writer = os.open(fifo, os.O_RDWR)  # a writer that never writes: the read waits
    try:
        hung, after = scenario_fuzz.check_all([str(fifo), str(good)], timeout_s=5)
    finally:
        os.close(writer)
    assert hung["status"] is None and hung["output"].startswith("timeout"), hung
    assert after["status"] == 0, after
