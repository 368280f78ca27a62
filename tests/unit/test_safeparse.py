"""Bounded parsing (src/mpsched/safeparse.py): YAML and JSON within bounds, every refusal
saying what and where."""

from __future__ import annotations

import pytest

from mpsched.safeparse import DOCUMENT, Limits, RefusedError, parse_json, parse_yaml


def refused(parse, text: str) -> str:
    with pytest.raises(RefusedError) as err:
        parse(text)
    return err.value.text()


@pytest.mark.parametrize(("text", "message"), [
    ("a: &x 1\nb: *x\n", "anchor &x: anchors and aliases are not accepted (write the value "
                         "out) (line 1)"),
    ("a: [1]\nb: *x\n", "alias *x: anchors and aliases are not accepted"),
    ("a: {<<: {b: 1}}\n", "merge keys (<<) are not accepted"),
    ("a: 1\nb:\n  c: 2\n  c: 3\n", "duplicate key 'c', also on line 3 (line 4)"),
    ("? [a]\n: 1\n", "a key must be a plain value, not a list or mapping (line 1)"),
    ("a: !!python/object:os.system x\n", "not valid YAML: could not determine a constructor"),
    ("a: " + "1" * 5000 + "\n", "not valid YAML: Exceeds the limit (4300 digits) for integer "
                               "string conversion: value has 5000 digits"),
    ("a: b: c\n", "not valid YAML: mapping values are not allowed here (line 1, column 5)"),
    ("a: 1\n---\nb: 2\n", "not valid YAML: but found another document"),
    ("a: \x07\n", "not valid YAML: character #x0007 at character offset 3"),
])
def test_yaml_refusals_say_what_and_where(text, message):
    assert message in refused(parse_yaml, text)


def test_yaml_nesting_and_values_are_bounded_while_composing():
    deep = DOCUMENT.max_depth
    assert parse_yaml("[" * deep + "]" * deep) is not None
    too_deep = "[" * (deep + 1) + "]" * (deep + 1)
    assert "nested deeper than 32 levels" in refused(parse_yaml, too_deep)
    # far past the interpreter's recursion limit: refused at the bound, no RecursionError
    assert "nested deeper" in refused(parse_yaml, "a:\n" + "".join(
        " " * i + "k:\n" for i in range(1, 2000)))
    assert "nested deeper" in refused(parse_yaml, "[" * 100_000)
    small = Limits(max_nodes=10)
    assert parse_yaml("[1, 2, 3, 4, 5, 6, 7, 8, 9]", small) == list(range(1, 10))
    with pytest.raises(RefusedError, match="more than 10 values"):
        parse_yaml("[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]", small)


def test_exponent_floats_are_numbers_as_in_yaml_12():
    doc = parse_yaml("a: 1e9\nb: 1.5e-3\nc: 1.0e9\nd: -2E+2\ne: 10\nf: '1e9'\ng: 1e400\n")
    assert doc == {"a": 1e9, "b": 1.5e-3, "c": 1e9, "d": -200.0, "e": 10, "f": "1e9",
                   "g": float("inf")}
    assert isinstance(doc["e"], int)


@pytest.mark.parametrize(("text", "message"), [
    ('{"a": NaN}', "NaN is not a JSON value"),
    ('{"a": -Infinity}', "-Infinity is not a JSON value"),
    ('{"a": 1, "a": 2}', "duplicate key 'a'"),
    ("[" * 100_000, "not JSON: nested deeper than 32 levels"),
    ("[" * 40 + "]" * 40, "nested deeper than 32 levels"),
    ("1" * 5000, "not JSON: Exceeds the limit (4300 digits)"),
    ('{"a": 1} x', "not JSON: Extra data (line 1, column 10)"),
])
def test_json_refusals(text, message):
    text_ = refused(parse_json, text)
    assert message in text_ and "set_int_max_str_digits" not in text_


def test_json_values_are_bounded():
    with pytest.raises(RefusedError, match="more than 5 values"):
        parse_json("[1, 2, 3, 4, 5]", Limits(max_nodes=5))
