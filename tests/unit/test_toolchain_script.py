"""scripts/toolchain.sh (`make toolchain`): syntax, --help, and a --dry-run that refuses
missing TOOLCHAIN_SRC checkouts without touching anything. Nothing is built here."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "toolchain.sh"


def run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", str(SCRIPT), *args],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, **(env or {})},
    )


def test_script_is_executable_and_parses():
    assert os.access(SCRIPT, os.X_OK)
    out = subprocess.run(["bash", "-n", str(SCRIPT)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr


def test_help_names_components_and_variables():
    out = run("--help")
    assert out.returncode == 0, out.stderr
    for word in (
        "PI",
        "BMv2",
        "p4c",
        "simple_switch_grpc",
        "TOOLCHAIN_SRC",
        "PREFIX",
        "JOBS",
        "TOOLCHAIN_FORCE",
        "--dry-run",
        "1.15.5",
        "v1.2.4.4",
    ):
        assert word in out.stdout, word


def test_unknown_argument_is_refused():
    out = run("--bogus")
    assert out.returncode == 2
    assert "unknown argument: --bogus" in out.stderr


def test_dry_run_names_missing_checkouts_and_touches_nothing(tmp_path):
    prefix, src, work = tmp_path / "prefix", tmp_path / "src", tmp_path / "work"
    prefix.mkdir()
    src.mkdir()
    out = run(
        "--dry-run",
        env={
            "PREFIX": str(prefix),
            "TOOLCHAIN_SRC": str(src),
            "TOOLCHAIN_WORK": str(work),
            "TOOLCHAIN_FORCE": "0",
            "TOOLCHAIN_ALLOW_OTHER": "0",
        },
    )
    assert out.returncode != 0
    assert f"missing checkout {src / 'PI'}" in out.stdout
    assert f"missing checkout {src / 'behavioral-model'}" in out.stdout
    assert f"missing checkout {src / 'p4c'}" in out.stdout
    assert f"cannot build from TOOLCHAIN_SRC={src}" in out.stderr
    assert not work.exists()
    assert list(prefix.iterdir()) == [] and list(src.iterdir()) == []
