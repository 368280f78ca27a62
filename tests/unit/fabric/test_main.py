"""`mpsched fabric FILE` (src/mpsched/fabric/__main__.py)."""

from __future__ import annotations

import pytest

from mpsched import cli
from mpsched.fabric.__main__ import main
from tests.unit.fabric.helpers import example, example_path

LEAF_SPINE = str(example_path("leaf-spine-4x2"))
WAN = str(example_path("wan"))


def test_leaf_spine_with_a_failed_link(capsys):
    assert main([LEAF_SPINE, "--fail", "leaf1-spine2"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"{LEAF_SPINE}: leaf_spine fabric, 6 switches, 8 links, 4 edges, "
                          "12 ordered pairs, up to 2 paths each\n")
    intact, failed = out.split("paths with leaf1-spine2 down:\n")
    assert "  leaf1   edge     1     1      10.0.1.0/24  host1:1 spine1:2 spine2:3\n" in intact
    assert "  leaf1->leaf2  2   2     2         0.625   leaf1 spine2 leaf2\n" in intact
    assert "  leaf1->leaf2  2   -     -         -       leaf1 spine2 leaf2  down\n" in failed
    assert "  leaf2->leaf3  2   2     2         2.5     leaf2 spine2 leaf3\n" in failed
    assert failed.count("down\n") == 6  # leaf1's 3 pairs each way


def test_wan_at_a_time_and_next_hops(capsys):
    assert main([WAN, "--at", "20", "--next-hops"]) == 0
    out = capsys.readouterr().out
    assert "paths with den-kc down (at 20 s):" in out
    assert "  den-kc   den  kc   5       3         0       100    down   4\n" in out
    assert "  sea->chi  2   3     18        2.5     sea kc atl chi       new\n" in out
    assert "next hops:\n  switch  edges  path  port\n  sea     1->2   1     2\n" in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        ([WAN, "--fail", "nope"], "mpsched fabric: --fail: no link or switch named 'nope'"),
        (["scenarios/llhd-1.yaml"], "mpsched fabric: scenarios/llhd-1.yaml: fabric: missing: "
         "this scenario has two edge switches"),
    ],
)
def test_errors_exit_2(capsys, argv, message):
    assert main(argv) == 2
    assert message in capsys.readouterr().err


def test_a_bad_file_names_file_and_field(tmp_path, capsys):
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: x\nduration_s: 10\nfabric:\n  leaf_spine:\n    leaves: 2\n"
                   "    spines: 2\n    link: {rate_mbps: 10}\n"
                   "    overrides: [{link: leaf1-spine3}]\n")
    assert main([str(bad)]) == 2
    assert capsys.readouterr().err.startswith(
        f"mpsched fabric: {bad}: fabric.leaf_spine.overrides[0].link: no such link")


def test_mpsched_fabric_is_the_same_command(capsys):
    assert cli.main(["fabric", WAN]) == 0
    via_cli = capsys.readouterr().out
    assert main([WAN]) == 0
    assert capsys.readouterr().out == via_cli


@pytest.mark.parametrize("compare", [False, True])
def test_run_and_compare_take_a_fabric(compare):
    """`mpsched run` and `compare` load a fabric scenario (the fabric testbed runs it);
    running it is tests/integration/test_fabric_testbed.py."""
    from mpsched.lab.cmdline import build_parser
    from mpsched.lab.experiment import _scenarios

    (sc,) = _scenarios(build_parser(compare).parse_args([WAN, "--duration", "5"]))
    assert sc.fabric is not None and sc.duration_s == 5 and sc.workload == ()
    assert sc.fabric_section == example("wan")


def test_commands_for_two_edges_refuse_a_fabric(capsys):
    from mpsched.lab import phases

    assert phases.main([WAN, "."]) == 2
    assert capsys.readouterr().err.startswith(
        f"phases: {WAN}: fabric: a fabric is inspected with `mpsched fabric FILE` and run "
        "with `mpsched run` or `mpsched compare`")
