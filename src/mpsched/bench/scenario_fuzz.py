"""The malformed-input corpus through `mpsched check`, in bounded subprocesses.

`run(directory)` writes every case of the corpus (`all_cases`: the groups of
src/mpsched/testing/scenario_fuzz_cases.py and scenario_fuzz_topology.py, documented there)
under `directory` and has a child process (``python -m mpsched.bench.scenario_fuzz --child
FILE...``) check them one after another, as ``mpsched check FILE`` would
(`mpsched.check.main`), each reported on a line of JSON. The child's address space is
limited to `MEMORY_LIMIT` (RLIMIT_AS): a loader without a bound meets a MemoryError there.
A file the child takes more than `TIMEOUT_S` over is a timeout: the child is killed and a new
one goes on with the files after it; so is a child that dies.

A case fails (`Outcome.problem`) unless the command exited 2 with a message that starts
with the file's name and contains the case's `expect` (its field), without a traceback and
without the loaders' last net (`safeload.INTERNAL`: a validator let an exception through).
`make bench-reliability`'s section `scenario` prints ``scenario_fuzz_cases=`` and
``scenario_fuzz_failures=`` (src/mpsched/bench/reliability.py);
tests/unit/bench/test_scenario_fuzz.py runs the same corpus.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import queue
import resource
import stat
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from mpsched.testing.scenario_fuzz_cases import (
    Case,
    number_cases,
    read_cases,
    scenario_cases,
    yaml_cases,
)
from mpsched.testing.scenario_fuzz_topology import (
    description_cases,
    fabric_cases,
    section_cases,
    trace_cases,
)

MEMORY_LIMIT = 1 << 30  # bytes of address space of the child
TIMEOUT_S = 20.0  # the longest one file may take
EXIT_INVALID = 2
CHILD = (sys.executable, "-m", "mpsched.bench.scenario_fuzz", "--child")  # then the files


@dataclass(frozen=True)
class Outcome:
    """One case: the command's exit status (None: it gave none), what it printed, the
    seconds it took, and why the case failed ("" if it did not)."""

    case: Case
    path: str
    status: int | None
    output: str
    seconds: float
    problem: str = ""

    @property
    def ok(self) -> bool:
        return not self.problem


def all_cases() -> list[Case]:
    return [*read_cases(), *yaml_cases(), *number_cases(), *scenario_cases(),
            *fabric_cases(), *trace_cases(), *description_cases(), *section_cases()]


def _special(path: Path, special: str, stack: contextlib.ExitStack) -> None:
    """Make `path` the `special` file of a case (`Case`); a FIFO's writer is held open on
    `stack`."""
    if special == "directory":
        path.mkdir()
    elif special in ("fifo", "fifo-writer"):
        os.mkfifo(path)
        if special == "fifo-writer":  # O_RDWR opens a FIFO without waiting for a reader
            stack.callback(os.close, os.open(path, os.O_RDWR | os.O_NONBLOCK))
    elif special == "link-fifo":
        os.mkfifo(path.with_name("fifo"))
        path.symlink_to("fifo")
    elif special == "socket":
        os.mknod(path, stat.S_IFSOCK | 0o600)  # no privilege needed, unlike a device


def materialise(cases: Sequence[Case], directory: Path,
                stack: contextlib.ExitStack) -> list[Path]:
    """Each case's file (and side files) in a directory of its own under `directory`; what
    must stay open while the files are checked (a FIFO's writer) is closed by `stack`."""
    paths = []
    for i, case in enumerate(cases):
        if case.special.startswith("/dev/"):
            paths.append(Path(case.special))
            continue
        own = directory / f"{i:03d}-{case.group}-{case.name}"
        own.mkdir(parents=True)
        path = own / case.filename
        if case.special == "missing":
            pass
        elif case.special:
            _special(path, case.special, stack)
        else:
            path.write_bytes(case.content)
        for name, content in case.extra.items():
            (own / name).write_bytes(content)
        paths.append(path)
    return paths


def verdict(case: Case, path: str, status: int | None, output: str) -> str:
    """Why the case failed ("" if it behaved): module docstring."""
    from mpsched.safeload import INTERNAL

    if "Traceback" in output:
        return "a traceback"
    if INTERNAL in output:
        return "an exception a validator let through"
    if status == 0:
        return "accepted"
    if status != EXIT_INVALID:
        return f"exit status {status}"
    if not output.startswith(f"{path}: "):
        return "the message does not start with the file's name"
    if case.expect not in output:
        return f"the message lacks {case.expect!r}"
    return ""


# ---- the child ---------------------------------------------------------------------------


def _check_one(path: str) -> dict[str, Any]:
    from mpsched import check

    out = io.StringIO()
    start = time.monotonic()
    status: int | None
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            status = check.main([path])
    except BaseException:
        status = None
        out.write(traceback.format_exc(limit=3))
    return {"file": path, "status": status, "output": out.getvalue(),
            "seconds": round(time.monotonic() - start, 3),
            "maxrss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}


def child(files: Sequence[str]) -> int:
    for path in files:
        print(json.dumps(_check_one(path)), flush=True)
    return 0


# ---- the parent --------------------------------------------------------------------------


def _limit(memory: int) -> None:
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))


def _reader(stream: IO[str], lines: queue.Queue) -> None:
    for line in stream:
        lines.put(line)
    lines.put(None)


def _start(files: Sequence[str], memory: int, errors: IO[bytes],
           command: Sequence[str]) -> subprocess.Popen:
    return subprocess.Popen(
        [*command, *files],
        stdout=subprocess.PIPE, stderr=errors, text=True,
        preexec_fn=lambda: _limit(memory),
    )


def check_all(files: Sequence[str], memory: int = MEMORY_LIMIT, timeout_s: float = TIMEOUT_S,
              command: Sequence[str] = CHILD) -> list[dict[str, Any]]:
    """A child's report of each of `files` (in order); a file the child hung on or died
    over is reported with status None and what happened. The child is `command` followed
    by the files (a test gives one that hangs)."""
    reports: list[dict[str, Any]] = []
    pending = list(files)
    while pending:
        with tempfile.TemporaryFile() as errors:
            proc = _start(pending, memory, errors, command)
            assert proc.stdout is not None
            lines: queue.Queue = queue.Queue()
            threading.Thread(target=_reader, args=(proc.stdout, lines), daemon=True).start()
            while pending:
                try:
                    line = lines.get(timeout=timeout_s)
                except queue.Empty:
                    proc.kill()
                    reports.append({"file": pending.pop(0), "status": None,
                                    "output": f"timeout: more than {timeout_s:g} s",
                                    "seconds": timeout_s})
                    break
                if line is None:
                    proc.wait()
                    errors.seek(0)
                    tail = errors.read()[-2000:].decode(errors="replace")
                    reports.append({"file": pending.pop(0), "status": None, "seconds": 0.0,
                                    "output": f"the child died ({proc.returncode}): {tail}"})
                    break
                reports.append(json.loads(line))
                pending.pop(0)
            proc.wait()
    return reports


def run(directory: Path, cases: Sequence[Case] | None = None, memory: int = MEMORY_LIMIT,
        timeout_s: float = TIMEOUT_S) -> list[Outcome]:
    """Every case (default: `all_cases`) written under `directory` and checked."""
    cases = list(all_cases() if cases is None else cases)
    with contextlib.ExitStack() as stack:
        paths = [str(p) for p in materialise(cases, directory, stack)]
        reports = check_all(paths, memory, timeout_s)
    return [Outcome(case, path, r["status"], r["output"], r["seconds"],
                    verdict(case, path, r["status"], r["output"]))
            for case, path, r in zip(cases, paths, reports, strict=True)]


def summary(outcomes: Sequence[Outcome]) -> tuple[list[str], dict[str, int]]:
    """(notes, the figures) of a run: the failed cases and the slowest one; the cases and
    the failures."""
    notes = [f"scenario fuzz case failed: {o.case.id} ({o.path}): {o.problem}: "
             f"{o.output.strip()[:300]}" for o in outcomes if not o.ok]
    slowest = max(outcomes, key=lambda o: o.seconds, default=None)
    if slowest is not None:
        notes.append(f"scenario fuzz: slowest case {slowest.case.id}, {slowest.seconds:.2f} s")
    return notes, {"scenario_fuzz_cases": len(outcomes),
                   "scenario_fuzz_failures": sum(1 for o in outcomes if not o.ok)}


def bench() -> tuple[list[str], dict[str, int]]:
    """The whole corpus in a temporary directory: `summary` of it."""
    with tempfile.TemporaryDirectory(prefix="scenario-fuzz-") as tmp:
        return summary(run(Path(tmp)))


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="mpsched bench scenario-fuzz",
                                description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--child", nargs="+", metavar="FILE", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        return child(args.child)
    notes, figures = bench()
    print("\n".join([*notes, *(f"{key}={value}" for key, value in figures.items())]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
