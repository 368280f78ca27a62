"""Bounded parsing of YAML and JSON text into values, the parsers of src/mpsched/safeload.py
(which reads the text of a file within its bounds first). `Limits` are a document's bounds;
every refusal is a `RefusedError` naming the line where known:

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
- **JSON**: NaN and Infinity are refused (they are no JSON), as are
  duplicate keys; the depth and node bounds are checked on the parsed value (the C parser
  stops at the interpreter's recursion limit, reported as too deep).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

import yaml

from mpsched.validation import shown


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


class RefusedError(ValueError):
    """A document refused while read or parsed: `line` and `column` are 1-based (0: not known)."""

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
