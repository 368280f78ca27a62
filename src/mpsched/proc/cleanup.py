"""Bookkeeping of what a run starts, so that nothing outlives it.

Every BMv2 process and every veth a run creates is recorded in a state file
under /run/mpsched (one per owning process; $MPSCHED_STATE_DIR elsewhere), and so is every
nftables table that keeps a
switch's Thrift port on loopback (src/mpsched/proc/firewall.py). A normal exit, an exception or
Ctrl-C releases them through `Registry.close()`; if the owner itself is
killed, `sweep()` (run by `mpsched cleanup` and at the start of every run)
finds state files of dead owners and removes what they list: processes by
PID (after checking the PID still runs the recorded command), interfaces and tables by
name, Mininet hosts' shells by PID.

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
import signal
import subprocess
import threading
import time
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
        self._dir_ready = False

    def _save(self) -> None:
        """The state file, written whole (mode 0600; the directory made private at the first
        save: rundir.UnsafePathError if it cannot be trusted)."""
        if not self._dir_ready:
            rundir.prepare_dir(self.state_dir)
            self._dir_ready = True
        data = {"owner": self.owner, "processes": self.processes, "links": self.links,
                "tables": self.tables}
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

    def close(self) -> None:
        """Stop every recorded process, delete every recorded link and table."""
        with self._lock:
            for pid, cmd in list(self.processes.items()):
                kill_pid(pid, cmd or None)
            for name in self.links:
                delete_link(name)
            for name in self.tables:
                firewall.remove_table(name)
            self.processes.clear()
            self.links.clear()
            self.tables.clear()
            self.path.unlink(missing_ok=True)


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
    for path in sorted(base.glob("*.json")):
        try:
            if path.lstat().st_uid != me or not path.is_file() or path.is_symlink():
                log.warning("ignoring state file %s: not a file of this user (uid %d)", path, me)
                continue
            data = json.loads(path.read_text())
            owner = int(data["owner"])
        except (OSError, ValueError, KeyError, TypeError):
            log.warning("ignoring unreadable state file %s", path)
            continue
        if alive(owner):
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
        path.unlink(missing_ok=True)
    return done


def build_parser() -> argparse.ArgumentParser:
    return argparse.ArgumentParser(
        prog="mpsched cleanup",
        description=f"Stop processes, delete links and nftables tables recorded in {STATE_DIR} "
        "by runs whose owner process is gone, and remove the CPU-limit cgroups "
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
