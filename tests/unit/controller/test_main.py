"""controller/__main__.py: the command line's checks name the option; a start that cannot
work is a StartError (exit 2)."""

from __future__ import annotations

import pytest

from mpsched.controller.__main__ import StartError, build_controller, build_parser, check_args


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


def test_the_step_budget_reaches_the_controller(tmp_path, artifacts):
    from mpsched.fabric.files import parse_fabric
    from mpsched.fabric.netdesc import describe

    section = {"leaf_spine": {"leaves": 4, "spines": 2, "link": {"rate_mbps": 10}}}
    describe(section, parse_fabric(section), lambda i: f"127.0.0.1:{9000 + i}").dump(
        tmp_path / "fabric.json")
    a = args("--no-state", "--p4info", str(artifacts.p4info), "--bmv2-json",
             str(artifacts.bmv2_json), "--step-budget-pct", "10")
    a.netcfg = str(tmp_path / "fabric.json")
    assert build_controller(a, check_args(a)).settings.step_budget == pytest.approx(0.1)
    assert args().step_budget_pct == 25.0  # STEP_BUDGET


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
