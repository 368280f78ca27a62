"""A scenario's fields that reach paths and loops are bounded (src/mpsched/lab/scenario.py,
src/mpsched/lab/scenario_links.py): its name, its workload, its fabric, its schedules' times and
steps, and its file read within src/mpsched/safeload.py's bounds."""

from __future__ import annotations

from pathlib import Path

import pytest

from mpsched.lab.scenario import ScenarioError, load, parse
from mpsched.lab.scenario_links import MAX_SCHEDULE_STEPS

TWO_EDGES = {"name": "t", "duration_s": 10, "paths": [{"rate_mbps": 10}],
             "workload": [{"kind": "bulk"}]}
FABRIC = {"name": "f", "duration_s": 10,
          "fabric": {"leaf_spine": {"leaves": 2, "spines": 1, "link": {"rate_mbps": 10}}},
          "workload": [{"kind": "poisson", "sizes": "websearch", "load_pct": 10}]}


def refusal(doc: dict, **changes: object) -> ScenarioError:
    with pytest.raises(ScenarioError) as err:
        parse({**doc, **changes}, fabric=True)
    return err.value


@pytest.mark.parametrize("name", ["../../../../tmp/x", "/etc/x", "a\nb", "", "..", ".hidden",
                                  "a b", "n" * 65, "a/b", 7, ["a"]])
def test_a_name_is_one_safe_path_component(name):
    error = refusal(TWO_EDGES, name=name)
    assert error.field == "name"
    assert error.message.startswith("must be a letter or digit then up to 63 letters, digits")


@pytest.mark.parametrize("name", ["llhd-1", "a", "fabric.wan_2", "n" * 64, "7"])
def test_names_of_letters_digits_dots_dashes_and_underscores_are_kept(name):
    assert parse({**TWO_EDGES, "name": name}).name == name


@pytest.mark.parametrize("doc", [TWO_EDGES, FABRIC], ids=["two-edges", "fabric"])
def test_an_empty_workload_list_is_refused(doc):
    error = refusal(doc, workload=[])
    assert (error.field, error.message) == ("workload", "at least one workload")


def test_an_empty_fabric_section_says_so():
    error = refusal({"name": "f", "duration_s": 10}, fabric=None)
    assert (error.field, error.message) == (
        "fabric", "empty: give leaf_spine or graph (docs/fabric.md)")


def test_a_description_is_a_string():
    assert refusal(TWO_EDGES, description=[1, 2]).field == "description"
    assert parse({**TWO_EDGES, "description": " x "}).description == "x"


@pytest.mark.parametrize(("event", "field", "message"), [
    ({"at_s": 1e12, "set": {"delay_ms": 1}}, "paths[0].schedule[0].at_s", "must be in 0..3600"),
    ({"down_s": 1, "up_s": 10**400}, "paths[0].schedule[0].up_s", "must be in 0..3600"),
    ({"ramp": "delay_ms", "from_s": 0, "to_s": 3600, "start": 1, "end": 2, "interval_s": 0.01},
     "paths[0].schedule[0]", f"more than {MAX_SCHEDULE_STEPS} schedule steps"),
])
def test_schedule_times_and_steps_are_bounded(event, field, message):
    error = refusal(TWO_EDGES, paths=[{"rate_mbps": 10, "schedule": [event]}])
    assert error.field == field and message in error.message, error


def test_the_steps_of_a_file_are_counted_together(tmp_path):
    """Each trace is within its rows, but the file's events repeat it past the budget."""
    (tmp_path / "t.csv").write_text("time_s,rate_mbps\n" + "".join(
        f"{i},10\n" for i in range(5000)))
    doc = {**TWO_EDGES, "paths": [{"rate_mbps": 10, "schedule": [{"trace": "t.csv"}] * 10}]}
    parse(doc, source=tmp_path / "s.yaml")  # 50 000 steps: the most
    doc["paths"].append({"rate_mbps": 10, "schedule": [{"trace": "t.csv"}]})
    with pytest.raises(ScenarioError) as err:
        parse(doc, source=tmp_path / "s.yaml")
    assert err.value.field == "paths[1].schedule[0]"


def test_a_file_is_read_within_bounds_and_errors_name_it(tmp_path):
    path = tmp_path / "s.yaml"
    path.write_text("name: t\nduration_s: 10\nname: u\n")
    with pytest.raises(ScenarioError) as err:
        load(path)
    assert str(err.value) == f"{path}: duplicate key 'name', also on line 1 (line 3)"
    with pytest.raises(ScenarioError, match="larger than 1048576 bytes"):
        load(Path("/dev/zero"))
    path.write_text("name: t\nduration_s: 10\npaths: [{rate_mbps: 10, delay_ms: 1e2}]\n"
                    "workload: [{kind: bulk}]\n")
    assert load(path).topo.paths[0].forward.delay_ms == 100.0  # 1e2: a number, as in YAML 1.2
