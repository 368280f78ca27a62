"""Bounded loading (src/mpsched/safeload.py): size, text and CSV within bounds, every refusal
naming the file (and the line), and the last net around a loader."""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path

import pytest

from mpsched import safeload
from mpsched.safeload import CsvLimits
from mpsched.safeparse import RefusedError
from mpsched.validation import InputError, check_number


def test_a_file_is_refused_past_its_size_after_one_bounded_read(tmp_path):
    path = tmp_path / "s.yaml"
    path.write_bytes(b"#" * 100)
    assert safeload.read_bytes(path, 100) == b"#" * 100
    with pytest.raises(RefusedError, match="larger than 99 bytes"):
        safeload.read_bytes(path, 99)
    path.write_bytes(b"#" * (2 << 20))
    with pytest.raises(InputError) as err:
        safeload.read_document(path)
    assert str(err.value) == f"{path}: larger than 1048576 bytes (the limit of this kind of file)"


NOT_REGULAR = "not a regular file (only a regular file is read)"


def _special(tmp_path, kind: str):
    """A file of `kind` under `tmp_path` (a device: one of /dev)."""
    path = tmp_path / "x.yaml"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "socket":
        os.mknod(path, stat.S_IFSOCK | 0o600)  # needs no privilege, unlike a device
    elif kind == "directory":
        path.mkdir()
    elif kind == "link to a fifo":
        os.mkfifo(tmp_path / "p")
        path.symlink_to(tmp_path / "p")
    else:
        return Path(kind)
    return path


@pytest.mark.parametrize(("kind", "what"), [
    ("fifo", "a FIFO (named pipe)"), ("socket", "a socket"), ("directory", "a directory"),
    ("link to a fifo", "a FIFO (named pipe)"), ("/dev/zero", "a character device"),
    ("/dev/null", "a character device"),
])
def test_a_file_that_is_not_regular_is_refused_saying_what_it_is(tmp_path, kind, what):
    path = _special(tmp_path, kind)
    fds = len(os.listdir("/proc/self/fd"))
    with pytest.raises(InputError) as err:
        safeload.read_document(path)
    assert str(err.value) == f"{path}: is {what}, {NOT_REGULAR}"
    assert len(os.listdir("/proc/self/fd")) == fds  # nothing left open


def _in_thread(function, timeout_s: float) -> list:
    """[what `function` returned or raised], or [] if it did not end within `timeout_s`."""
    out: list = []

    def call() -> None:
        try:
            out.append(function())
        except Exception as exc:  # handed back to the test
            out.append(exc)

    thread = threading.Thread(target=call, daemon=True)
    thread.start()
    thread.join(timeout_s)
    return out


def test_a_fifo_whose_writer_never_writes_is_refused_without_waiting(tmp_path):
    fifo = tmp_path / "p.yaml"
    os.mkfifo(fifo)
    writer = os.open(fifo, os.O_RDWR)  # a writer holding the FIFO open, writing nothing
    try:
        out = _in_thread(lambda: safeload.read_document(fifo), timeout_s=5)
    finally:
        os.close(writer)  # ends a blocked read, if any
    assert out, "the read waited for the writer"
    assert isinstance(out[0], InputError)
    assert str(out[0]) == f"{fifo}: is a FIFO (named pipe), {NOT_REGULAR}"


def test_a_fifo_swapped_in_between_the_stat_and_the_open_is_refused(tmp_path, monkeypatch):
    """The path is a regular file when checked and a FIFO with a silent writer when opened:
    the opened descriptor's own type is checked before it is read."""
    path, fifo = tmp_path / "s.yaml", tmp_path / "p"
    path.write_text("name: x\n")
    os.mkfifo(fifo)
    writer = os.open(fifo, os.O_RDWR)
    real_stat = os.stat

    def stat_then_swap(name, *args, **kwargs):
        result = real_stat(name, *args, **kwargs)
        if Path(name) == path:
            os.replace(fifo, path)
        return result

    monkeypatch.setattr(safeload.os, "stat", stat_then_swap)
    try:
        out = _in_thread(lambda: safeload.read_bytes(path, 100), timeout_s=5)
    finally:
        os.close(writer)
    assert out and isinstance(out[0], RefusedError), out
    assert out[0].text() == f"is a FIFO (named pipe), {NOT_REGULAR}"


def test_file_type_names_every_kind_of_file():
    assert safeload.file_type(stat.S_IFREG | 0o644) == ""
    assert safeload.file_type(stat.S_IFBLK | 0o660) == "a block device"
    assert safeload.file_type(stat.S_IFLNK) == "a file of type 0o120000"  # never after stat
    with pytest.raises(RefusedError, match="is a socket, not a regular file"):
        safeload.require_regular(stat.S_IFSOCK)


def test_unreadable_files_name_the_file(tmp_path):
    with pytest.raises(InputError, match=r"none\.yaml: cannot read it: No such file"):
        safeload.read_document(tmp_path / "none.yaml")
    path = tmp_path / "s.yaml"
    path.write_text("name: x\n")
    path.chmod(0)
    if os.access(path, os.R_OK):
        pytest.skip("running as root: a file without permissions is still readable")
    with pytest.raises(InputError, match=r"s\.yaml: cannot read it: Permission denied"):
        safeload.read_document(path)


def test_text_must_be_utf8_and_the_bad_byte_is_named(tmp_path):
    path = tmp_path / "s.yaml"
    path.write_bytes(b"name: caf\xe9\n")
    with pytest.raises(InputError) as err:
        safeload.read_document(path)
    assert str(err.value) == f"{path}: not UTF-8 text: byte 0xe9 at byte offset 9"
    path.write_bytes("\ufeffname: x\n".encode())
    assert safeload.read_document(path) == {"name": "x"}  # a byte order mark is dropped


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
