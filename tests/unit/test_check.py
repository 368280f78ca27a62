"""`mpsched check FILE...` (src/mpsched/check.py): a file's kind told by its content, one line per
file, exit 0 if all are valid and 2 otherwise; nothing started."""

from __future__ import annotations

import json

import yaml

from mpsched import check, cli
from mpsched.proc.layout import REPO_ROOT
from mpsched.testing.scenario_fuzz_cases import FABRIC, SCENARIO
from mpsched.testing.scenario_fuzz_topology import DESCRIPTION, fabric_description


def write(tmp_path, name: str, doc: object) -> str:
    path = tmp_path / name
    path.write_text(json.dumps(doc) if name.endswith(".json") else yaml.safe_dump(doc))
    return str(path)


def test_every_kind_is_told_by_its_content_and_summarised(tmp_path, capsys):
    files = [write(tmp_path, "s.yaml", SCENARIO), write(tmp_path, "f.yaml", FABRIC),
             write(tmp_path, "g.yaml", FABRIC["fabric"]),
             write(tmp_path, "net.json", DESCRIPTION),
             write(tmp_path, "fnet.json", fabric_description())]
    assert cli.main(["check", *files]) == 0
    out = capsys.readouterr()
    assert out.err == ""
    assert out.out.splitlines() == [
        f"{files[0]}: ok (scenario, 'fuzz', 2 paths, 1 workload, 10 s)",
        f"{files[1]}: ok (fabric scenario, 'fuzz-fabric', graph: 3 switches, 2 links, 2 edges, "
        "up to 4 paths per pair, 1 workload, 10 s)",
        f"{files[2]}: ok (fabric, graph: 3 switches, 2 links, 2 edges, up to 4 paths per pair)",
        f"{files[3]}: ok (network description, 2 switches, two edges)",
        f"{files[4]}: ok (network description, 3 switches, graph: 3 switches, 2 links, "
        "2 edges, up to 4 paths per pair)",
    ]


def test_a_bad_file_is_named_with_its_field_and_the_others_still_checked(tmp_path, capsys):
    good = write(tmp_path, "good.yaml", SCENARIO)
    bad = write(tmp_path, "bad.yaml", {**SCENARIO, "name": "../../x"})
    net = write(tmp_path, "net.json", {"switches": []})
    assert check.main([bad, good, net]) == 2
    out = capsys.readouterr()
    assert out.out == f"{good}: ok (scenario, 'fuzz', 2 paths, 1 workload, 10 s)\n"
    assert out.err.splitlines() == [
        f"{bad}: name: must be a letter or digit then up to 63 letters, digits, '.', '_' or "
        "'-' (it names the run's output directory), got '../../x'",
        f"{net}: switches: at least one switch is needed"]


def test_the_shipped_scenarios_are_valid(capsys):
    files = sorted(str(p) for p in (REPO_ROOT / "scenarios").rglob("*.yaml"))
    assert check.main(files) == 0, capsys.readouterr().err
    assert len(capsys.readouterr().out.splitlines()) == len(files)


def test_help_says_how_the_kind_is_told(capsys):
    assert cli.main(["check", "--help"]) == 0
    text = capsys.readouterr().out
    assert "usage: mpsched check [-h] FILE [FILE ...]" in text
    assert "`switches` makes a network description" in text and "exits 0 if every" in text
