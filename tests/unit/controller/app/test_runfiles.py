"""The controller's token and state files (src/mpsched/controller/app/runfiles.py,
src/mpsched/controller/__main__.py):
nothing is written before every check passed, the run directory is kept 0700, and a token or
state file another user could have planted is refused at start (exit status 2)."""

from __future__ import annotations

import logging
import os
import stat
from pathlib import Path

import pytest

from mpsched.controller.__main__ import StartError, build_parser, execute, run_files
from mpsched.controller.app.runfiles import RunFiles
from mpsched.controller.intent.state import StateError, load
from mpsched.proc import rundir

OTHER_UID = 4242


def make_foreign(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Make `path` another user's (not root's): as root, give it to OTHER_UID; else run the
    checks as if this process were another user."""
    me = os.geteuid()
    if me == 0:
        os.chown(path, OTHER_UID, -1, follow_symlinks=False)
    else:
        monkeypatch.setattr(rundir.os, "geteuid", lambda: me + 1)


@pytest.fixture
def run(tmp_path, monkeypatch) -> Path:
    """$MPSCHED_RUN_DIR, not created yet."""
    path = tmp_path / "run"
    monkeypatch.setenv("MPSCHED_RUN_DIR", str(path))
    return path


def args(*extra: str):
    return build_parser().parse_args(["--netcfg", "x.json", "--malloc-arenas", "0", *extra])


def test_a_start_refused_by_a_check_writes_nothing(run, tmp_path, caplog):
    """A missing network description, a bad option: exit 2 and no run directory, no token."""
    a = args()
    a.netcfg = str(tmp_path / "missing.json")
    with caplog.at_level(logging.ERROR):
        assert execute(a) == 2
    assert "missing.json" in caplog.text
    assert not run.exists()
    assert execute(args("--poll-interval", "0")) == 2
    assert not run.exists()


def test_the_default_files_are_in_the_run_directory():
    files = RunFiles.of(args("--rest-port", "8181"))
    assert files.token_path.name == "token-8181" and files.state is not None
    assert files.state.name == "state-8181.json" and files.in_run_dir()
    assert RunFiles.of(args("--no-state")).state is None
    assert RunFiles.of(args("--state", "")).state is None


def test_the_token_makes_the_run_directory_private(run):
    run.mkdir()
    run.chmod(0o755)
    files = run_files(args())
    assert stat.S_IMODE(run.stat().st_mode) == 0o755  # checking changes nothing
    token = files.token()
    assert stat.S_IMODE(run.stat().st_mode) == 0o700
    assert (run / "token-8080").read_text().strip() == token
    assert stat.S_IMODE((run / "token-8080").stat().st_mode) == 0o600
    assert files.token() == token  # read again, not replaced


def test_an_open_token_file_of_ours_is_tightened(tmp_path):
    path = tmp_path / "token"
    path.write_text("secret\n")
    path.chmod(0o644)
    assert RunFiles(path, None).token() == "secret"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_a_token_file_of_another_user_is_refused(tmp_path, monkeypatch):
    path = tmp_path / "token"
    path.write_text("planted\n")
    make_foreign(path, monkeypatch)
    with pytest.raises(StartError, match=r"--token-file .*token is owned by uid \d+, not by "
                       r"this user"):
        run_files(args("--token-file", str(path)))


def test_a_run_directory_of_another_user_is_refused(run, monkeypatch):
    run.mkdir()
    make_foreign(run, monkeypatch)
    with pytest.raises(StartError, match=r"run directory .*run is owned by uid \d+"):
        run_files(args())
    # a token file elsewhere and no state: the run directory is not used, not checked
    run_files(args("--token-file", str(run.parent / "token"), "--no-state"))


def test_a_state_file_of_another_user_is_refused(tmp_path, monkeypatch):
    path = tmp_path / "state.json"
    path.write_text("{}")
    make_foreign(path, monkeypatch)
    with pytest.raises(StateError, match=r"state file .*state.json is owned by uid \d+"):
        load(path)


def test_a_state_file_that_is_a_link_is_refused(tmp_path):
    (tmp_path / "real.json").write_text("{}")
    (tmp_path / "state.json").symlink_to(tmp_path / "real.json")
    with pytest.raises(StateError, match="is a symbolic link"):
        load(tmp_path / "state.json")
