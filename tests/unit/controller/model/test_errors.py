"""src/mpsched/controller/model/errors.py: field names joined below a prefix, and `checked`
validating a model
with the first error as a FieldError naming the (nested) field."""

from __future__ import annotations

import pytest
from pydantic import BaseModel, ConfigDict

from mpsched.controller.model.errors import FieldError, adapter, checked, join_field
from mpsched.validation import InputError


class Inner(BaseModel):
    model_config = ConfigDict(extra="forbid")
    dscp: int


class Outer(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str
    match: list[Inner]


@pytest.mark.parametrize(
    ("where", "field", "joined"),
    [
        ("classes[2]", "match.dscp", "classes[2].match.dscp"),
        ("classes", "[0]", "classes[0]"),
        ("", "beta", "beta"),
        ("policy", "", "policy"),
        ("", "", ""),
    ],
)
def test_join_field(where, field, joined):
    assert join_field(where, field) == joined


def test_checked_returns_the_model():
    out = checked(Outer, {"name": "a", "match": [{"dscp": 46}]})
    assert out == Outer(name="a", match=[Inner(dscp=46)])


def test_checked_names_the_nested_field_below_where():
    with pytest.raises(FieldError) as err:
        checked(Outer, {"name": "a", "match": [{"dscp": 1}, {"dscp": "x"}]}, "classes[2]")
    assert err.value.field == "classes[2].match[1].dscp"
    assert isinstance(err.value, InputError)


def test_a_missing_key_is_named_in_the_message():
    with pytest.raises(FieldError) as err:
        checked(Outer, {"match": []}, "classes[0]")
    assert (err.value.field, err.value.message) == ("classes[0].name", "missing field 'name'")


def test_an_error_of_the_whole_document_is_the_body():
    with pytest.raises(FieldError) as err:
        checked(Outer, [1])
    assert err.value.field == "body"


def test_one_adapter_per_kind():
    assert adapter(Outer) is adapter(Outer)
    assert adapter(Outer) is not adapter(Inner)
