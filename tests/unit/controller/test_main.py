"""src/mpsched/controller/__main__.py: the command line's checks name the option; a start that
cannot
work is a StartError (exit 2)."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from mpsched.controller.__main__ import StartError, build_controller, build_parser, check_args
from mpsched.controller.app.cli import cpu_budget_pct
from mpsched.controller.runtime.governor import CPU_BUDGET_PCT


def args(*extra: str):
    return build_parser().parse_args(["--netcfg", "x.json", *extra])


@pytest.mark.parametrize(
    ("option", "message"),
    [
        (["--poll-interval", "0"], "--poll-interval: must be positive"),
        (["--rest-threads", "0"], "--rest-threads: must be 1..64"),
        (["--election-id", "0"], "--election-id: must be 1..2^63-1, got 0"),
        (["--control-period-ms", "0"], "--control-period-ms: must be "),
        (["--step-budget-pct", "0"], "--step-budget-pct: must be > 0 and <= 100, got 0.0"),
        (["--step-budget-pct", "101"], "--step-budget-pct: must be > 0 and <= 100, got 101.0"),
        (["--dead-after-ms", "0"], "--dead-after-ms: must be >= 0.001, got 0.0"),
        (["--malloc-trim-s", "-1"], "--malloc-trim-s: must be >= 0 (0: never), got -1.0"),
        (["--malloc-trim-s", "nan"], "--malloc-trim-s: must be >= 0 (0: never), got nan"),
        (["--malloc-arenas", "-1"], "--malloc-arenas: must be >= 0 (0: glibc's default), got -1"),
        (["--gc-freeze-min-paths", "-1"], "--gc-freeze-min-paths: must be >= 0 (0: never), got -1"),
    ],
)
def test_out_of_range_options_are_named(option, message):
    with pytest.raises(StartError) as raised:
        check_args(args(*option))
    assert str(raised.value).startswith(message)


def test_valid_options_give_the_telemetry_settings():
    telemetry = check_args(args("--probe-interval-ms", "0", "--probe-every-path"))
    assert telemetry.probe_interval_s is None and telemetry.probe_idle_only is False


def test_a_missing_network_description_is_a_start_error(tmp_path):
    a = args("--no-state")
    a.netcfg = str(tmp_path / "missing.json")
    with pytest.raises(StartError, match="missing.json"):
        build_controller(a, check_args(a))


def test_a_fabric_beyond_the_program_is_refused_naming_file_and_field(tmp_path, artifacts):
    from mpsched.fabric.files import parse_fabric
    from mpsched.fabric.model import ANY_BUILD_MAX_EDGES
    from mpsched.fabric.netdesc import describe

    section = {"leaf_spine": {"leaves": 9, "spines": 2, "link": {"rate_mbps": 10}}}  # > 8 edges
    net = describe(section, parse_fabric(section, max_edges=ANY_BUILD_MAX_EDGES),
                   lambda i: f"127.0.0.1:{9000 + i}")
    net.dump(tmp_path / "fabric.json")
    a = args("--no-state", "--p4info", str(artifacts.p4info), "--bmv2-json",
             str(artifacts.bmv2_json))
    a.netcfg = str(tmp_path / "fabric.json")
    with pytest.raises(StartError) as raised:
        build_controller(a, check_args(a))
    assert str(raised.value) == f"{a.netcfg}: fabric: 9 edges, the program holds 8"


def two_edge_files(tmp_path: Path) -> list[str]:
    """A two-edge network description and the synthetic P4Info (no compiled program
    needed), as command-line options."""
    from google.protobuf import text_format

    from mpsched.netcfg import NetCfg
    from tests.fake_p4rt import synthetic_p4info
    from tests.netdesc import edge_switch

    paths = [{"id": 1, "port": 2}]
    NetCfg.from_dict({"switches": [edge_switch(1, paths=paths), edge_switch(2, paths=paths)]}
                     ).dump(tmp_path / "net.json")
    (tmp_path / "p4info.txt").write_text(text_format.MessageToString(synthetic_p4info()))
    (tmp_path / "main.json").write_text("{}")
    return ["--p4info", str(tmp_path / "p4info.txt"), "--bmv2-json", str(tmp_path / "main.json")]


def start_from(tmp_path: Path, *extra: str):
    a = args(*two_edge_files(tmp_path), *extra)
    a.netcfg = str(tmp_path / "net.json")
    return build_controller(a, check_args(a))


def test_the_step_budget_option_seeds_the_parameter(tmp_path):
    """--step-budget-pct is the start value of `step_budget_pct` (GET/PUT /params), as given;
    the step's budget is that share of the period."""
    ctl = start_from(tmp_path, "--no-state", "--step-budget-pct", "7", "--control-period-ms", "200")
    assert ctl.params().step_budget_pct == 7.0 and ctl.settings.step_budget_pct == 7.0
    assert ctl.step_budget_s() == pytest.approx(0.014)
    assert start_from(tmp_path, "--no-state").params().step_budget_pct == 25.0  # STEP_BUDGET


def test_a_saved_step_budget_replaces_the_option_at_start(tmp_path, caplog):
    """As the control period: the intent saved in the state file wins over the command line,
    and the difference is logged."""
    from mpsched.controller.intent.state import load, save_atomic

    state = tmp_path / "state.json"
    first = start_from(tmp_path, "--state", str(state), "--step-budget-pct", "7")
    save_atomic(state, first.intent())
    assert load(state).params.step_budget_pct == 7.0
    with caplog.at_level(logging.WARNING):
        second = start_from(tmp_path, "--state", str(state), "--step-budget-pct", "40")
    assert second.params().step_budget_pct == 7.0 and second.step_budget_s() == pytest.approx(0.007)
    assert "step budget 7 %, CPU budget 50 %" in caplog.text


def test_the_step_budget_options_help_names_the_parameter(capsys):
    with pytest.raises(SystemExit):
        build_parser().parse_args(["--help"])
    helped = " ".join(capsys.readouterr().out.split())
    assert "the initial value of the parameter step_budget_pct" in helped
    assert 'which PUT /params {"step_budget_pct": N} changes at run time' in helped
    assert "the initial value of the parameter cpu_budget_pct" in helped
    assert "down to 2 %, at the price of the pairs' refresh time" in helped


def test_the_cpu_budget_option_seeds_the_parameter_and_0_is_none(tmp_path):
    assert cpu_budget_pct(args()) == CPU_BUDGET_PCT
    assert start_from(tmp_path, "--no-state", "--cpu-budget-pct", "30").params(
    ).cpu_budget_pct == 30.0
    assert start_from(tmp_path, "--no-state", "--cpu-budget-pct", "0").params(
    ).cpu_budget_pct is None
    for bad in ("-5", "1001"):
        with pytest.raises(StartError, match="--cpu-budget-pct: must be 0 "):
            check_args(args("--cpu-budget-pct", bad))


def test_the_probe_and_report_cap_options():
    from mpsched.controller.telemetry.estimators import REPORT_MAX_PPS

    assert check_args(args("--probe-max-pps", "250")).probe_max_pps == 250
    assert check_args(args()).probe_max_pps is None
    with pytest.raises(StartError, match="--probe-max-pps: must be >= 0"):
        check_args(args("--probe-max-pps", "-1"))
    assert check_args(args("--report-max-pps", "600")).report_max_pps == 600
    assert check_args(args("--report-max-pps", "0")).report_max_pps is None
    assert check_args(args()).report_max_pps == REPORT_MAX_PPS
    with pytest.raises(StartError, match="--report-max-pps: must be >= 0"):
        check_args(args("--report-max-pps", "-1"))
    from mpsched.controller.telemetry.config import REPORT_BUDGET_PPS

    assert check_args(args()).report_budget_pps == REPORT_BUDGET_PPS
    assert check_args(args("--report-budget-pps", "8000")).report_budget_pps == 8000
    assert check_args(args("--report-budget-pps", "0")).report_budget_pps is None
    with pytest.raises(StartError, match="--report-budget-pps: must be >= 0"):
        check_args(args("--report-budget-pps", "-1"))


def test_the_probe_and_counter_budget_options():
    from mpsched.controller.southbound.counters import COUNTER_BUDGET_CPS
    from mpsched.controller.telemetry.config import PROBE_BUDGET_PPS

    assert check_args(args()).probe_budget_pps == PROBE_BUDGET_PPS
    assert check_args(args("--probe-budget-pps", "0")).probe_budget_pps is None
    with pytest.raises(StartError, match="--probe-budget-pps: must be >= 0"):
        check_args(args("--probe-budget-pps", "-1"))
    assert args().counter_budget_cps == COUNTER_BUDGET_CPS
    with pytest.raises(StartError, match="--counter-budget-cps: must be >= 0"):
        check_args(args("--counter-budget-cps", "-1"))


HUB_REFUSED = ("OSKEN_HUB_TYPE='eventlet': the controller runs on os-ken's native hub only "
               "(its REST server, waitress, has the request deadline and the per-client "
               "connection limits, docs/rest.md); unset OSKEN_HUB_TYPE or set it to native")


def test_only_the_native_hub_is_accepted():
    from mpsched.controller.__main__ import check_hub

    check_hub({})
    check_hub({"OSKEN_HUB_TYPE": "native", "PATH": "/bin"})
    with pytest.raises(StartError) as raised:
        check_hub({"OSKEN_HUB_TYPE": "eventlet"})
    assert str(raised.value) == HUB_REFUSED
    with pytest.raises(StartError, match="^OSKEN_HUB_TYPE='gevent': the controller runs on"):
        check_hub({"OSKEN_HUB_TYPE": "gevent"})


def test_a_start_on_the_eventlet_hub_exits_2_before_anything_else(tmp_path, monkeypatch,
                                                                   caplog):
    """Refused first: the network description is not even read, no token written."""
    from mpsched.controller.__main__ import execute

    monkeypatch.setenv("OSKEN_HUB_TYPE", "eventlet")
    token = tmp_path / "run" / "token"
    parsed = build_parser().parse_args(["--netcfg", str(tmp_path / "none.json"),
                                        "--token-file", str(token)])
    with caplog.at_level(logging.ERROR):
        assert execute(parsed) == 2
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR] == [
        HUB_REFUSED]
    assert not (tmp_path / "run").exists()
