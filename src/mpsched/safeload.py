"""Bounded loading of every input file: read, decode and parse before any validation.

A file a user gives (a scenario, a network description, a trace, a classes file) is bounded
at each step, so that no file, however made, costs more than a bounded time and memory or
ends in a traceback:

- **kind**: a regular file only (a symbolic link is followed). A FIFO (its writer may never
  write), a socket, a device or a directory is refused, naming what it is, before a byte is
  read: stat(2) before the open, so no device is opened; the open does not wait (O_NONBLOCK)
  and fstat(2) of the opened descriptor catches a file swapped in between.
- **size**: at most `Limits.max_bytes`, known before it is parsed: at most that many bytes
  plus one are read, so a 30 MB file is refused after one read.
- **text**: UTF-8 (a byte order mark is dropped); a bad byte is named with its offset.
- **YAML and JSON** (by a ``.json`` suffix): parsed within `Limits` (nesting, values; no YAML
  anchors, aliases or duplicate keys, no JSON NaN): src/mpsched/safeparse.py, whose
  `RefusedError` this module's readers raise too.
- **CSV** (`read_csv`): the file's size, its rows (`CsvLimits.max_rows`) and each field's
  length are bounded; csv's own errors are reported with the line.

Every refusal raises the caller's `InputError` class naming the file, and where known the
line; `guard` turns what escapes a loader's validation into the same error, so a command
prints ``file: field: message`` and exits 2 (`mpsched.validation.cli_error`).
"""

from __future__ import annotations

import contextlib
import csv
import io
import logging
import os
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import yaml

from mpsched.safeparse import (
    DESCRIPTION,
    DOCUMENT,
    Limits,
    RefusedError,
    parse_json,
    parse_yaml,
)
from mpsched.validation import InputError, shown

log = logging.getLogger(__name__)
T = TypeVar("T")


@dataclass(frozen=True)
class CsvLimits:
    """A CSV trace: its size, rows (a trace of one row every 0.36 s over the longest run,
    3600 s, is 10 000) and the characters of one field (a number or a flag)."""

    max_bytes: int = 1 << 20
    max_rows: int = 10_000
    max_field: int = 64


TRACE = CsvLimits()


# ---- bytes and text ----------------------------------------------------------------------


# what a file that is not a regular one is, by the type bits of its st_mode (inode(7))
_FILE_TYPES = {stat.S_IFDIR: "a directory", stat.S_IFIFO: "a FIFO (named pipe)",
               stat.S_IFSOCK: "a socket", stat.S_IFCHR: "a character device",
               stat.S_IFBLK: "a block device"}


def file_type(mode: int) -> str:
    """What a file of st_mode `mode` is: "" for a regular file, else e.g. "a socket"."""
    if stat.S_ISREG(mode):
        return ""
    return _FILE_TYPES.get(stat.S_IFMT(mode), f"a file of type 0o{stat.S_IFMT(mode):o}")


def require_regular(mode: int) -> None:
    """RefusedError saying what the file of st_mode `mode` is unless it is a regular file."""
    kind = file_type(mode)
    if kind:
        raise RefusedError(f"is {kind}, not a regular file (only a regular file is read)")


def read_bytes(path: str | Path, max_bytes: int) -> bytes:
    """At most `max_bytes` of the regular file `path`; RefusedError if it is no regular file
    (module docstring: stat, open without waiting, fstat) or has more (at most one byte more
    is read), OSError if it cannot be read."""
    require_regular(os.stat(path).st_mode)
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY)
    try:
        require_regular(os.fstat(fd).st_mode)  # what was opened, if swapped since the stat
        os.set_blocking(fd, True)
        handle = os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise
    with handle:
        data = handle.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise RefusedError(f"larger than {max_bytes} bytes (the limit of this kind of file)")
    return bytes(data)


def read_small_text(path: str | Path, max_bytes: int = 4096) -> str:
    """A short text file (a token file: one token of some 32 characters), within
    `max_bytes`: RefusedError if larger or not UTF-8, OSError if it cannot be read."""
    return decode(read_bytes(path, max_bytes))


def decode(data: bytes) -> str:
    """`data` as UTF-8 text (a leading byte order mark dropped); RefusedError naming the offset
    of the first byte that is not UTF-8."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise RefusedError(f"not UTF-8 text: byte 0x{data[exc.start]:02x} at byte offset "
                           f"{exc.start}") from None
    return text.removeprefix("\ufeff")


# ---- documents -------------------------------------------------------------------------------


def is_json(path: str | Path) -> bool:
    return Path(path).suffix == ".json"


def read_document(path: str | Path, error: type[InputError] = InputError,
                  limits: Limits | None = None) -> Any:
    """The parsed content of a JSON (``*.json``) or YAML (anything else) file within
    `limits` (default: `DESCRIPTION` for JSON, `DOCUMENT` for YAML); every refusal raises
    `error` naming the file (and the line where known)."""
    limits = limits or (DESCRIPTION if is_json(path) else DOCUMENT)
    try:
        data = read_bytes(path, limits.max_bytes)
    except OSError as exc:
        raise error("", f"cannot read it: {exc.strerror or exc}", str(path)) from None
    except RefusedError as exc:
        raise error("", exc.text(), str(path)) from None
    return parse_bytes(data, str(path), error, limits)


def parse_bytes(data: bytes, name: str, error: type[InputError] = InputError,
                limits: Limits | None = None) -> Any:
    """`data` (e.g. at most max_bytes + 1 read from stdin) decoded and parsed as JSON if
    `name` ends in .json, else YAML, within `limits`; `error` names `name`."""
    limits = limits or (DESCRIPTION if is_json(name) else DOCUMENT)
    try:
        if len(data) > limits.max_bytes:
            raise RefusedError(f"larger than {limits.max_bytes} bytes (the limit of this "
                               "kind of file)")
        text = decode(data)
        return parse_json(text, limits) if is_json(name) else parse_yaml(text, limits)
    except RefusedError as exc:
        raise error("", exc.text(), name) from None


# ---- CSV -------------------------------------------------------------------------------------


def csv_rows(reader: Any) -> Iterator[tuple[int, Any]]:
    """(line number, row) of a csv reader (or DictReader); csv's own error (a field over its
    128 KiB, a NUL) as RefusedError naming the line."""
    while True:
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            raise RefusedError(f"not CSV: {exc}", reader.line_num) from None
        yield reader.line_num, row


def read_csv(path: str | Path, limits: CsvLimits = TRACE) -> Iterator[tuple[int, list[str]]]:
    """(line number, fields) of every row of a CSV file within `limits`; RefusedError naming the
    line, OSError if it cannot be read."""
    text = decode(read_bytes(path, limits.max_bytes))
    reader = csv.reader(io.StringIO(text, newline=""))
    for rows, (_line, row) in enumerate(csv_rows(reader), start=1):
        if rows > limits.max_rows:
            raise RefusedError(f"more than {limits.max_rows} rows", reader.line_num)
        for cell in row:
            if len(cell) > limits.max_field:
                raise RefusedError(f"a field of {len(cell)} characters (at most "
                                   f"{limits.max_field})", reader.line_num)
        yield reader.line_num, row


# ---- the last net ------------------------------------------------------------------------


INTERNAL = "internal error while validating"


@contextlib.contextmanager
def guard(source: str | Path | None, error: type[InputError] = InputError) -> Iterator[None]:
    """Around a loader: an `InputError` gains `source` if it names none; any other
    exception a validator let through (a bug: every bound above should have refused the
    input first) becomes `error` naming the file, logged with its traceback, so a command
    still exits 2 without one. MemoryError is left alone: it says a bound is missing."""
    where = None if source is None else str(source)
    try:
        yield
    except InputError as exc:
        if exc.source is None and where is not None:
            raise exc.in_source(where) from None
        raise
    except (ArithmeticError, AttributeError, IndexError, KeyError, LookupError,
            RecursionError, TypeError, ValueError, csv.Error, yaml.YAMLError) as exc:
        log.debug("validating %s", where, exc_info=True)
        raise error("", f"{INTERNAL} ({type(exc).__name__}: {shown(str(exc), 200)})",
                    where) from None


def load(path: str | Path, parse: Callable[[Any], T], error: type[InputError] = InputError,
         limits: Limits | None = None) -> T:
    """`parse` of the document in `path` (`read_document`), inside `guard`."""
    with guard(path, error):
        result = parse(read_document(path, error, limits))
    return result
