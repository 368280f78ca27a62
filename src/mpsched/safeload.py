"""Bounded loading of every input file: read, decode and parse before any validation.

A file a user gives (a scenario, a network description, a trace, a classes file) is bounded
at each step, so that no file, however made, costs more than a bounded time and memory or
ends in a traceback:

- **size**: at most `Limits.max_bytes`, known before it is parsed: at most that many bytes
  plus one are read, so ``/dev/zero`` or a 30 MB file is refused after one read. A FIFO is
  opened without waiting for a writer.
- **text**: UTF-8 (a byte order mark is dropped); a bad byte is named with its offset.
- **YAML** (`BoundedLoader`, PyYAML's SafeLoader): nesting at most `max_depth` and at most
  `max_nodes` nodes, both counted while the document is composed, so a list nested 5000
  deep is refused at `max_depth` and the composer's recursion never gets deep; a duplicate
  key is refused naming the key and both lines (YAML says keys are unique; PyYAML would let
  the last win silently). **Anchors and aliases are refused altogether**: an alias is a
  reference, so a 1 KB file of nested aliases stands for a tree of billions of nodes (the
  "billion laughs"); every consumer (the validation, an error message formatting the value)
  walks the tree expanded. Bounding the expanded count would be as safe, but no input of the
  project needs them, and a refusal is simpler to reason about. YAML 1.1 reads ``1e9`` (no
  dot, or an exponent without a sign) as a string; YAML 1.2 and JSON read it as a number, and
  so does this loader.
- **JSON** (by a ``.json`` suffix): NaN and Infinity are refused (they are no JSON), as are
  duplicate keys; the depth and node bounds are checked on the parsed value (the C parser
  stops at the interpreter's recursion limit, reported as too deep).
- **CSV** (`read_csv`): the file's size, its rows (`CsvLimits.max_rows`) and each field's
  length are bounded; csv's own errors are reported with the line.

Every refusal raises the caller's `InputError` class naming the file, and where known the
line; `guard` turns what escapes a loader's validation into the same error, so a command
prints ``file: field: message`` and exits 2 (`mpsched.validation.cli_error`).
"""

from __future__ import annotations

import contextlib
import csv
import errno
import io
import json
import logging
import os
import re
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import yaml

from mpsched.validation import InputError, shown

log = logging.getLogger(__name__)
T = TypeVar("T")


@dataclass(frozen=True)
class Limits:
    """How much of a document is read and parsed: bytes, nesting, values (keys count). The
    bounds hold the project's largest inputs several times over: a scenario is a few kB (the
    largest fabric a build holds as a graph, 2040 links, some 15 000 values), a network
    description of that fabric with 8 hosts of 4 addresses per edge some 1 MB and 50 000
    values; the deepest nest of either is under 10. PyYAML composes some 50 000 values a
    second on the lab's machine, Python's JSON parser millions."""

    max_bytes: int = 1 << 20
    max_depth: int = 32
    max_nodes: int = 50_000


DOCUMENT = Limits()  # a scenario, a fabric, a classes file (YAML or JSON)
# a network description (JSON, written by the lab)
DESCRIPTION = Limits(max_bytes=4 << 20, max_nodes=200_000)


@dataclass(frozen=True)
class CsvLimits:
    """A CSV trace: its size, rows (a trace of one row every 0.36 s over the longest run,
    3600 s, is 10 000) and the characters of one field (a number or a flag)."""

    max_bytes: int = 1 << 20
    max_rows: int = 10_000
    max_field: int = 64


TRACE = CsvLimits()


class RefusedError(ValueError):
    """A document refused while parsing: `line` and `column` are 1-based (0: not known)."""

    def __init__(self, message: str, line: int = 0, column: int = 0) -> None:
        super().__init__(message)
        self.message = message
        self.line = line
        self.column = column

    def text(self) -> str:
        """The message with where: ``not JSON: Expecting value (line 3, column 5)``."""
        where = ", ".join(f"{name} {n}" for name, n in (("line", self.line),
                                                        ("column", self.column)) if n)
        return f"{self.message} ({where})" if where else self.message


# ---- bytes and text ----------------------------------------------------------------------


def read_bytes(path: str | Path, max_bytes: int) -> bytes:
    """At most `max_bytes` of `path`; RefusedError if it has more (at most one byte more is
    read), OSError if it cannot be read."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)  # a FIFO without a writer: no wait
    try:
        if stat.S_ISDIR(os.fstat(fd).st_mode):
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR))
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


# ---- YAML ------------------------------------------------------------------------------------


# YAML 1.2's floats that YAML 1.1 leaves strings: an exponent without a dot or a sign
_EXPONENT_FLOAT = re.compile(r"^[-+]?[0-9][0-9_]*(?:\.[0-9_]*)?[eE][-+]?[0-9]+$")


class BoundedLoader(yaml.SafeLoader):
    """SafeLoader with the bounds of the module's docstring: depth and nodes counted while
    composing, anchors, aliases and duplicate keys refused."""

    limits = DOCUMENT

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._depth = 0
        self._nodes = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        event = self.peek_event()
        line = event.start_mark.line + 1
        if isinstance(event, yaml.AliasEvent):
            raise RefusedError(f"alias *{event.anchor}: anchors and aliases are not accepted "
                               "(write the value out)", line)
        if getattr(event, "anchor", None):
            raise RefusedError(f"anchor &{event.anchor}: anchors and aliases are not accepted "
                               "(write the value out)", line)
        self._nodes += 1
        if self._nodes > self.limits.max_nodes:
            raise RefusedError(f"more than {self.limits.max_nodes} values", line)
        if not isinstance(event, yaml.SequenceStartEvent | yaml.MappingStartEvent):
            return super().compose_node(parent, index)
        self._depth += 1
        if self._depth > self.limits.max_depth:
            raise RefusedError(f"nested deeper than {self.limits.max_depth} levels", line)
        try:
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def construct_mapping(self, node: Any, deep: bool = False) -> Any:
        if isinstance(node, yaml.MappingNode):
            seen: dict[Any, int] = {}
            for key_node, _ in node.value:
                line = key_node.start_mark.line + 1
                if key_node.tag == "tag:yaml.org,2002:merge":
                    raise RefusedError("merge keys (<<) are not accepted (write the keys out)",
                                       line)
                key = self.construct_object(key_node, deep=True)
                try:
                    first = seen.get(key)
                except TypeError:
                    raise RefusedError("a key must be a plain value, not a list or mapping",
                                       line) from None
                if first is not None:
                    raise RefusedError(f"duplicate key {shown(key)}, also on line {first}", line)
                seen[key] = line
        return super().construct_mapping(node, deep)


BoundedLoader.add_implicit_resolver("tag:yaml.org,2002:float", _EXPONENT_FLOAT,
                                    list("-+0123456789"))


def _first_clause(exc: Exception) -> str:
    """The message of `exc` up to a "; " (Python's advice how to raise its int limit is
    no advice to the author of a file)."""
    return str(exc).split("; ")[0]


def _loader(limits: Limits) -> type[BoundedLoader]:
    if limits == DOCUMENT:
        return BoundedLoader
    return type("Loader", (BoundedLoader,), {"limits": limits})


def parse_yaml(text: str, limits: Limits = DOCUMENT) -> Any:
    """One YAML document within `limits`; RefusedError naming the line."""
    try:
        loader = _loader(limits)(text)
    except yaml.reader.ReaderError as exc:
        raise RefusedError(f"not valid YAML: character #x{exc.character:04x} at character offset "
                           f"{exc.position}: {exc.reason}") from None
    try:
        return loader.get_single_data()
    except RefusedError:
        raise
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        what = exc.problem or exc.context or "malformed"
        line, column = (mark.line + 1, mark.column + 1) if mark else (0, 0)
        raise RefusedError(f"not valid YAML: {what}", line, column) from None
    except yaml.YAMLError as exc:
        raise RefusedError(f"not valid YAML: {exc}") from None
    except ValueError as exc:  # a constructor's: an int of 5000 digits, a 13th month
        raise RefusedError(f"not valid YAML: {_first_clause(exc)}") from None
    finally:
        loader.dispose()


# ---- JSON ------------------------------------------------------------------------------------


def _no_constant(name: str) -> Any:
    raise RefusedError(f"{name} is not a JSON value")


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise RefusedError(f"duplicate key {shown(key)}")
        out[key] = value
    return out


def parse_json(text: str, limits: Limits = DESCRIPTION) -> Any:
    """One JSON value within `limits` (no NaN, Infinity or duplicate keys)."""
    try:
        data = json.loads(text, parse_constant=_no_constant, object_pairs_hook=_unique_keys)
    except json.JSONDecodeError as exc:
        raise RefusedError(f"not JSON: {exc.msg}", exc.lineno, exc.colno) from None
    except RecursionError:
        raise RefusedError(f"not JSON: nested deeper than {limits.max_depth} levels") from None
    except RefusedError:
        raise
    except ValueError as exc:  # e.g. an integer of more digits than int() converts
        raise RefusedError(f"not JSON: {_first_clause(exc)}") from None
    check_shape(data, limits)
    return data


def check_shape(data: Any, limits: Limits) -> None:
    """RefusedError if `data` nests deeper than `limits.max_depth` or has more than
    `limits.max_nodes` values (walked without recursion)."""
    nodes = 0
    stack: list[tuple[Any, int]] = [(data, 1)]
    while stack:
        value, depth = stack.pop()
        nodes += 1
        if nodes > limits.max_nodes:
            raise RefusedError(f"more than {limits.max_nodes} values")
        children = (value.values() if isinstance(value, dict)
                    else value if isinstance(value, list) else ())
        if children and depth > limits.max_depth:
            raise RefusedError(f"nested deeper than {limits.max_depth} levels")
        stack.extend((child, depth + 1) for child in children)


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
