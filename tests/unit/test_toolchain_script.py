"""scripts/toolchain.sh (`make toolchain`): syntax, --help, a --dry-run that refuses
missing TOOLCHAIN_SRC checkouts without touching anything, and the choice between p4lang's
prebuilt packages, a build from source and nothing to do. Nothing is built or downloaded here:
p4lang's repository is a file:// directory (or a missing one, for an unreachable repository)
and the installed tools are stand-ins printing a version."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "toolchain.sh"
# PATH for runs that plan: the system's programs, but not /usr/local/bin, where this machine's
# real p4c and simple_switch_grpc may be (tools on PATH at the pinned versions are skipped).
BASE_PATH = "/usr/bin:/bin"


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
        "--ensure",
        "TOOLCHAIN_REPO",
        "TOOLCHAIN_PREBUILT",
        "home:p4lang",
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
            "PATH": BASE_PATH,
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


# -- which way: p4lang's packages, a build from source, or nothing ---------------------------
PACKAGES = """Package: p4lang-pi
Version: 0.1.0-15
Architecture: amd64

Package: p4lang-bmv2
Version: {bmv2}
Architecture: amd64

Package: p4lang-p4c
Version: {p4c}
Architecture: amd64
"""


def fake_tool(bindir: Path, name: str, version: str) -> None:
    """A stand-in for an installed program whose --version prints `version`."""
    bindir.mkdir(exist_ok=True)
    tool = bindir / name
    tool.write_text(f"#!/bin/sh\necho '{version}'\n")
    tool.chmod(0o755)


def plan(tmp_path: Path, *args: str, repo: str, path: str = BASE_PATH):
    prefix = tmp_path / "prefix"
    prefix.mkdir(exist_ok=True)
    return run(
        *args,
        env={
            "PATH": path,
            "PREFIX": str(prefix),
            "TOOLCHAIN_WORK": str(tmp_path / "work"),
            "TOOLCHAIN_REPO": repo,
            "TOOLCHAIN_SRC": "",
            "TOOLCHAIN_FORCE": "0",
            "TOOLCHAIN_PREBUILT": "1",
        },
    )


def repo_with(tmp_path: Path, bmv2: str, p4c: str) -> str:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "Packages").write_text(PACKAGES.format(bmv2=bmv2, p4c=p4c))
    return f"file://{repo}"


def test_unreachable_repository_builds_from_source(tmp_path):
    out = plan(tmp_path, "--dry-run", repo=f"file://{tmp_path / 'unreachable'}")
    assert out.returncode == 0, out.stderr
    assert "PI: build f96af95" in out.stdout
    assert "BMv2: build 1.15.5 from https://github.com/p4lang/behavioral-model.git" in out.stdout
    assert "p4c: build v1.2.4.4 from https://github.com/p4lang/p4c.git" in out.stdout
    assert "way: build from the pinned sources" in out.stdout
    assert "unreachable" in out.stdout
    # docs/setup.md's measured times: PI 3m28s + BMv2 8m37s + p4c 6m18s
    assert "about 18m23s" in out.stdout
    assert "install p4lang-" not in out.stdout
    assert not (tmp_path / "work").exists()


def test_repository_with_the_pinned_versions_installs_prebuilt(tmp_path):
    repo = repo_with(tmp_path, bmv2="1.15.5-2", p4c="1.2.4.4-1")
    out = plan(tmp_path, "--dry-run", repo=repo)
    assert out.returncode == 0, out.stderr
    assert "BMv2: install p4lang-bmv2=1.15.5-2" in out.stdout
    assert "p4c: install p4lang-p4c=1.2.4.4-1" in out.stdout
    assert "PI: skip, comes with p4lang-bmv2=1.15.5-2" in out.stdout
    assert "way: p4lang's prebuilt packages" in out.stdout
    assert "build from the pinned sources" not in out.stdout


def test_repository_at_other_versions_is_not_used_for_them(tmp_path):
    repo = repo_with(tmp_path, bmv2="1.15.0-1", p4c="1.2.4.4-1")
    out = plan(tmp_path, "--dry-run", repo=repo)
    assert out.returncode == 0, out.stderr
    assert "p4c: install p4lang-p4c=1.2.4.4-1" in out.stdout
    assert "BMv2: build 1.15.5" in out.stdout and "PI: build" in out.stdout
    assert "has p4lang-bmv2 1.15.0-1, not 1.15.5" in out.stdout


def test_tools_at_the_pinned_versions_are_skipped_without_probing(tmp_path):
    bindir = tmp_path / "bin"
    fake_tool(bindir, "p4c", "p4c 1.2.4.4 (SHA: 0 BUILD: Release)")
    fake_tool(bindir, "simple_switch_grpc", "1.15.5-abcdef")
    # a repository offering the pinned versions: used if the script wrongly wanted to install
    repo = repo_with(tmp_path, bmv2="1.15.5-2", p4c="1.2.4.4-1")
    path = f"{bindir}:{BASE_PATH}"
    out = plan(tmp_path, "--dry-run", repo=repo, path=path)
    assert out.returncode == 0, out.stderr
    assert f"p4c: skip, already installed at {bindir / 'p4c'}" in out.stdout
    assert f"BMv2: skip, already installed at {bindir / 'simple_switch_grpc'}" in out.stdout
    assert "PI: skip, BMv2 at" in out.stdout
    assert "nothing to install" in out.stdout
    assert "way:" not in out.stdout
    ensure = plan(tmp_path, "--ensure", repo=repo, path=path)
    assert ensure.returncode == 0, ensure.stderr
    assert "nothing to do" in ensure.stdout
    assert not (tmp_path / "work").exists()


def test_ensure_with_an_old_bmv2_plans_its_build(tmp_path):
    bindir = tmp_path / "bin"
    fake_tool(bindir, "p4c", "p4c 1.2.4.4 (SHA: 0 BUILD: Release)")
    fake_tool(bindir, "simple_switch_grpc", "1.15.0-abcdef")
    out = plan(tmp_path, "--ensure", "--dry-run", repo=f"file://{tmp_path / 'unreachable'}",
               path=f"{bindir}:{BASE_PATH}")
    assert out.returncode == 0, out.stderr
    assert "nothing to do" not in out.stdout
    assert "BMv2: build 1.15.5" in out.stdout
    assert "p4c: skip, already installed" in out.stdout
