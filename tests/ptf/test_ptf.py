"""Runs the PTF suite (ptf-tests/) on BMv2 once and reports each PTF test as a pytest test.

`make ptf TEST=module.Class` runs one case: the Makefile passes TEST as MPSCHED_PTF_TESTS
(names separated by spaces), which selects both the cases PTF runs and the ones reported."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

import pytest

from mpsched.proc.layout import REPO_ROOT
from tests.conftest import require

PTF_DIR = REPO_ROOT / "ptf-tests"


def all_ptf_tests() -> list[str]:
    """module.Class for every PTF test class (classes with a runTest method)."""
    names = []
    for path in sorted(PTF_DIR.glob("*.py")):
        tree = ast.parse(path.read_text())
        for node in tree.body:
            if isinstance(node, ast.ClassDef) and any(
                isinstance(item, ast.FunctionDef) and item.name == "runTest" for item in node.body
            ):
                names.append(f"{path.stem}.{node.name}")
    return names


def ptf_tests() -> list[str]:
    """The cases to run: those MPSCHED_PTF_TESTS names (each must exist), else all."""
    wanted = os.environ.get("MPSCHED_PTF_TESTS", "").split()
    if not wanted:
        return all_ptf_tests()
    known = all_ptf_tests()
    unknown = [w for w in wanted if w not in known]
    if unknown:
        raise pytest.UsageError(
            f"no PTF test {unknown[0]!r} (TEST=module.Class; known: {', '.join(known)})"
        )
    return wanted


@dataclass(frozen=True)
class PtfRun:
    """What one run of the PTF runner left: each case's outcome ("passed", "skipped: why",
    "failure: ...", "error: ..."), the runner's exit code (non-zero also when BMv2 died)
    and the tail of its output."""

    outcomes: dict[str, str]
    returncode: int
    tail: str

    def failed(self) -> bool:
        return any(o.startswith(("failure", "error")) for o in self.outcomes.values())


def parse_xunit(xunit: Path) -> dict[str, str]:
    """module.Class.method -> outcome, from PTF's JUnit XML reports."""
    results: dict[str, str] = {}
    for report in sorted(xunit.glob("*.xml")):
        for case in ET.parse(report).getroot().iter("testcase"):
            name = f"{case.get('classname')}.{case.get('name')}"
            outcome = "passed"
            for child in case:
                if child.tag in ("failure", "error", "skipped"):
                    outcome = f"{child.tag}: {child.get('message') or child.text or ''}"[:2000]
            results[name] = outcome
    return results


@pytest.fixture(scope="session")
def ptf_run(tmp_path_factory) -> PtfRun:
    require("root", "simple_switch_grpc", "ethtool")
    from mpsched.proc.layout import p4_artifacts

    if p4_artifacts().missing():
        pytest.skip("P4 program not compiled; run `make p4` (needs p4c)")
    xunit = tmp_path_factory.mktemp("ptf-xunit")
    run = subprocess.run(
        [sys.executable, "-m", "mpsched.ptfrun", "--xunit-dir", str(xunit), *selected()],
        capture_output=True, text=True, timeout=900, check=False,
    )
    results = parse_xunit(Path(xunit))
    tail = (run.stdout + run.stderr)[-3000:]
    if not results:
        pytest.fail(f"PTF produced no results (exit {run.returncode}):\n{tail}")
    return PtfRun(results, run.returncode, tail)


def selected() -> list[str]:
    """What ptfrun is told to run: nothing (all) unless a subset was asked for."""
    return ptf_tests() if os.environ.get("MPSCHED_PTF_TESTS", "").strip() else []


def check_case(run: PtfRun, name: str) -> None:
    """Fails unless every PTF case matching `name` ran and passed; skips when PTF skipped
    one (with PTF's reason): a skip never counts as a pass."""
    matches = {k: v for k, v in run.outcomes.items() if k.endswith(name) or name in k}
    assert matches, f"{name} did not run; results: {sorted(run.outcomes)}"
    for outcome in matches.values():
        if outcome.startswith("skipped"):
            pytest.skip(f"PTF skipped {name}: {outcome.removeprefix('skipped: ')}")
        assert outcome == "passed", outcome


def check_exit(run: PtfRun) -> None:
    """The runner's exit code agrees with the cases: non-zero with no failed case means
    something outside them went wrong (BMv2 died, PTF crashed)."""
    if run.returncode != 0 and not run.failed():
        pytest.fail(f"the PTF runner exited {run.returncode} although no case failed "
                    f"(BMv2 died or PTF crashed); its output ends:\n{run.tail}")


@pytest.mark.integration
@pytest.mark.parametrize("name", ptf_tests())
def test_ptf(ptf_run: PtfRun, name: str) -> None:
    check_case(ptf_run, name)


@pytest.mark.integration
def test_ptf_runner_exit_status(ptf_run: PtfRun) -> None:
    check_exit(ptf_run)
