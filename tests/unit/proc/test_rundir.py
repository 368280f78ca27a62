"""src/mpsched/proc/rundir.py: the run directory is created and kept 0700, files in it 0600, and
a directory or file of another user is refused, naming it and its owner."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from mpsched.proc import rundir
from mpsched.proc.rundir import UnsafePathError

OTHER_UID = 4242


def foreign(path: Path) -> int:
    """The uid to check `path` as, so that `path` belongs to another user who is not root:
    as root, `path` is given to OTHER_UID; else it stays ours and we check as another uid."""
    me = os.geteuid()
    if me == 0:
        os.chown(path, OTHER_UID, -1, follow_symlinks=False)
        return 0
    return me + 1


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_missing_run_directory_is_created_0700(tmp_path):
    run = tmp_path / "a" / "run"
    rundir.check_dir(run)  # absent: fine, and nothing created
    assert not run.exists()
    rundir.prepare_dir(run)
    assert run.is_dir() and mode(run) == 0o700


def test_an_open_run_directory_of_ours_is_tightened(tmp_path, caplog):
    run = tmp_path / "run"
    run.mkdir()
    run.chmod(0o755)
    rundir.check_dir(run)
    assert mode(run) == 0o755  # the check changes nothing
    rundir.prepare_dir(run)
    assert mode(run) == 0o700
    assert "tightened to 0700" in caplog.text


def test_a_run_directory_of_another_user_is_refused(tmp_path):
    run = tmp_path / "run"
    run.mkdir(mode=0o755)
    uid = foreign(run)
    for check in (rundir.check_dir, rundir.prepare_dir):
        with pytest.raises(UnsafePathError, match=r"run directory .*run is owned by uid \d+"):
            check(run, uid)
    assert mode(run) == 0o755  # left as it is


def test_a_root_directory_others_can_write_is_refused(tmp_path):
    """/tmp as a run directory: root's, but every user can plant files there (as root, a
    directory of root's like it, checked as another user)."""
    shared, uid = Path("/tmp"), None
    if os.geteuid() == 0:
        shared, uid = tmp_path / "shared", OTHER_UID
        shared.mkdir()
        shared.chmod(0o1777)
    with pytest.raises(UnsafePathError, match="owned by uid 0.* and writable by others"):
        rundir.check_dir(shared, uid)


def test_a_symbolic_link_is_no_run_directory(tmp_path):
    (tmp_path / "real").mkdir()
    (tmp_path / "run").symlink_to(tmp_path / "real")
    with pytest.raises(UnsafePathError, match="is a symbolic link"):
        rundir.prepare_dir(tmp_path / "run")


def test_files_of_another_user_or_links_are_refused(tmp_path):
    token = tmp_path / "token-8080"
    assert rundir.check_file(token, "token file") is False
    token.write_text("t\n")
    assert rundir.check_file(token, "token file") is True
    uid = foreign(token)
    with pytest.raises(UnsafePathError, match=r"token file .*token-8080 is owned by uid \d+, "
                       r"not by this user \(uid \d+\) or root"):
        rundir.check_file(token, "token file", uid)
    link = tmp_path / "state.json"
    link.symlink_to(token)
    with pytest.raises(UnsafePathError, match="state file .*state.json is a symbolic link"):
        rundir.check_file(link, "state file")


def test_an_open_file_of_ours_is_tightened(tmp_path):
    token = tmp_path / "token"
    token.write_text("t\n")
    token.chmod(0o644)
    rundir.tighten_file(token, "token file")
    assert mode(token) == 0o600


def test_private_writes_are_0600_and_replace_a_planted_link(tmp_path):
    target = tmp_path / "elsewhere"
    target.write_text("keep")
    path = tmp_path / "1.json"
    path.symlink_to(target)
    rundir.write_private(path, b"{}")
    assert not path.is_symlink() and path.read_text() == "{}" and mode(path) == 0o600
    assert target.read_text() == "keep"
    (tmp_path / ".1.json.tmp").symlink_to(target)  # a planted temporary file is replaced too
    rundir.write_private(path, b"[]")
    assert path.read_text() == "[]" and target.read_text() == "keep"
