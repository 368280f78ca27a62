"""src/mpsched/lab/run_window.py: what both analyses read from a run's reports; and that the
analyses import it, not each other's helpers (no import loop between them)."""

from __future__ import annotations

import ast

from mpsched.lab.run_window import censored_fct_s, interp
from mpsched.proc.layout import REPO_ROOT


def test_interp_clamps_and_interpolates():
    s = [(1.0, 10.0), (3.0, 30.0)]
    assert interp(s, 0.0) == 10.0
    assert interp(s, 2.0) == 20.0
    assert interp(s, 9.0) == 30.0
    assert interp([], 1.0) == 0.0


def test_censored_fct_runs_from_arrival_to_the_senders_end():
    assert censored_fct_s({"arrival": 100.0, "size": 1}, {"ended": 130.5}) == 30.5
    assert censored_fct_s({"start": 120.0, "size": 1}, {"ended": 130.0}) == 10.0
    assert censored_fct_s({"size": 1}, {"ended": 130.0}) is None
    assert censored_fct_s({"arrival": 100.0}, {}) is None


def _lab_imports(module: str) -> set[str]:
    """The mpsched.lab modules a lab module imports, anywhere in it (functions included)."""
    tree = ast.parse((REPO_ROOT / "src" / "mpsched" / "lab" / f"{module}.py").read_text())
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "mpsched.lab":
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("mpsched.lab."):
            out.add(node.module.removeprefix("mpsched.lab."))
    return out


def test_the_fabric_analyses_do_not_import_the_two_edge_one():
    """analysis.py hands fabric runs to fabric_analysis.py; neither that nor fabric_mptcp.py
    imports analysis.py back: what they share is run_window.py's."""
    assert "fabric_analysis" in _lab_imports("analysis")
    for module in ("fabric_analysis", "fabric_mptcp", "run_window"):
        assert "analysis" not in _lab_imports(module), module
    assert "run_window" in _lab_imports("fabric_analysis") & _lab_imports("analysis")
