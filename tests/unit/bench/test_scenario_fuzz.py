"""The malformed-input corpus (src/mpsched/bench/scenario_fuzz*.py) through `mpsched check` in a
child limited to 1 GiB and 20 s a file: every case exits 2 naming the file and its field."""

from __future__ import annotations

import sys
from collections import Counter

from mpsched.bench import scenario_fuzz
from mpsched.testing.scenario_fuzz_cases import FABRIC, SCENARIO, Case, dump
from mpsched.testing.scenario_fuzz_topology import DESCRIPTION, fabric_description

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
    # Nothing the corpus holds makes `mpsched check` hang any more (a FIFO with a silent
    # writer is refused before it is read): a child that sleeps over a file named *.hang
    # stands for one, and the next child checks the files after it.
    hang = ("import sys, time\nfrom mpsched.bench.scenario_fuzz import child\n"
            "if sys.argv[1].endswith('.hang'):\n    time.sleep(60)\n"
            "sys.exit(child(sys.argv[1:]))\n")
    hung, after = scenario_fuzz.check_all([str(tmp_path / "x.hang"), str(good)], timeout_s=5,
                                          command=(sys.executable, "-c", hang))
    assert hung["status"] is None and hung["output"].startswith("timeout"), hung
    assert after["status"] == 0, after


def test_a_fifo_with_a_silent_writer_is_refused_at_once(tmp_path):
    """The corpus case: a writer holds the FIFO open while the child checks it."""
    [case] = [c for c in scenario_fuzz.all_cases() if c.special == "fifo-writer"]
    [outcome] = scenario_fuzz.run(tmp_path, [case], timeout_s=10)
    assert outcome.ok, outcome
    assert outcome.output == f"{outcome.path}: is a FIFO (named pipe), not a regular file " \
                             "(only a regular file is read)\n"
    assert outcome.seconds < 2
