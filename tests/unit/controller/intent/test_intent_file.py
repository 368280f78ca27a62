"""src/mpsched/controller/intent/intent_file.py: the state file's model checks every field and names
it (through
`Intent.from_json`, which reads the file with it), and refuses what is not an object."""

from __future__ import annotations

import pytest

from mpsched import addressing as ap
from mpsched.controller.intent.intent_file import VERSION, IntentFile, PathEntry, loc
from mpsched.controller.intent.state import (
    Intent,
    StateError,
)
from tests.unit.controller.intent_doc import set_at, valid_doc

BAD = [
    # (where, value, the field the error names, a piece of its message)
    ("extra", 1, "extra", "unknown field"),
    ("version", ..., "version", "missing"),
    ("classes", ..., "classes", "missing"),
    ("params", ..., "params", "missing"),
    ("paths", ..., "paths", "missing"),
    ("version", "1", "version", "must be the integer 2"),
    ("version", True, "version", "must be the integer 2"),
    ("version", 3, "version", "unsupported version 3"),
    ("learned", [], "learned", "must be a JSON object"),
    ("classes", {}, "classes", "JSON array"),
    ("classes.0", ..., "classes", "default class 0 is missing"),
    ("classes.1.id", 7, "classes[2].id", "duplicate class id"),
    ("classes.1.name", "bad name!", "classes[1].name", "1..32 characters"),
    ("classes.1.priority", 0, "classes[1].priority", "1..1000"),
    ("classes.1.match.dst", f"{ap.H2_IP}/24", "classes[1].match.dst", "host bits"),
    ("classes.1.match.dst_port", [9, 1], "classes[1].match.dst_port", "empty"),
    ("classes.1.match.proto", "sctp", "classes[1].match.proto", "0..255"),
    ("classes.1.policy.name", "nope", "classes[1].policy.name", "no policy 'nope'"),
    ("classes.1.policy.params", {"bogus": 1}, "classes[1].policy.params.bogus", "unknown"),
    ("classes.1.policy.params", {"beta": -1}, "classes[1].policy.params.beta", ">="),
    ("classes.1.policy.lm3", "yes", "classes[1].policy.lm3", "true or false"),
    ("classes.1.policy.flowlet_gap_us", -1, "classes[1].policy.flowlet_gap_us", "0..10000000"),
    ("classes.2.policy", {"name": "wcmp", "params": {"weights": "x"}},
     "classes[2].policy.params.weights", ""),
    ("params", [], "params", "JSON object"),
    ("params.bogus", 1, "params.bogus", "unknown parameter"),
    ("params.control_period_ms", 5, "params.control_period_ms", "10..10000"),
    ("params.step_budget_pct", 0, "params.step_budget_pct", "> 0 and <= 100"),
    ("params.step_budget_pct", "10", "params.step_budget_pct", "> 0 and <= 100"),
    ("params.lm3.sigma", "x", "params.lm3.sigma", "number"),
    ("params.lm3.sigma", 0.9, "params.lm3.sigma", "sigma + epsilon must be 1"),
    ("params.policies.nope", {}, "params.policies.nope", "no such policy"),
    ("params.policies.llhd.beta", None, "params.policies.llhd.beta", "null"),
    ("params.mptcp.steering", "yes", "params.mptcp.steering", "boolean"),
    ("params.mptcp.idle_timeout_s", 0, "params.mptcp.idle_timeout_s", ">="),
    ("paths", [], "paths", "JSON object"),
    ("paths.x", {"weight": 1, "admin": "up"}, "paths.x", "1..255"),
    ("paths.0", {"weight": 1, "admin": "up"}, "paths.0", "1..255"),
    ("paths.256", {"weight": 1, "admin": "up"}, "paths.256", "1..255"),
    ("paths.1", 3, "paths.1", "JSON object"),
    ("paths.1.weight", 256, "paths.1.weight", "0..255"),
    ("paths.1.weight", True, "paths.1.weight", "0..255"),
    ("paths.1.weight", 1.0, "paths.1.weight", "0..255"),
    ("paths.1.weight", ..., "paths.1.weight", "missing"),
    ("paths.1.admin", "sideways", "paths.1.admin", '"up" or "down"'),
    ("paths.1.admin", ..., "paths.1.admin", "missing"),
    ("paths.1.color", "red", "paths.1.color", "unknown field"),
]


@pytest.mark.parametrize(("where", "value", "field", "message"), BAD,
                         ids=[f"{w}={v!r}" for w, v, _, _ in BAD])
def test_every_field_is_checked_and_named(where, value, field, message):
    with pytest.raises(StateError) as caught:
        Intent.from_json(set_at(valid_doc(), where, value))
    assert caught.value.field == field, str(caught.value)
    assert message in caught.value.message
    assert str(caught.value).startswith(f"{field}: ")


def test_not_an_object_is_refused():
    with pytest.raises(StateError, match="must be a JSON object, got list") as caught:
        Intent.from_json([])
    assert caught.value.field is None


@pytest.mark.parametrize(
    ("field", "location"),
    [
        ("classes[2].match.dscp", ("classes", 2, "match", "dscp")),
        ("classes[0]", ("classes", 0)),
        ("paths", ("paths",)),
    ],
)
def test_loc_splits_a_field_name_into_its_location(field, location):
    assert loc(field) == location


def test_the_model_reads_a_document_directly():
    doc = valid_doc()
    model = IntentFile.model_validate(doc)
    assert model.version == VERSION
    assert model.paths["2"] == PathEntry(weight=0, admin="down")
    assert [c.id for c in model.classes] == [0, 1, 7]
    assert model.params.control_period_ms == 50.0
    assert model.params.step_budget_pct == 10.0


def test_a_file_saved_before_the_step_budget_was_a_parameter_loads_with_its_default():
    """Params left out of a file take their defaults, as in `PUT /params`: a file without
    `step_budget_pct` restores 25 %, whatever the command line says (logged at start)."""
    intent = Intent.from_json(set_at(valid_doc(), "params.step_budget_pct", ...))
    assert intent.params.step_budget_pct == 25.0 and intent.params.control_period_ms == 50.0
