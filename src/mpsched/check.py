"""`mpsched check FILE...`: validate scenario files, fabric sections and network
descriptions without starting anything.

Each file is read and parsed within `mpsched.safeload`'s bounds and validated by the same
code that `mpsched run`, `mpsched fabric`, `mpsched topo` and the controller use. Its kind is
told by its content: a mapping with `switches` is a network description (src/mpsched/netcfg.py,
JSON by a ``.json`` name), one with `leaf_spine` or `graph` (and no `name`) a fabric section
(what a scenario's `fabric:` holds, docs/fabric.md), anything else a scenario
(scenarios/README.md; two edges or a fabric). A valid file prints
``FILE: ok (<kind>, <summary>)`` on stdout, an invalid one ``FILE: field: message`` on
stderr; the exit status is 0 when every file is valid, 2 otherwise.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mpsched import safeload
from mpsched.validation import EXIT_INVALID, InputError

PROG = "mpsched check"
EPILOG = """\
Each FILE's kind is told by its content: `switches` makes a network description
(docs/fabric.md, "The network description"), `leaf_spine` or `graph` at the top a
fabric section (as under a scenario's `fabric:`), anything else a scenario
(scenarios/README.md). Nothing is started: no switch, no controller, no Mininet.
A file is read within bounds (size, nesting, values; no YAML anchors, aliases or
duplicate keys: src/mpsched/safeload.py) and validated as `mpsched run`, `mpsched fabric`
and the controller would. Prints `FILE: ok (<kind>, <summary>)` per valid file and
`FILE: field: message` (stderr) per invalid one; exits 0 if every file is valid, 2
otherwise.
"""


@dataclass(frozen=True)
class Checked:
    """One file's verdict: its kind and a summary, or the error naming the field."""

    path: str
    kind: str | None = None
    summary: str = ""
    error: InputError | None = None

    @property
    def ok(self) -> bool:
        return self.error is None

    def line(self) -> str:
        if self.error is not None:
            return str(self.error)
        return f"{self.path}: ok ({self.kind}, {self.summary})"


def kind_of(data: Any) -> str:
    """The kind of a parsed document, by its top-level keys (module docstring)."""
    if isinstance(data, dict) and "switches" in data:
        return "network description"
    if isinstance(data, dict) and {"leaf_spine", "graph"} & set(data) and "name" not in data:
        return "fabric"
    return "scenario"


def count(n: int, noun: str, plural: str = "") -> str:
    """``count(1, "path")`` is "1 path", ``count(2, "path")`` "2 paths"."""
    return f"{n} {noun if n == 1 else plural or noun + 's'}"


def fabric_summary(fabric: Any) -> str:
    return (f"{fabric.kind}: {count(len(fabric.switches), 'switch', 'switches')}, "
            f"{count(len(fabric.links), 'link')}, {count(len(fabric.edges), 'edge')}, "
            f"up to {fabric.paths_per_pair} paths per pair")


def _scenario(data: Any, path: Path) -> tuple[str, str]:
    from mpsched.lab.scenario import parse

    sc = parse(data, source=path, fabric=True)
    if sc.fabric is not None:
        return "fabric scenario", (f"{sc.name!r}, {fabric_summary(sc.fabric)}, "
                                   f"{count(len(sc.fabric_workload), 'workload')}, "
                                   f"{sc.duration_s:g} s")
    return "scenario", (f"{sc.name!r}, {count(len(sc.topo.paths), 'path')}, "
                        f"{count(len(sc.workload), 'workload')}, {sc.duration_s:g} s")


def _fabric(data: Any, path: Path) -> tuple[str, str]:
    from mpsched.fabric.files import parse_fabric

    fabric = parse_fabric(data, str(path), context={"base_dir": path.parent})
    return "fabric", fabric_summary(fabric)


def _description(data: Any, path: Path) -> tuple[str, str]:
    from mpsched.netcfg import NetCfg

    net = NetCfg.parse(data, path)
    fabric = net.topology
    where = fabric_summary(fabric) if fabric is not None else "two edges"
    return "network description", f"{count(len(net.switches), 'switch', 'switches')}, {where}"


CHECKERS = {"scenario": _scenario, "fabric": _fabric, "network description": _description}


def check_file(path: str | Path) -> Checked:
    """Read, parse and validate one file; every refusal (and anything a validator lets
    through, `safeload.guard`) is the `Checked`'s error."""
    path = Path(path)
    try:
        with safeload.guard(path):
            data = safeload.read_document(path)
            kind, summary = CHECKERS[kind_of(data)](data, path)
    except InputError as error:
        return Checked(str(path), error=error)
    return Checked(str(path), kind, summary)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog=PROG,
        description="Validate scenario, fabric and network description files without "
                    "starting anything.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("files", nargs="+", type=Path, metavar="FILE",
                   help="a scenario (YAML), a fabric section or a network description (JSON)")
    return p


def execute(args: argparse.Namespace) -> int:
    status = 0
    for path in args.files:
        checked = check_file(path)
        print(checked.line(), file=sys.stdout if checked.ok else sys.stderr)
        if not checked.ok:
            status = EXIT_INVALID
    return status


def main(argv: Sequence[str] | None = None) -> int:
    return execute(build_parser().parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
