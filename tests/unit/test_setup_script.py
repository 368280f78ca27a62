"""scripts/setup.sh (`make setup`, `make ensure-setup`): syntax, --help, and the Debian packages
it installs are the ones docs/setup.md names. Nothing is installed here."""

from __future__ import annotations

import os
import re
import subprocess

from mpsched.proc.layout import REPO_ROOT

SCRIPT = REPO_ROOT / "scripts" / "setup.sh"


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", str(SCRIPT), *args], capture_output=True, text=True, timeout=30, check=False
    )


def test_script_is_executable_and_parses():
    assert os.access(SCRIPT, os.X_OK)
    out = subprocess.run(["bash", "-n", str(SCRIPT)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr


def test_help_names_the_steps_and_the_stamp():
    out = run("--help")
    assert out.returncode == 0, out.stderr
    for word in ("--if-needed", "dpkg-query", "requirements.txt", ".mpsched-setup", "VENV"):
        assert word in out.stdout, word


def test_unknown_argument_is_refused():
    out = run("--bogus")
    assert out.returncode == 2
    assert "unknown argument: --bogus" in out.stderr


def test_setup_doc_names_every_debian_package():
    out = run("--list-packages")
    assert out.returncode == 0, out.stderr
    packages = out.stdout.split()
    assert "mininet" in packages and "python3-protobuf" in packages
    prerequisites = (REPO_ROOT / "docs/setup.md").read_text().split("## Prerequisites", 1)[1]
    prerequisites = prerequisites.split("\n## ", 1)[0]
    named = set(re.findall(r"[a-z0-9][a-z0-9.+-]*", prerequisites))
    missing = [p for p in packages if p not in named]
    assert not missing, f"docs/setup.md, Prerequisites does not name: {missing}"


def test_package_checks_survive_a_long_answer(tmp_path):
    """apt-cache's answer is long: a `| grep -q` would end it with SIGPIPE, which pipefail
    turned into "apt knows no mininet ..." on a fresh machine."""
    fake = tmp_path / "apt-cache"
    fake.write_text('#!/bin/sh\necho "  Candidate: 1.0-1"\nseq 1 200000\n')
    fake.chmod(0o755)
    gone = tmp_path / "dpkg-query"
    gone.write_text('#!/bin/sh\necho "unknown ok not-installed"\nseq 1 200000\n')
    gone.chmod(0o755)
    script = f'source "{SCRIPT}"; installable_packages a b; missing_packages c'
    out = subprocess.run(
        ["bash", "-c", script],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
        env={**os.environ, "PATH": f"{tmp_path}:{os.environ['PATH']}"},
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["a", "b", "c"]
