"""mpsched/validation.py: one error shape (source, field, message) for every input."""

from __future__ import annotations

import json
from typing import Annotated

import pytest
from pydantic import BaseModel, ConfigDict, ValidationError, model_validator

from mpsched.validation import (
    EXIT_INVALID,
    BoolValue,
    InputError,
    KeyCheck,
    Text,
    cli_error,
    fail,
    field_path,
    input_errors,
    int_in,
    load_file,
    number,
    one_of,
    validate,
)


class Hop(KeyCheck, BaseModel):
    model_config = ConfigDict(extra="forbid")

    port: Annotated[int, int_in(0, 510)]
    delay_ms: Annotated[float, number(0, 1000)] = 0.0


class Route(KeyCheck, BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: Text
    kind: Annotated[str, one_of(("fast", "slow"))] = "fast"
    up: BoolValue = True
    hops: list[Hop] = []
    tags: dict[str, list[Hop]] = {}

    @model_validator(mode="after")
    def _distinct_ports(self) -> Route:
        ports = [h.port for h in self.hops]
        for i, port in enumerate(ports):
            if port in ports[:i]:
                fail(("hops", i, "port"), f"{port} appears twice", port)
        return self


def _error(data: object) -> InputError:
    with pytest.raises(InputError) as info:
        validate(Route, data)
    return info.value


@pytest.mark.parametrize(
    ("data", "field", "message"),
    [
        ({}, "name", "missing"),
        ({"name": ""}, "name", "must be a non-empty string, got ''"),
        ({"name": "r", "hops": [{"port": 1}, {"port": 600}]}, "hops[1].port",
         "must be an integer 0..510, got 600"),
        ({"name": "r", "hops": [{"port": True}]}, "hops[0].port",
         "must be an integer 0..510, got True"),
        ({"name": "r", "hops": [{"port": 1, "delay_ms": "5"}]}, "hops[0].delay_ms",
         "must be a number, got '5'"),
        ({"name": "r", "hops": [{"port": 1, "delay_ms": 2000}]}, "hops[0].delay_ms",
         "must be in 0..1000, got 2000"),
        ({"name": "r", "tags": {"a": [{"port": 1}, {"prot": 2}]}}, "tags.a[1].prot",
         "unknown key (allowed: delay_ms, port)"),
        ({"name": "r", "hops": {"port": 1}}, "hops", "must be a list"),
        ({"name": "r", "hops": [3]}, "hops[0]", "must be an object"),
        ({"name": "r", "kind": "medium"}, "kind", "must be one of fast, slow, got 'medium'"),
        ({"name": "r", "up": 1}, "up", "must be true or false, got 1"),
        ({"name": "r", "hops": [{"port": 1}, {"port": 2}, {"port": 1}]}, "hops[2].port",
         "1 appears twice"),
        ([1], "", "must be an object"),
    ],
)
def test_errors_name_the_field_as_a_dotted_path_with_list_indices(data, field, message):
    error = _error(data)
    assert (error.field, error.message, error.source) == (field, message, None)
    assert str(error) == (f"{field}: {message}" if field else message)


def test_field_path_joins_keys_with_dots_and_indexes_lists_in_brackets():
    assert field_path(("paths", 1, "schedule", 0, "at_s")) == "paths[1].schedule[0].at_s"
    assert field_path((2, "x")) == "[2].x"
    assert field_path(()) == ""


def test_every_error_can_be_had_not_only_the_first():
    with pytest.raises(ValidationError) as info:
        Route.model_validate({"name": "", "hops": [{"port": -1}]})
    errors = input_errors(info.value, source="r.yaml")
    assert [(e.source, e.field) for e in errors] == [("r.yaml", "name"), ("r.yaml", "hops[0].port")]


def test_a_subclass_keeps_its_class_and_gains_the_source():
    class ThingError(InputError):
        pass

    with pytest.raises(ThingError) as info:
        validate(Route, {"name": "r", "hops": [{}]}, error=ThingError, source="t.json")
    error = info.value
    assert str(error) == "t.json: hops[0].port: missing"
    moved = ThingError("a.b", "bad").in_source("x.yaml")
    assert type(moved) is ThingError and str(moved) == "x.yaml: a.b: bad"
    assert isinstance(error, ValueError)  # callers catching ValueError keep working


@pytest.mark.parametrize("suffix", [".json", ".yaml"])
def test_load_file_names_the_file(tmp_path, suffix):
    path = tmp_path / f"route{suffix}"
    path.write_text(json.dumps({"name": "r", "hops": [{"port": 700}]}))
    with pytest.raises(InputError) as info:
        load_file(Route, path)
    assert info.value.source == str(path)
    assert str(info.value) == f"{path}: hops[0].port: must be an integer 0..510, got 700"
    path.write_text(json.dumps({"name": "r"}))
    assert load_file(Route, path).name == "r"


def test_unreadable_and_malformed_files_name_the_file(tmp_path):
    with pytest.raises(InputError) as info:
        load_file(Route, tmp_path / "none.yaml")
    assert str(info.value).startswith(f"{tmp_path / 'none.yaml'}: ")
    bad = tmp_path / "bad.json"
    bad.write_text("{nope")
    with pytest.raises(InputError, match=r"bad\.json: not JSON"):
        load_file(Route, bad)
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: [unclosed\n")
    with pytest.raises(InputError, match=r"bad\.yaml: not valid YAML"):
        load_file(Route, bad)


def test_cli_error_prints_file_field_message_and_returns_2(capsys):
    error = InputError("paths[0].rate_mbps", "must be a number, got 'fast'", "s.yaml")
    assert cli_error(error, "mpsched run") == EXIT_INVALID == 2
    assert capsys.readouterr().err == (
        "mpsched run: s.yaml: paths[0].rate_mbps: must be a number, got 'fast'\n"
    )
    assert cli_error(error) == 2
    assert capsys.readouterr().err.startswith("s.yaml: paths[0].rate_mbps: ")


def test_a_command_exits_2_naming_the_file_and_the_field(tmp_path, capsys):
    from mpsched.lab.experiment import main

    bad = tmp_path / "bad.yaml"
    bad.write_text("name: t\nduration_s: 10\npaths: [{rate_mbps: fast}]\n"
                   "workload: [{kind: bulk}]\n")
    assert main([str(bad)]) == 2
    assert f"{bad}: paths[0].rate_mbps: must be a number, got 'fast'" in capsys.readouterr().err


def test_the_projects_input_errors_share_the_shape():
    from mpsched.controller.errors import FieldError
    from mpsched.emu.params import ParamError
    from mpsched.lab.report import RunResultError
    from mpsched.lab.scenario import ScenarioError
    from mpsched.netcfg import ConfigError

    for kind in (FieldError, ParamError, ScenarioError, ConfigError, RunResultError):
        error = kind("a[1].b", "bad", "f.yaml")
        assert isinstance(error, InputError)
        assert (error.field, error.message, error.source) == ("a[1].b", "bad", "f.yaml")
        assert str(error).endswith("f.yaml: a[1].b: bad")
