"""A scenario's `telemetry:` section (src/mpsched/lab/scenario_telemetry.py): the controller's
own options, checked with its own checks."""

from __future__ import annotations

import argparse

import pytest
import yaml

from mpsched.controller.app.cli import add_measurement_options
from mpsched.lab.scenario import ScenarioError, parse
from tests.unit.lab.test_scenario import MINIMAL


def test_telemetry_options_are_the_controllers_and_reach_its_command_line():
    """`telemetry:` keys are the controller's options (underscores for dashes), checked with
    its own checks; a run's controller gets them as arguments."""
    doc = yaml.safe_load(yaml.safe_dump(MINIMAL))
    assert parse(doc).controller_args == ()
    doc["telemetry"] = {"probe_max_pps": 250, "dead_after_ms": 200, "probe_every_path": True}
    assert parse(doc).controller_args == (
        "--probe-max-pps", "250", "--dead-after-ms", "200", "--probe-every-path")
    parser = argparse.ArgumentParser()
    add_measurement_options(parser)
    args = parser.parse_args(parse(doc).controller_args)
    assert (args.probe_max_pps, args.dead_after_ms, args.probe_every_path) == (250, 200, True)
    for bad, field, message in (
        ({"probe_max_ppx": 1}, "telemetry.probe_max_ppx", "unknown key"),
        ({"poll_interval": 2}, "telemetry.poll_interval", "unknown key"),  # the runner's
        ({"probe_max_pps": -1}, "telemetry.probe_max_pps", ">= 0"),
        ({"dead_after_ms": 0}, "telemetry.dead_after_ms", ">= 0.001"),  # the controller's
        ({"probe_every_path": 1}, "telemetry.probe_every_path", "true or false"),
        ({"probe_interval_ms": "10"}, "telemetry.probe_interval_ms", "a number"),
        ([1], "telemetry", "a mapping"),
    ):
        doc["telemetry"] = bad
        with pytest.raises(ScenarioError, match=message) as err:
            parse(doc)
        assert err.value.field == field, (bad, err.value.field)
