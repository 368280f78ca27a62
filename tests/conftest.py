"""Shared fixtures: prerequisites of the integration tests skip with a printed reason."""

from __future__ import annotations

import pytest

from mpsched.proc import prereqs
from mpsched.proc.layout import p4_artifacts


def require(*names: str) -> None:
    """Skip the calling test, naming what is missing."""
    problems = prereqs.missing(*names)
    if problems:
        pytest.skip("missing: " + "; ".join(problems))


@pytest.fixture
def artifacts():
    art = p4_artifacts()
    if art.missing():
        pytest.skip(f"P4 program not compiled ({art.missing()[0]}); run `make p4` (needs p4c)")
    return art


TOKEN = "test-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


def token_file(tmp_path):
    """The controller's write token, in a file it reads at start."""
    path = tmp_path / "token"
    path.write_text(TOKEN + "\n")
    return path
