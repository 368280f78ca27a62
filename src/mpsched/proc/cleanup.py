"""Bookkeeping of what a run starts, so that nothing outlives it.

Every BMv2 process and every veth a run creates is recorded in a state file
under /run/mpsched (one per owning process; $MPSCHED_STATE_DIR elsewhere), and so is every
nftables table that keeps a
switch's Thrift port on loopback (src/mpsched/proc/firewall.py) and every directory that must not
outlive the run (a testbed's P4Runtime CA and keys, src/mpsched/proc/labtls.py). A normal exit,
an exception or Ctrl-C releases them through `Registry.close()`; if the owner itself is
killed (SIGKILL), `sweep()` (run by `mpsched cleanup` and at the start of every run)
finds state files of dead owners and removes what they list: processes by
PID (after checking the PID still runs the recorded command), interfaces and tables by
name, Mininet hosts' shells by PID, directories by path (`dirs_to_remove`: only a directory
of the user's, and never one a live owner recorded too, as a run reusing the same log
directory does).

The directory is private (mode 0700, an existing one of the user's tightened) and the state
files are written with mode 0600 (src/mpsched/proc/rundir.py): they hold every run's command
lines. A sweep acts only on state files of the user running it: one another user could have
planted is left alone (logged). `mpsched cleanup` also removes the CPU-limit cgroups of
killed runs (src/mpsched/proc/cpulimit.py).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import shutil
import signal
import stat
import subprocess
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from mpsched.proc import cpulimit, firewall, rundir

log = logging.getLogger(__name__)

STATE_DIR = Path(os.environ.get("MPSCHED_STATE_DIR", "/run/mpsched"))


def _cmdline(pid: int) -> str | None:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode().strip()
    except OSError:
        return None


def alive(pid: int) -> bool:
    """Whether a process with this PID exists (ours or not)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def kill_pid(pid: int, expect_cmd: str | None = None, grace: float = 3.0) -> bool:
    """SIGTERM, then SIGKILL after `grace` seconds; only if the command still matches."""
    cmd = _cmdline(pid)
    if cmd is None or (expect_cmd is not None and cmd != expect_cmd):
        return False
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return False
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline:
        if _cmdline(pid) is None or not alive(pid):
            return True
        time.sleep(0.05)
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)
    return True


def _raise_interrupt(signum: int, _frame: object) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


def interrupt_on_signals(*signums: int) -> None:
    """Turn the given signals (default SIGINT and SIGTERM) into KeyboardInterrupt, so a run
    unwinds through its context managers and releases what it started. Also makes SIGINT
    work when the process was started with it ignored (a shell's background job)."""
    for signum in signums or (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, _raise_interrupt)


def delete_link(name: str) -> bool:
    result = subprocess.run(
        ["ip", "link", "delete", name], capture_output=True, text=True, check=False
    )
    return result.returncode == 0


@dataclass(frozen=True)
class RecordedDir:
    """A directory a state file lists, as a sweep finds it: whether the state file's owner
    is alive, and the type bits (S_IFMT) and owner of the path's lstat (None: gone)."""

    path: Path
    owner_alive: bool
    kind: int | None = None
    uid: int | None = None


def dirs_to_remove(listing: Iterable[RecordedDir], uid: int) -> list[Path]:
    """The directories of `listing` a sweep removes: recorded by an owner that is gone, still a
    directory (not a symbolic link) owned by `uid`, and recorded by no live owner."""
    entries = list(listing)
    live = {entry.path for entry in entries if entry.owner_alive}
    out: list[Path] = []
    for entry in entries:
        if (entry.owner_alive or entry.path in live or entry.path in out
                or entry.kind != stat.S_IFDIR or entry.uid != uid):
            continue
        out.append(entry.path)
    return out


def recorded_dir(path: Path, owner_alive: bool) -> RecordedDir:
    """`path` as `dirs_to_remove` sees it (its lstat)."""
    try:
        st = path.lstat()
    except OSError:
        return RecordedDir(path, owner_alive)
    return RecordedDir(path, owner_alive, stat.S_IFMT(st.st_mode), st.st_uid)


def remove_dir(path: Path, uid: int | None = None) -> bool:
    """Remove the directory `path` and all in it if it is one (not a symbolic link) owned by
    `uid` (default: the effective one). The check and the removal go through one descriptor
    of its parent, so what was checked is what is removed (shutil.rmtree with dir_fd does
    not follow symbolic links inside)."""
    me = os.geteuid() if uid is None else uid
    try:
        parent = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return False
    try:
        st = os.stat(path.name, dir_fd=parent, follow_symlinks=False)
        if not stat.S_ISDIR(st.st_mode) or st.st_uid != me:
            log.warning("not removing %s: not a directory of this user (uid %d)", path, me)
            return False
        shutil.rmtree(path.name, dir_fd=parent)
    except OSError as error:
        log.warning("could not remove %s: %s", path, error)
        return False
    finally:
        os.close(parent)
    return True


class Registry:
    """What one owner process started; persisted to survive the owner's death."""

    def __init__(self, owner: int | None = None, state_dir: Path | None = None) -> None:
        self.owner = owner if owner is not None else os.getpid()
        self.state_dir = state_dir or STATE_DIR
        self.path = self.state_dir / f"{self.owner}.json"
        self._lock = threading.Lock()
        self.processes: dict[int, str] = {}
        self.links: list[str] = []
        self.tables: list[str] = []  # nftables tables (src/mpsched/proc/firewall.py)
        self.dirs: list[str] = []  # absolute paths of directories removed with the run
        self._dir_ready = False

    def _save(self) -> None:
        """The state file, written whole (mode 0600; the directory made private at the first
        save: rundir.UnsafePathError if it cannot be trusted)."""
        if not self._dir_ready:
            rundir.prepare_dir(self.state_dir)
            self._dir_ready = True
        data = {"owner": self.owner, "processes": self.processes, "links": self.links,
                "tables": self.tables, "dirs": self.dirs}
        rundir.write_private(self.path, json.dumps(data).encode())

    def add_process(self, pid: int, cmd: str | None = None) -> None:
        """Record a process; `cmd` is its command line as /proc shows it once it runs.

        Pass `cmd` for a process just started: its /proc entry may not show the
        new program yet. A process recorded without a command line is never
        killed by a sweep (its PID cannot be verified).
        """
        with self._lock:
            self.processes[pid] = cmd or _cmdline(pid) or ""
            self._save()

    def forget_process(self, pid: int) -> None:
        with self._lock:
            self.processes.pop(pid, None)
            self._save()

    def add_link(self, name: str) -> None:
        with self._lock:
            if name not in self.links:
                self.links.append(name)
            self._save()

    def forget_link(self, name: str) -> None:
        with self._lock:
            if name in self.links:
                self.links.remove(name)
            self._save()

    def add_table(self, name: str) -> None:
        with self._lock:
            if name not in self.tables:
                self.tables.append(name)
            self._save()

    def forget_table(self, name: str) -> None:
        with self._lock:
            if name in self.tables:
                self.tables.remove(name)
            self._save()

    def add_dir(self, path: Path) -> None:
        """Record a directory to remove with the run (before it is made: a kill at any
        point leaves it recorded)."""
        with self._lock:
            name = str(path.absolute())
            if name not in self.dirs:
                self.dirs.append(name)
            self._save()

    def close(self) -> None:
        """Stop every recorded process, delete every recorded link, table and directory."""
        with self._lock:
            for pid, cmd in list(self.processes.items()):
                kill_pid(pid, cmd or None)
            for name in self.links:
                delete_link(name)
            for name in self.tables:
                firewall.remove_table(name)
            for name in self.dirs:
                remove_dir(Path(name))
            self.processes.clear()
            self.links.clear()
            self.tables.clear()
            self.dirs.clear()
            self.path.unlink(missing_ok=True)


def _own_states(base: Path, me: int) -> list[tuple[Path, dict, bool]]:
    """(path, content, whether its owner is alive) of the state files in `base` that are
    regular files of user `me` (others are ignored, logged)."""
    out = []
    for path in sorted(base.glob("*.json")):
        if not path.stem.isdigit():  # not a registry's (<pid>.json): e.g. a controller's
            continue                 # state file, /run/mpsched/state-<port>.json
        try:
            if path.lstat().st_uid != me or not path.is_file() or path.is_symlink():
                log.warning("ignoring state file %s: not a file of this user (uid %d)", path, me)
                continue
            data = json.loads(path.read_text())
            owner = int(data["owner"])
            dirs = [Path(name) for name in data.get("dirs", [])]
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            log.warning("ignoring unreadable state file %s", path)
            continue
        out.append((path, {**data, "dirs": dirs}, alive(owner)))
    return out


def sweep(state_dir: Path | None = None) -> list[str]:
    """Clean up after owners that died without closing their registry: only the state files
    of the user running it, in a directory it can trust (else nothing, logged)."""
    base = state_dir or STATE_DIR
    done: list[str] = []
    try:
        rundir.check_dir(base)
    except rundir.UnsafePathError as error:
        log.warning("not sweeping: %s", error)
        return done
    if not base.is_dir():
        return done
    me = os.geteuid()
    states = _own_states(base, me)
    removable = set(dirs_to_remove((recorded_dir(d, live) for _, data, live in states
                                    for d in data["dirs"]), me))
    for path, data, live in states:
        if live:
            continue
        for pid, cmd in data.get("processes", {}).items():
            if cmd and kill_pid(int(pid), cmd):
                done.append(f"killed process {pid} ({cmd.split(' ')[0] if cmd else '?'})")
        for name in data.get("links", []):
            if delete_link(name):
                done.append(f"deleted link {name}")
        for name in data.get("tables", []):
            if firewall.remove_table(name):
                done.append(f"deleted nftables table {name}")
        for directory in data["dirs"]:
            if directory in removable and remove_dir(directory, me):
                removable.discard(directory)
                done.append(f"removed directory {directory}")
        path.unlink(missing_ok=True)
    return done


def build_parser() -> argparse.ArgumentParser:
    return argparse.ArgumentParser(
        prog="mpsched cleanup",
        description=f"Stop processes, delete links and nftables tables and remove directories "
        f"(a testbed's P4Runtime CA and keys) recorded in {STATE_DIR} by runs of this user "
        "whose owner process is gone, and remove the CPU-limit cgroups "
        "(mpsched-cpu-<pid>, --cpu-limit) of runs that were killed. Only what the project "
        "recorded or named is touched.",
    )


def main(argv: list[str] | None = None) -> int:
    """`mpsched cleanup`: sweep what killed runs left behind."""
    return execute(build_parser().parse_args(argv))


def execute(_args: argparse.Namespace) -> int:
    """Sweep (`mpsched cleanup` has no options); print what was removed."""
    done = sweep() + cpulimit.sweep_stale()
    for line in done:
        print(line)
    print(f"cleanup: {len(done)} item(s) removed")
    return 0
