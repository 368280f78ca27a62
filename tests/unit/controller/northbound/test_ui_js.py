"""The dashboard's pure JavaScript helpers run in Node (skipped, with the reason, without it):
a decision's reason in words (src/mpsched/controller/northbound/ui/reasons.js) and the charts' time
axis and units (src/mpsched/controller/northbound/ui/charts.js)."""

from __future__ import annotations

import json
import shutil
import subprocess
from importlib import resources
from typing import Any

import pytest

UI = resources.files("mpsched.controller.northbound").joinpath("ui")
# charts.js is a plain script of the page: its helpers are taken from a sandbox it runs in.
HARNESS = """
const vm = require("vm");
const [file, call] = [process.argv[1], process.argv[2]];
const sandbox = { module: { exports: {} } };
vm.createContext(sandbox);
vm.runInContext(require("fs").readFileSync(file, "utf8"), sandbox);
process.stdout.write(JSON.stringify(vm.runInContext(call, sandbox)));
"""


def node(name: str, call: str) -> Any:
    """`call` (a JS expression) evaluated after the ui's file `name` ran, as JSON."""
    exe = shutil.which("node") or shutil.which("nodejs")
    if exe is None:
        pytest.skip("node is not installed (Debian package nodejs)")
    out = subprocess.run([exe, "-e", HARNESS, str(UI.joinpath(name)), call],
                         capture_output=True, text=True, timeout=30, check=True)
    return json.loads(out.stdout)


def words(decision: dict) -> dict:
    return node("reasons.js", f"reasonWords({json.dumps(decision)})")


def two_paths(**overrides: Any) -> dict:
    d = {"policy": "llhd", "mode": "flowlet", "weights": {"1": 0, "2": 255},
         "scores": {"1": 0.2, "2": 1.0}, "reason": "llhd: all weight on the best gamma",
         "inputs": {"1": {"alive": True, "srtt_ms": 60.0, "owd_ms": 30.0, "loss": 0.02},
                    "2": {"alive": True, "srtt_ms": 42.0, "owd_ms": 12.0, "loss": 0.0}}}
    return {**d, **overrides}


def test_the_favoured_path_is_said_to_be_better_by_the_measures_the_policy_weighs():
    got = words(two_paths(policy="qos"))
    assert got["summary"] == "all flowlets on path 2"
    assert got["lines"] == ["path 2: lower queueing delay (12 ms vs 30 ms on path 1), "
                            "lower loss (0.00 % vs 2.0 % on path 1)"]
    # minrtt weighs srtt only
    assert words(two_paths(policy="minrtt"))["lines"] == [
        "path 2: lower srtt (42 ms vs 60 ms on path 1)"]


def test_several_paths_beaten_are_named_once_with_their_range():
    d = two_paths(policy="minrtt", weights={"1": 0, "2": 255, "3": 0},
                  inputs={"1": {"alive": True, "srtt_ms": 60.0},
                          "2": {"alive": True, "srtt_ms": 5.5},
                          "3": {"alive": True, "srtt_ms": 31.0}})
    assert words(d)["lines"] == ["path 2: lower srtt (5.5 ms vs 31\u201360 ms on paths 1, 3)"]


def test_small_differences_are_alike_and_the_scores_decide():
    d = two_paths(weights={"1": 250, "2": 255},
                  inputs={"1": {"alive": True, "srtt_ms": 40.0, "capacity_mbps": 10.0,
                                "goodput_mbps": 5.0},
                          "2": {"alive": True, "srtt_ms": 39.0, "capacity_mbps": 10.0,
                                "goodput_mbps": 4.8}})
    got = words(d)
    assert got["summary"] == "flowlets spread almost evenly over paths 1, 2, most on path 2"
    assert got["lines"] == ["path 2 and path 1 measure alike: the policy's scores decide "
                            "(coefficients)"]


def test_rules_dead_paths_lm3_and_no_path_alive():
    d = {"policy": "ecmp+lm3", "mode": "hash", "weights": {"1": 255, "2": 255, "3": 0},
         "scores": {}, "reason": "ecmp: equal over alive paths [1, 2] | lm3: active [1, 2]",
         "inputs": {"1": {"alive": True}, "2": {"alive": True}, "3": {"alive": False}}}
    got = words(d)
    assert got["summary"] == "flows spread evenly over paths 1, 2"
    assert got["lines"] == [
        "ecmp: equal weights over the alive paths, flows hashed; measurements are not used",
        "path 3 not alive (or admin down): no traffic",
        "LM3 takes a path out while it reorders too much (coefficients)"]
    gone = words({**d, "policy": "llhd", "reason": "no path alive: equal weights over all"})
    assert gone == {"summary": "no path alive: equal weights, the switches' failover decides",
                    "lines": []}


def test_mode_ca_names_the_least_estimated_cost_and_what_makes_it_so():
    d = two_paths(policy="ca", mode="ca", weights={"1": 255, "2": 255},
                  scores={"1": 31000.0, "2": 12500.0})
    got = words(d)
    assert got["summary"] == ("the switch sends each new flowlet on the path of least live cost "
                              "among paths 1, 2 (now path 2)")
    assert got["lines"][0].startswith("path 2: lower queueing delay (12 ms vs 30 ms on path 1)")


def test_an_old_entry_without_inputs_still_gets_its_placement_in_words():
    d = two_paths()
    del d["inputs"]
    assert words(d) == {"summary": "all flowlets on path 2", "lines": []}


@pytest.mark.parametrize(("history", "window", "span"), [
    (0, 300, 10), (3, 300, 10), (45, 300, 45), (46, 300, 60), (50, 60, 60), (200, 300, 240),
    (290, 300, 300), (599, 600, 600), (900, 600, 600)])
def test_the_time_axis_fits_the_history_up_to_the_window(history, window, span):
    got = node("charts.js", f"timeSpan({history}, {window})")
    assert got == span
    # the axis is at most a third empty once there are 10 s of history
    if history >= 10 and history <= window:
        assert history / got >= 2 / 3


def test_tick_texts_and_units():
    assert node("charts.js", "[agoText(45), agoText(22.5), agoText(120), agoText(90 * 60)]") == [
        "-45 s", "-23 s", "-2 min", "-90 min"]
    assert node("charts.js", "[unitFor('%', 0.02), unitFor('bytes', 219970), "
                "unitFor('bytes', 3e6), unitFor('bytes', 12), unitFor('ms', 40)]") == [
        {"unit": "%", "scale": 100}, {"unit": "kB", "scale": 0.001},
        {"unit": "MB", "scale": 1e-6}, {"unit": "B", "scale": 1}, {"unit": "ms", "scale": 1}]
