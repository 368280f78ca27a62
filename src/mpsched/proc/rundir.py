"""A private run directory and the files in it: who may have put them there.

The run directory (/run/mpsched, or $MPSCHED_RUN_DIR and $MPSCHED_STATE_DIR) holds the
controller's REST write token and its saved intent, and the run registry's files (every
process a run started, with its command line). Whoever can write there can plant a token the
controller would then serve writes with, an intent it would restore, or a registry entry a
later `mpsched cleanup` would act on; whoever can read there can read the token. So:

- `prepare_dir` creates the directory with mode 0700, and tightens an existing one the user
  owns to 0700; one owned by another user (or a root-owned one others can write to) is refused;
- `check_dir` is its read-only half, for a directory about to be read from (nothing is
  created or changed before the caller's arguments are validated);
- `check_file` refuses a file that is not a regular file (a symbolic link, say) or is owned
  by neither the running user nor root; `tighten_file` takes group and other access away from
  one the user owns;
- `write_private` writes a file atomically with mode 0600, never through a symbolic link.

Every check takes the user's uid as `uid` (default: the effective one), for the tests.
"""

from __future__ import annotations

import contextlib
import logging
import os
import stat
from pathlib import Path

log = logging.getLogger(__name__)

# the run directory, unless $MPSCHED_RUN_DIR names another
DEFAULT_RUN_DIR = "/run/mpsched"
RUN_DIR_ENV = "MPSCHED_RUN_DIR"

DIR_MODE = 0o700
FILE_MODE = 0o600
ROOT_UID = 0
OPEN_TO_OTHERS = 0o077  # group and other permission bits
WRITABLE_BY_OTHERS = stat.S_IWGRP | stat.S_IWOTH


class UnsafePathError(PermissionError):
    """A run directory or a file in it the running user cannot trust; the message says why
    and what to do. A PermissionError, so that callers reporting an OSError report it."""


def _uid(uid: int | None) -> int:
    return os.geteuid() if uid is None else uid


def _owner(st: os.stat_result) -> str:
    try:
        import pwd

        return f"uid {st.st_uid} ({pwd.getpwuid(st.st_uid).pw_name})"
    except (ImportError, KeyError):
        return f"uid {st.st_uid}"


def _lstat(path: Path) -> os.stat_result | None:
    try:
        return path.lstat()
    except FileNotFoundError:
        return None


def check_dir(path: Path, uid: int | None = None) -> None:
    """UnsafePathError unless `path` is absent, or a directory (not a symbolic link) owned by
    the user, or owned by root and writable by nobody else. Changes nothing."""
    me = _uid(uid)
    st = _lstat(path)
    if st is None:
        return
    if not stat.S_ISDIR(st.st_mode):
        kind = "a symbolic link" if stat.S_ISLNK(st.st_mode) else "not a directory"
        raise UnsafePathError(f"run directory {path} is {kind}: remove it, or choose another "
                              "one ($MPSCHED_RUN_DIR)")
    if st.st_uid == me:
        return
    if st.st_uid == ROOT_UID and not st.st_mode & WRITABLE_BY_OTHERS:
        return
    raise UnsafePathError(
        f"run directory {path} is owned by {_owner(st)}"
        + (" and writable by others" if st.st_uid == ROOT_UID else "")
        + f", not by this user (uid {me}): another user could plant or read the files in it; "
        "remove it, or choose a directory of your own ($MPSCHED_RUN_DIR)")


def prepare_dir(path: Path, uid: int | None = None) -> None:
    """`path` as a private directory: created with mode 0700 (its missing parents with the
    default mode), or, existing and the user's own, tightened to 0700 (logged).
    UnsafePathError as `check_dir`; OSError when it cannot be created or changed."""
    me = _uid(uid)
    check_dir(path, me)
    st = _lstat(path)
    if st is None:
        path.parent.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(FileExistsError):  # created by another process meanwhile
            path.mkdir(mode=DIR_MODE)
        check_dir(path, me)
        st = path.lstat()
    if st.st_uid == me and stat.S_IMODE(st.st_mode) != DIR_MODE:
        if stat.S_IMODE(st.st_mode) & OPEN_TO_OTHERS:
            log.warning("run directory %s was mode %04o: tightened to %04o", path,
                        stat.S_IMODE(st.st_mode), DIR_MODE)
        path.chmod(DIR_MODE)


def check_file(path: Path, what: str, uid: int | None = None) -> bool:
    """Whether `path` exists; UnsafePathError (`what` names the file, e.g. "token file")
    unless it is a regular file owned by the user or by root."""
    me = _uid(uid)
    st = _lstat(path)
    if st is None:
        return False
    if not stat.S_ISREG(st.st_mode):
        kind = "a symbolic link" if stat.S_ISLNK(st.st_mode) else "not a regular file"
        raise UnsafePathError(f"{what} {path} is {kind}: remove it")
    if st.st_uid not in (me, ROOT_UID):
        raise UnsafePathError(
            f"{what} {path} is owned by {_owner(st)}, not by this user (uid {me}) or root: "
            "another user may have planted it; remove it if it is not yours")
    return True


def tighten_file(path: Path, what: str, uid: int | None = None) -> None:
    """Take group and other access away from `path` if the user owns it (logged)."""
    st = _lstat(path)
    if st is None or st.st_uid != _uid(uid) or not st.st_mode & OPEN_TO_OTHERS:
        return
    log.warning("%s %s was mode %04o: tightened to %04o", what, path,
                stat.S_IMODE(st.st_mode), FILE_MODE)
    path.chmod(FILE_MODE)


def write_private(path: Path, data: bytes) -> None:
    """Write `data` to `path` with mode 0600: a temporary file beside it (created, never
    followed if a link), then renamed over it, so that a reader sees the old file or the
    new one."""
    tmp = path.with_name(f".{path.name}.tmp")
    with contextlib.suppress(FileNotFoundError):
        tmp.unlink()
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, FILE_MODE)
    try:
        with os.fdopen(fd, "wb") as out:
            os.fchmod(out.fileno(), FILE_MODE)
            out.write(data)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
        raise
