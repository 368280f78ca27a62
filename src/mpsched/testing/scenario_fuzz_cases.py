"""The corpus of malformed input files for `mpsched check` (src/mpsched/bench/scenario_fuzz.py);
the groups fabric, trace, description and section are in scenario_fuzz_topology.py.

Every case is a file that must be refused with exit status 2 and a message that names the
file and, where the fault is in a field, the field (`Case.expect`, a part of the message);
none may crash, hang or use unbounded memory. The groups (`Case.group`):

- **read**: what is refused before parsing: too large (a file of comments), not UTF-8, not a
  regular file (a directory, a FIFO with and without a silent writer, a symbolic link to one,
  a socket, ``/dev/zero`` and ``/dev/null``), a missing file, an empty document, not a mapping.
- **yaml**: anchors and aliases (the "billion laughs" under `params`, `name`, `description`),
  merge keys, nesting 5000 deep, too many values, duplicate keys, unknown tags,
  unhashable keys, integers of 5000 digits.
- **numbers**: numbers out of range or not finite (400 digits, 1e400, .inf, .nan, 1e9 where
  at most thousands make sense), a ramp of a million steps, times past the longest run.
- **scenario**: names that would leave the output directory, ``workload: []``, an empty
  ``fabric:``, paths out of bounds, unknown keys.
- **fabric**: fabric scenarios: switch and link names the testbed keeps (``h1_1``, ``lk3``)
  or that are no names, topologies past the bounds (a 3000-switch chain, a full mesh, an
  800-switch ladder), paths per pair past the compiled program's, broken graphs.
- **trace**: CSV traces of a schedule: a field of 200 KiB, too many rows, not UTF-8, times
  and values not finite, a trace too many events repeat.
- **description**: network descriptions (JSON): NaN, duplicate keys, nesting, huge numbers,
  too many switches, bad fields, a fabric with a reserved name.
- **section**: a bare fabric section (what a scenario's ``fabric:`` holds).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import yaml

MIB = 1 << 20


@dataclass(frozen=True)
class Case:
    """A malformed file `filename` with `content` (or a `special` path: a device of /dev
    (its path), directory, missing, fifo, fifo-writer (a writer holds it open and never
    writes), socket, link-fifo (a symbolic link to a FIFO)) and side files `extra` beside it
    (traces); `expect` is a part of the message that must follow ``FILE: ``."""

    group: str
    name: str
    filename: str
    content: bytes = b""
    expect: str = ""
    special: str = ""
    extra: dict[str, bytes] = field(default_factory=dict)

    @property
    def id(self) -> str:
        return f"{self.group}/{self.name}"


class _Dumper(yaml.SafeDumper):
    """Writes a value repeated in a document out each time (no anchors and aliases)."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def dump(doc: Any) -> bytes:
    return yaml.dump(doc, Dumper=_Dumper, sort_keys=False, width=1 << 30).encode()


def replaced(doc: dict, old: bytes, new: bytes) -> bytes:
    """`doc` written out with the first `old` replaced by `new` (a value PyYAML would not
    write: 400 digits as a float, 1e9, a quoted number)."""
    text = dump(doc)
    assert old in text, old
    return text.replace(old, new, 1)


SCENARIO: dict = {
    "name": "fuzz", "duration_s": 10,
    "paths": [{"rate_mbps": 10, "delay_ms": 5}, {"rate_mbps": 5, "delay_ms": 10}],
    "workload": [{"kind": "bulk"}],
}  # fmt: skip
FABRIC: dict = {
    "name": "fuzz-fabric", "duration_s": 10,
    "fabric": {"graph": {
        "link": {"rate_mbps": 10, "delay_ms": 1},
        "switches": [{"name": "a", "role": "edge"}, {"name": "b", "role": "edge"},
                     {"name": "t", "role": "transit"}],
        "links": [{"a": "a", "b": "t"}, {"a": "b", "b": "t"}],
    }},
    "workload": [{"kind": "poisson", "sizes": "websearch", "load_pct": 10}],
}  # fmt: skip


def changed(base: dict, edit: Callable[[dict], Any]) -> dict:
    """A deep copy of `base` after `edit` changed it in place."""
    doc = copy.deepcopy(base)
    edit(doc)
    return doc


def setting(path: tuple, value: Any) -> Callable[[dict], None]:
    """An edit setting the key at `path` (keys and list indices) to `value`."""

    def edit(doc: dict) -> None:
        target = doc
        for part in path[:-1]:
            target = target[part]
        target[path[-1]] = value

    return edit


def scenario_case(group: str, name: str, path: tuple, value: Any, expect: str,
                  base: dict = SCENARIO) -> Case:
    return Case(group, name, "s.yaml", dump(changed(base, setting(path, value))), expect)


def read_cases() -> list[Case]:
    return [
        Case("read", "comments-3mib", "s.yaml", b"# comment\n" * (3 * MIB // 10), "larger than"),
        Case("read", "just-too-large", "s.yaml", b"#" * MIB + b"\n", "larger than 1048576"),
        Case("read", "dev-zero", "", special="/dev/zero", expect="is a character device"),
        Case("read", "dev-null", "", special="/dev/null", expect="is a character device"),
        Case("read", "latin-1", "s.yaml", b"name: caf\xe9\n", "not UTF-8 text: byte 0xe9 at "
             "byte offset 9"),
        Case("read", "utf-16", "s.yaml", "name: x\n".encode("utf-16"), "not UTF-8"),
        Case("read", "nul-byte", "s.yaml", b"name: a\x00b\n", "special characters"),
        Case("read", "directory", "d.yaml", special="directory", expect="is a directory"),
        Case("read", "missing", "none.yaml", special="missing", expect="No such file"),
        Case("read", "fifo", "p.yaml", special="fifo", expect="is a FIFO (named pipe)"),
        Case("read", "fifo-silent-writer", "p.yaml", special="fifo-writer",
             expect="is a FIFO (named pipe)"),
        Case("read", "link-to-fifo", "p.yaml", special="link-fifo",
             expect="is a FIFO (named pipe)"),
        Case("read", "socket", "s.yaml", special="socket", expect="is a socket"),
        Case("read", "empty", "s.yaml", b"", "must be an object"),
        Case("read", "only-comments", "s.yaml", b"# nothing\n", "must be an object"),
        Case("read", "two-documents", "s.yaml", b"name: a\n---\nname: b\n", "not valid YAML"),
        Case("read", "a-list", "s.yaml", b"- name: a\n", "must be an object"),
        Case("read", "a-scalar", "s.yaml", b"hello\n", "must be an object"),
        Case("read", "tab-indent", "s.yaml", b"name: a\npaths:\n\t- 1\n", "not valid YAML"),
        Case("read", "unclosed-quote", "s.yaml", b"name: 'a\n", "not valid YAML"),
        Case("read", "yaml-as-json", "s.json", dump(SCENARIO), "not JSON"),
    ]


def _bomb(key: str) -> bytes:
    """A "billion laughs": 9 levels of 9 aliases each, some 400 bytes."""
    lines = ["a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]" for i in range(1, 9)]
    body = "\n".join(f"  {line}" for line in lines)
    return (f"name: fuzz\nduration_s: 10\npaths: [{{rate_mbps: 10}}]\nworkload: [{{kind: bulk}}]\n"
            f"{key}:\n{body}\n").encode()


def yaml_cases() -> list[Case]:
    deep_list = b"params: " + b"[" * 5000 + b"]" * 5000 + b"\n"
    deep_map = b"params:\n" + b"".join(b" " * i + b"k:\n" for i in range(1, 1400))
    deep_flow = b"params: " + b"{a: " * 5000 + b"1" + b"}" * 5000 + b"\n"
    wide = b"params: {k: [" + b"0, " * 100_000 + b"0]}\n"
    base = dump(SCENARIO)
    return [
        Case("yaml", "alias-bomb-params", "s.yaml", _bomb("params"), "anchors and aliases"),
        Case("yaml", "alias-bomb-name", "s.yaml",
             _bomb("telemetry").replace(b"name: fuzz\n", b"") + b"name: *a8\n", "anchors"),
        Case("yaml", "alias-bomb-description", "s.yaml", _bomb("description"), "anchors"),
        Case("yaml", "one-alias", "s.yaml", b"name: &n fuzz\ndescription: *n\n", "anchor &n"),
        Case("yaml", "merge-key", "s.yaml", base + b"policy: {<<: {name: ecmp}}\n", "merge keys"),
        Case("yaml", "list-5000-deep", "s.yaml", base + deep_list, "nested deeper than 32"),
        Case("yaml", "block-mapping-1400-deep", "s.yaml", base + deep_map, "nested deeper"),
        Case("yaml", "flow-mapping-5000-deep", "s.yaml", base + deep_flow, "nested deeper"),
        Case("yaml", "depth-40", "s.yaml", base + b"telemetry: " + b"[" * 40 + b"]" * 40 + b"\n",
             "nested deeper than 32"),
        Case("yaml", "100000-values", "s.yaml", base + wide, "more than 50000 values"),
        Case("yaml", "duplicate-name", "s.yaml", base + b"name: other\n",
             "duplicate key 'name', also on line 1"),
        Case("yaml", "duplicate-nested", "s.yaml",
             b"name: a\nduration_s: 10\npaths:\n  - rate_mbps: 10\n    rate_mbps: 20\n",
             "duplicate key 'rate_mbps', also on line 4 (line 5)"),
        Case("yaml", "python-tag", "s.yaml", base + b"params: !!python/object:os.system x\n",
             "not valid YAML"),
        Case("yaml", "custom-tag", "s.yaml", base + b"seed: !mine 3\n", "not valid YAML"),
        Case("yaml", "list-as-key", "s.yaml", base + b"? [a, b]\n: 1\n", "a key must be a plain"),
        Case("yaml", "int-5000-digits", "s.yaml", base + b"seed: " + b"7" * 5000 + b"\n",
             "Exceeds the limit"),
        Case("yaml", "month-13", "s.yaml", base + b"description: 2001-13-45\n", "month"),
        Case("yaml", "plain-key-of-10k", "s.yaml", base + b"k" * 10_000 + b": 1\n",
             "not valid YAML: could not find expected ':'"),
        Case("yaml", "explicit-key-of-10k", "s.yaml", base + b"? " + b"k" * 10_000 + b"\n: 1\n",
             "characters): unknown key"),
        Case("yaml", "null-key", "s.yaml", base + b"~: 1\n", "unknown key"),
        Case("yaml", "binary-name", "s.yaml",
             base.replace(b"name: fuzz", b"name: !!binary aGVsbG8="), "name: must be"),
    ]


def number_cases() -> list[Case]:
    g = "numbers"
    digits400 = int("9" * 400)
    ramp = {"ramp": "delay_ms", "from_s": 0, "to_s": 3600, "start": 1, "end": 2,
            "interval_s": 0.01}
    return [
        Case(g, "rate-400-digits-float", "s.yaml", replaced(
            SCENARIO, b"rate_mbps: 10\n", b"rate_mbps: " + b"9" * 400 + b".5\n"),
             "paths[0].rate_mbps: must be"),
        scenario_case(g, "rate-400-digits-int", ("paths", 0, "rate_mbps"), digits400,
                      "paths[0].rate_mbps: must be in"),
        Case(g, "rate-1e400", "s.yaml", replaced(SCENARIO, b"rate_mbps: 10\n",
             b"rate_mbps: 1e400\n"), "paths[0].rate_mbps: must be a finite number"),
        scenario_case(g, "rate-inf", ("paths", 0, "rate_mbps"), float("inf"),
                      "paths[0].rate_mbps: must be a finite number"),
        scenario_case(g, "rate-nan", ("paths", 0, "rate_mbps"), float("nan"),
                      "paths[0].rate_mbps: must be a finite number"),
        scenario_case(g, "delay-minus-inf", ("paths", 0, "delay_ms"), float("-inf"),
                      "paths[0].delay_ms"),
        Case(g, "delay-1e9", "s.yaml", replaced(SCENARIO, b"delay_ms: 5\n",
             b"delay_ms: 1e9\n"), "paths[0].delay_ms: must be in 0..1000, got 1000000000.0"),
        Case(g, "delay-quoted-1e9", "s.yaml", replaced(SCENARIO, b"delay_ms: 5\n",
             b"delay_ms: '1e9'\n"), "paths[0].delay_ms: must be a number, got '1e9'"),
        scenario_case(g, "duration-1e9", ("duration_s",), 1e9, "duration_s: must be in 1..3600"),
        scenario_case(g, "duration-huge-negative", ("duration_s",), -digits400, "duration_s"),
        scenario_case(g, "seed-1e30", ("seed",), 10**30, "seed: must be an integer"),
        scenario_case(g, "queue-400-digits", ("paths", 0, "queue_packets"), digits400,
                      "paths[0].queue_packets"),
        scenario_case(g, "loss-bool", ("paths", 0, "loss_pct"), True, "paths[0].loss_pct"),
        Case(g, "warmup-1e309", "s.yaml", dump(SCENARIO) + b"warmup_s: 1e309\n", "warmup_s"),
        scenario_case(g, "ramp-million-steps", ("paths", 0, "schedule"), [ramp],
                      "paths[0].schedule[0]: more than 50000 schedule steps"),
        scenario_case(g, "at-1e12", ("paths", 0, "schedule"),
                      [{"at_s": 1e12, "set": {"delay_ms": 1}}],
                      "paths[0].schedule[0].at_s: must be in 0..3600"),
        scenario_case(g, "down-nan", ("paths", 0, "schedule"), [{"down_s": float("nan")}],
                      "paths[0].schedule[0].down_s"),
        scenario_case(g, "ramp-interval-tiny", ("paths", 0, "schedule"),
                      [{**ramp, "interval_s": 1e-300}], "paths[0].schedule[0].interval_s"),
        scenario_case(g, "host-addresses-1e100", ("host_addresses",), 10**100, "host_addresses"),
        scenario_case(g, "flowlet-gap-1e50", ("policy",), {"flowlet_gap_us": 10**50},
                      "policy.flowlet_gap_us"),
        scenario_case(g, "load-1e300", ("workload",), [{"kind": "poisson", "sizes":
                      "websearch", "load_pct": 1e300}], "workload[0].load_pct"),
        scenario_case(g, "params-400-digits", ("params",), {"control_period_ms": digits400},
                      "params.control_period_ms"),
        scenario_case(g, "cpu-bound-inf", ("cpu_bound",), {"idle_below_pct": float("inf")},
                      "cpu_bound.idle_below_pct"),
        scenario_case(g, "weights-huge", ("policy",), {"name": "static", "weights": [1, 10**40]},
                      "policy.weights[1]"),
    ]


def scenario_cases() -> list[Case]:
    g = "scenario"
    name = ("name",)
    return [
        scenario_case(g, "workload-empty", ("workload",), [], "workload: at least one"),
        scenario_case(g, "fabric-workload-empty", ("workload",), [], "workload: at least one",
                      FABRIC),
        scenario_case(g, "name-traversal", name, "../../../../tmp/x", "name: must be"),
        scenario_case(g, "name-absolute", name, "/etc/x", "name: must be"),
        scenario_case(g, "name-newline", name, "a\nb", "name: must be"),
        scenario_case(g, "name-empty", name, "", "name: must be"),
        scenario_case(g, "name-65", name, "n" * 65, "name: must be"),
        scenario_case(g, "name-dotdot", name, "..", "name: must be"),
        scenario_case(g, "name-space", name, "a b", "name: must be"),
        scenario_case(g, "name-list", name, ["a"], "name: must be"),
        scenario_case(g, "name-megabyte", name, "x" * 500_000, "characters)"),
        Case(g, "fabric-empty", "s.yaml", b"name: a\nduration_s: 10\nfabric:\n",
             "fabric: empty"),
        scenario_case(g, "fabric-list", ("fabric",), [], "fabric: must be an object",
                      FABRIC),
        scenario_case(g, "paths-empty", ("paths",), [], "paths: between 1 and"),
        scenario_case(g, "paths-nine", ("paths",), [{"rate_mbps": 1}] * 9, "paths: between"),
        scenario_case(g, "unknown-key", ("colour",), "red", "colour: unknown key"),
        scenario_case(g, "policy-unknown", ("policy",), {"name": "best"}, "policy.name"),
        scenario_case(g, "description-list", ("description",), [1, 2], "description: must be"),
        scenario_case(g, "paths-and-fabric", ("paths",), [{"rate_mbps": 1}], "fabric: either",
                      FABRIC),
        Case(g, "duration-missing", "s.yaml", dump({k: v for k, v in SCENARIO.items()
                                                    if k != "duration_s"}), "duration_s: missing"),
    ]
