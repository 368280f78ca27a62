"""`mpsched run --program plain-ecmp` (src/mpsched/lab/plain_ecmp.py, experiment.py): which
scenarios and options it takes, its runs' policy, and the switches programmed over
P4Runtime (fake servers, tests/fake_p4rt.py; on BMv2: tests/integration/
test_plain_ecmp_run.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from google.protobuf import text_format

from mpsched.fabric.ecmp import fabric_entries
from mpsched.fabric.files import parse_fabric
from mpsched.fabric.netdesc import describe
from mpsched.lab.cmdline import build_parser
from mpsched.lab.experiment import _policies, _program_problems, _scenarios
from mpsched.lab.plain_ecmp import PlainEcmpSwitches
from mpsched.lab.programs import FULL, PLAIN_ECMP
from mpsched.p4rt.p4info import P4Info
from mpsched.p4rt.plain_ecmp import COUNTER_DROP_REASON, PlainEcmpPipeline
from mpsched.proc.layout import P4Artifacts
from tests.fake_p4rt import FakeServer
from tests.plain_p4info import synthetic_plain_ecmp_p4info
from tests.unit.fabric.helpers import example_path

FABRIC = str(example_path("leaf-spine-4x2"))
TWO_EDGES = "scenarios/llhd-1.yaml"
SECTION = {"leaf_spine": {"leaves": 2, "spines": 2, "link": {"rate_mbps": 10}}}


def parsed(*argv: str, compare: bool = False):
    args = build_parser(compare).parse_args(list(argv))
    return args, _scenarios(args)


@pytest.mark.parametrize("compare", [False, True])
def test_its_runs_have_the_policy_plain_ecmp(compare):
    args, (sc,) = parsed(FABRIC, "--program", PLAIN_ECMP, compare=compare)
    assert _policies(args, sc) == (PLAIN_ECMP,)
    assert _program_problems(args.program, [sc], []) == []
    args, (sc,) = parsed(FABRIC, compare=compare)
    assert args.program == FULL and PLAIN_ECMP not in _policies(args, sc)


def test_a_two_edge_scenario_and_a_policy_are_refused():
    args, scenarios = parsed(TWO_EDGES, FABRIC, "--program", PLAIN_ECMP, "--policy", "ca")
    problems = _program_problems(args.program, scenarios, args.policy)
    assert problems[0].startswith(f"--policy: --program {PLAIN_ECMP} runs no scheduler")
    assert problems[1].startswith("llhd-1: --program plain-ecmp needs a fabric scenario")
    assert len(problems) == 2  # the fabric is fine


def test_an_unknown_program_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as exit_:
        build_parser().parse_args([FABRIC, "--program", "nope"])
    assert exit_.value.code == 2
    assert "argument --program: invalid choice: 'nope'" in capsys.readouterr().err


@pytest.fixture
def fabric_of_fakes(tmp_path: Path):
    """A 2x2 leaf-spine whose switches are fake P4Runtime servers, and the plain program's
    artifacts (the synthetic P4Info, a stand-in BMv2 JSON)."""
    servers = [FakeServer().start() for _ in range(4)]
    net = describe(SECTION, parse_fabric(SECTION), lambda i: servers[i - 1].address)
    p4info = tmp_path / "plain_ecmp.p4info.txt"
    p4info.write_text(text_format.MessageToString(synthetic_plain_ecmp_p4info()))
    (tmp_path / "plain_ecmp.json").write_text("{}")
    try:
        yield net, servers, P4Artifacts(tmp_path / "plain_ecmp.json", p4info)
    finally:
        for srv in servers:
            srv.stop()


def test_every_switch_gets_the_program_and_its_entries(fabric_of_fakes):
    net, servers, art = fabric_of_fakes
    PlainEcmpSwitches(net, art).program()
    pipeline = PlainEcmpPipeline(P4Info.from_file(art.p4info))
    wanted = fabric_entries(pipeline, net)
    for sw, srv in zip(net.switches, servers, strict=True):
        assert srv.servicer.pipeline_pushes == 1, sw.name
        assert srv.servicer.config.p4_device_config == b"{}"
        assert len(srv.servicer.entries) == len(wanted[sw.name]), sw.name
    # leaf1: its host, a route to leaf2's subnet and a next hop per spine
    assert len(wanted["leaf1"]) == 4 and len(wanted["spine1"]) == 4


def test_a_switch_that_does_not_answer_is_named(fabric_of_fakes):
    net, servers, art = fabric_of_fakes
    servers[3].stop()
    with pytest.raises(RuntimeError, match="^spine2: no P4Runtime server at"):
        PlainEcmpSwitches(net, art, timeout_s=0.5).program()


def test_drops_are_read_by_reason_from_every_switch(fabric_of_fakes, tmp_path):
    net, servers, art = fabric_of_fakes
    switches = PlainEcmpSwitches(net, art)
    counter = P4Info.from_file(art.p4info).counter_id(COUNTER_DROP_REASON)
    servers[0].servicer.counters[counter] = {5: (7, 700)}  # leaf1: IPV4_CHECKSUM
    switches.save_drops(tmp_path / "drops.json")
    drops = switches.drops()
    assert set(drops) == {"leaf1", "leaf2", "spine1", "spine2"}
    assert drops["leaf1"]["ipv4_checksum"] == 7 and sum(drops["leaf2"].values()) == 0
    assert '"ipv4_checksum": 7' in (tmp_path / "drops.json").read_text()
