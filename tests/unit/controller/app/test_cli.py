"""src/mpsched/controller/app/cli.py: the controller's options give the telemetry settings, and
their
errors name the option."""

from __future__ import annotations

import pytest

from mpsched.controller.app.cli import build_parser, telemetry_config
from mpsched.controller.telemetry.estimators import TelemetryConfig


def test_telemetry_options_of_the_controller_command():
    parse = build_parser().parse_args
    base = ["--netcfg", "x.json"]
    assert telemetry_config(parse(base)) == TelemetryConfig()
    cfg = telemetry_config(parse([*base, "--report-interval-ms", "2.5", "--probe-interval-ms",
                                  "0", "--dead-after-ms", "100", "--report-batch-ms", "0"]))
    assert (cfg.report_interval_us, cfg.probe_interval_s, cfg.dead_after_us) == (2500, None,
                                                                                  100_000)
    assert cfg.report_batch_us == 0
    assert telemetry_config(parse([*base, "--report-batch-ms", "20"])).report_batch_us == 20_000
    for option in ("--report-interval-ms", "--rtt-interval-ms", "--dead-after-ms",
                   "--probe-interval-ms", "--report-batch-ms"):
        with pytest.raises(ValueError, match=option):
            telemetry_config(parse([*base, option, "-1"]))


def test_the_idle_probe_interval_option():
    parse = build_parser().parse_args
    base = ["--netcfg", "x.json"]
    assert telemetry_config(parse(base)).idle_probe_interval_s == 0.2
    assert telemetry_config(parse([*base, "--idle-probe-interval-ms", "500"])
                            ).idle_probe_interval_s == 0.5
    assert telemetry_config(parse([*base, "--idle-probe-interval-ms", "0"])
                            ).idle_probe_interval_s is None
    with pytest.raises(ValueError, match="--idle-probe-interval-ms: must be >= 0"):
        telemetry_config(parse([*base, "--idle-probe-interval-ms", "-1"]))


def test_a_telemetry_option_out_of_range_is_named():
    parse = build_parser().parse_args
    with pytest.raises(ValueError, match="--report-interval-ms: must be >= 0.001"):
        telemetry_config(parse(["--netcfg", "x.json", "--report-interval-ms", "0"]))
    with pytest.raises(ValueError, match="--report-budget-pps: must be >= 0"):
        telemetry_config(parse(["--netcfg", "x.json", "--report-budget-pps", "-5"]))
