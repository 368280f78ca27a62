"""Bounded loading (src/mpsched/safeload.py): size, text, YAML, JSON and CSV within bounds, every
refusal naming the file (and the line), and the last net around a loader."""

from __future__ import annotations

import os
import time

import pytest

from mpsched import safeload
from mpsched.safeload import DOCUMENT, CsvLimits, Limits, RefusedError, parse_json, parse_yaml
from mpsched.validation import InputError, check_number


def refused(parse, text: str) -> str:
    with pytest.raises(RefusedError) as err:
        parse(text)
    return err.value.text()


def test_a_file_is_refused_past_its_size_after_one_bounded_read(tmp_path):
    path = tmp_path / "s.yaml"
    path.write_bytes(b"#" * 100)
    assert safeload.read_bytes(path, 100) == b"#" * 100
    with pytest.raises(RefusedError, match="larger than 99 bytes"):
        safeload.read_bytes(path, 99)
    start = time.monotonic()
    with pytest.raises(InputError) as err:
        safeload.read_document("/dev/zero")
    assert time.monotonic() - start < 2
    assert str(err.value) == ("/dev/zero: larger than 1048576 bytes (the limit of this kind "
                              "of file)")


def test_a_fifo_without_a_writer_is_not_waited_for(tmp_path):
    fifo = tmp_path / "p.yaml"
    os.mkfifo(fifo)
    assert safeload.read_document(fifo) is None  # read as empty, at once


def test_unreadable_files_name_the_file(tmp_path):
    (tmp_path / "d").mkdir()
    fds = len(os.listdir("/proc/self/fd"))
    with pytest.raises(InputError, match=r"d: cannot read it: Is a directory"):
        safeload.read_document(tmp_path / "d")
    assert len(os.listdir("/proc/self/fd")) == fds  # the directory's descriptor closed
    with pytest.raises(InputError, match=r"none\.yaml: cannot read it: No such file"):
        safeload.read_document(tmp_path / "none.yaml")


def test_text_must_be_utf8_and_the_bad_byte_is_named(tmp_path):
    path = tmp_path / "s.yaml"
    path.write_bytes(b"name: caf\xe9\n")
    with pytest.raises(InputError) as err:
        safeload.read_document(path)
    assert str(err.value) == f"{path}: not UTF-8 text: byte 0xe9 at byte offset 9"
    path.write_bytes("\ufeffname: x\n".encode())
    assert safeload.read_document(path) == {"name": "x"}  # a byte order mark is dropped


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


def test_csv_rows_and_fields_are_bounded(tmp_path):
    path = tmp_path / "t.csv"
    limits = CsvLimits(max_bytes=1000, max_rows=3, max_field=4)
    path.write_text("a,b\n1,2\n3,4\n")
    assert list(safeload.read_csv(path, limits)) == [(1, ["a", "b"]), (2, ["1", "2"]),
                                                     (3, ["3", "4"])]
    path.write_text("a,b\n1,2\n3,4\n5,6\n")
    with pytest.raises(RefusedError) as err:
        list(safeload.read_csv(path, limits))
    assert err.value.text() == "more than 3 rows (line 4)"
    path.write_text("a,b\n12345,2\n")
    with pytest.raises(RefusedError) as err:
        list(safeload.read_csv(path, limits))
    assert err.value.text() == "a field of 5 characters (at most 4) (line 2)"
    path.write_text("a\n" + "9" * 200_000 + "\n")
    with pytest.raises(RefusedError, match="not CSV: field larger than field limit"):
        list(safeload.read_csv(path))


def test_the_guard_names_the_file_and_lets_no_exception_through():
    with pytest.raises(InputError) as err, safeload.guard("f.yaml"):
        raise TypeError("boom")
    assert str(err.value) == "f.yaml: internal error while validating (TypeError: 'boom')"
    with pytest.raises(InputError) as err, safeload.guard("f.yaml"):
        raise InputError("a.b", "bad")
    assert str(err.value) == "f.yaml: a.b: bad"
    with pytest.raises(MemoryError), safeload.guard("f.yaml"):
        raise MemoryError  # a missing bound: not hidden


def test_errors_stay_one_line_long():
    error = InputError("k" * 1000, "got " + "x" * 10_000, "f.yaml")
    assert len(str(error)) < 1000 and "(10004 characters)" in error.message


@pytest.mark.parametrize(("value", "message"), [
    (10**400, "must be in 0..100, got an integer of 401 digits"),
    (float("inf"), "must be a finite number, got inf"),
    (float("nan"), "must be a finite number, got nan"),
    ("1e9", "must be a number, got '1e9'"),
    (True, "must be a number, got True"),
])
def test_numbers_are_range_checked_before_arithmetic(value, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        check_number(value, 0, 100)
    with pytest.raises(ValueError, match="must be within"):
        check_number(2**53 + 1)
    assert check_number(2**53) == float(2**53)
