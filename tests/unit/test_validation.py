"""src/mpsched/validation.py: one error shape (source, field, message) for every input."""

from __future__ import annotations

import json
from typing import Annotated, Any

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
    from mpsched.controller.model.errors import FieldError
    from mpsched.emu.params import ParamError
    from mpsched.lab.report import RunResultError
    from mpsched.lab.scenario import ScenarioError
    from mpsched.netcfg import ConfigError

    for kind in (FieldError, ParamError, ScenarioError, ConfigError, RunResultError):
        error = kind("a[1].b", "bad", "f.yaml")
        assert isinstance(error, InputError)
        assert (error.field, error.message, error.source) == ("a[1].b", "bad", "f.yaml")
        assert str(error).endswith("f.yaml: a[1].b: bad")


JUNK: tuple[object, ...] = (None, True, -1, 1.5, "x", "", [], {}, [1], {"a": 1}, float("nan"))


def _leaves(data: object, path: tuple = ()):
    """Every key path of a document, containers included."""
    if isinstance(data, dict):
        for key, value in data.items():
            yield (*path, key)
            yield from _leaves(value, (*path, key))
    elif isinstance(data, list):
        for i, value in enumerate(data):
            yield (*path, i)
            yield from _leaves(value, (*path, i))


def _replaced(data: object, path: tuple, value: object) -> object:
    import copy

    out = copy.deepcopy(data)
    target: Any = out
    for part in path[:-1]:
        target = target[part]
    target[path[-1]] = value
    return out


def _junk_is_refused_by_name(parse, error_type, good: dict) -> int:
    """`parse` of `good` with any one value replaced by junk either loads or raises
    `error_type`; the number of refusals."""
    refused = 0
    for path in _leaves(good):
        for junk in JUNK:
            try:
                parse(_replaced(good, path, junk))
            except error_type as error:
                assert error.field and error.message, (path, junk, error)
                refused += 1
    return refused


def test_junk_in_any_scenario_key_is_an_error_naming_a_field_never_a_crash():
    from mpsched.lab.scenario import ScenarioError, parse

    good = {
        "name": "t", "duration_s": 10, "cpu_bound": {"idle_below_pct": 5},
        "paths": [{"rate_mbps": 10, "delay_ms": 5, "gilbert": {"p_pct": 1, "r_pct": 20},
                   "reverse": {"delay_ms": 2}, "core": {"rate_mbps": 4},
                   "schedule": [{"at_s": 1, "set": {"delay_ms": 9}},
                                {"ramp": "delay_ms", "from_s": 0, "to_s": 4, "start": 1,
                                 "end": 3},
                                {"down_s": 2, "up_s": 3, "direction": "forward"}]},
                  {"rate_mbps": 5, "cross_traffic": True}],
        "workload": [{"kind": "poisson", "sizes": "websearch", "load_pct": 50},
                     {"kind": "vbr", "path": 2, "load_pct": 5},
                     {"kind": "files", "sizes_kb": [10, 20], "count": 3, "stop_s": 8}],
        "policy": {"name": "static", "weights": [1, 2]}, "compare": ["ecmp", "llhd"],
    }  # fmt: skip
    parse(good)
    assert _junk_is_refused_by_name(parse, ScenarioError, good) > 300


def test_junk_in_any_network_description_key_is_an_error_naming_a_field():
    from mpsched.netcfg import ConfigError, NetCfg

    good = {"switches": [{
        "name": "s1", "device_id": 1, "grpc_address": "127.0.0.1:50001",
        "mac": "00:00:0a:00:01:fe", "subnets": ["10.0.1.0/24"], "probe_iface": "s1-prb",
        "hosts": [{"name": "h1", "ip": "10.0.1.1", "mac": "00:00:0a:00:01:01", "port": 1}],
        "paths": [{"id": 1, "port": 2, "rate_mbps": 10}, {"id": 2, "port": 3}],
        "pins": [{"prefix": "10.0.2.3/32", "path_id": 2}],
    }]}  # fmt: skip
    NetCfg.from_dict(good)
    assert _junk_is_refused_by_name(NetCfg.from_dict, ConfigError, good) > 150
