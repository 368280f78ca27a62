"""A scenario's `telemetry:` section: the controller's measurement options for its runs.

The keys are the controller's own command-line options of how often the switches probe,
report and are read, and when a silent path is dead (`mpsched controller --help`: the
telemetry, budget and liveness groups of src/mpsched/controller/app/cli.py), spelt with underscores
(`probe_max_pps: 250` is `--probe-max-pps 250`). They are read from the controller's parser,
so a new option there is a new key here, and checked by the controller's own checks
(`telemetry_config`), so a bad value fails before a testbed starts, naming the key. The
runner gives them to the controller of every run of the scenario (`controller_args`).

What it is for: a probe crosses every switch of its path, and a fabric's edges probe every
(destination edge, path) they do not keep busy with traffic, so on a testbed of software
switches the probes can cost more CPU than the traffic does (docs/results/fabric-cost.md, "Rates on
two cores"). A scenario can cap them (`probe_max_pps`) and say so in its file, instead of the
machine marking its runs CPU-bound. `poll_interval` is left out: the runner sets it.
"""

from __future__ import annotations

import argparse
from functools import cache
from typing import Any

from mpsched.controller.app.cli import add_measurement_options, telemetry_config
from mpsched.validation import MAX_MAGNITUDE, fail, finite, shown

RUNNER_OWNED = frozenset({"poll_interval"})  # lab/runner.py sets it for every run


@cache
def _options() -> dict[str, argparse.Action]:
    """The section's keys: the controller's options of the three groups, by `dest`."""
    parser = argparse.ArgumentParser(add_help=False)
    add_measurement_options(parser)
    return {a.dest: a for a in parser._actions if a.option_strings and a.dest not in RUNNER_OWNED}


def keys() -> tuple[str, ...]:
    return tuple(sorted(_options()))


def controller_args(section: Any) -> tuple[str, ...]:
    """The controller's arguments for a `telemetry` section as written; a key that is not
    one of the options, a value of the wrong kind or out of the controller's range fails
    naming the key (mpsched.validation.fail, inside a validator)."""
    if not isinstance(section, dict):
        fail((), "must be a mapping of the controller's telemetry options", section)
    options = _options()
    args: list[str] = []
    for key, value in section.items():
        action = options.get(str(key))
        if action is None:
            fail(str(key), f"unknown key (allowed: {', '.join(keys())})", value)
        flag = action.option_strings[0]
        if isinstance(action, argparse._StoreTrueAction):
            if not isinstance(value, bool):
                fail(str(key), "must be true or false", value)
            args += [flag] if value else []
            continue
        if isinstance(value, bool) or not isinstance(value, int | float) or not finite(value):
            fail(str(key), "must be a number", value)
        if value < 0:
            fail(str(key), f"must be >= 0, got {value}", value)
        if value > MAX_MAGNITUDE:
            fail(str(key), f"must be at most {MAX_MAGNITUDE}, got {shown(value)}", value)
        args += [flag, f"{value:g}"]
    _check(section)
    return tuple(args)


def _check(section: dict) -> None:
    """The controller's own checks of the values together (telemetry_config)."""
    namespace = argparse.Namespace(**{k: a.default for k, a in _options().items()})
    for key, value in section.items():
        setattr(namespace, str(key), value)
    try:
        telemetry_config(namespace)
    except ValueError as error:  # "--probe-interval-ms: must be ...", or the config's own
        text = str(error)
        option, _, message = text.partition(": ")
        key = option.removeprefix("--").replace("-", "_")
        if key in _options():
            fail(key, message, section.get(key))
        fail((), text, section)
