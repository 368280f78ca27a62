"""The testbed's CPU limit: `--cpu-limit P` (`make bench-... CPU_LIMIT=P`) gives the whole
testbed P % of the machine, so that a fast machine stands in for a slower one (P=50: a machine
half as fast).

The bench (or `mpsched run|compare`) creates a cgroup with a CFS bandwidth quota of P % of
the cores it may use (`cgroups.quota_for`: a 5 ms period, so nothing stalls for longer than
a few ms) and moves itself into it before it starts anything: every process it starts
afterwards (Mininet's hosts, BMv2, the link emulators, the controller, the traffic tools)
inherits the cgroup, and all of them together get at most the quota. A quota, not a
competing load: a load that burns (100 - P) % would also take the caches and memory bandwidth,
and its share would depend on the scheduler's view of it, where a quota is enforced by the
kernel every period. What the quota does not cover: the kernel's packet work in softirq
context (veth transmit, IP and TCP in the hosts' namespaces) is charged to whatever task the
core happened to be running, a testbed process after its own system call, ksoftirqd (in the
root cgroup) or another program otherwise: part of the testbed's packet work stays outside
the limit.

The group is created at the root of the hierarchy (cgroup v2 where it has the cpu controller
enabled for children, else cgroup v1's cpu and cpuacct: `cgroups.choose_layout`), named
`mpsched-cpu-<pid>`; at the process's exit (normal, an exception, Ctrl-C, SIGTERM) every
process still in it moves back to the cgroup the bench came from and the group is removed.
A killed bench leaves it: `mpsched cleanup` (`sweep_stale`) removes the groups whose owner is
gone. The limit is announced to the processes inside in the environment (`ENV`): the CPU
sampler (src/mpsched/lab/cpu_sampler.py) measures the machine's idle against it, and a child
given the same `--cpu-limit` again stays in its parent's group (limits do not nest).
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import json
import logging
import math
import os
import signal
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

from mpsched.proc.cgroups import (
    GROUP_PREFIX,
    CgroupParseError,
    CpuLimit,
    CpuLimitError,
    Layout,
    Throttling,
    choose_layout,
    owner_of,
    parse_limit_pct,
    parse_mounts,
    parse_proc_cgroup,
    parse_throttling,
    parse_usage_s,
    quota_for,
)

log = logging.getLogger(__name__)

ENV = "MPSCHED_CPU_LIMIT"
MOUNTS = Path("/proc/self/mounts")
RMDIR_TRIES = 20  # 50 ms apart: processes may still be leaving (exiting, or moved out)


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""


def detect_layout() -> Layout:
    """Where a limit can go on this machine (`cgroups.choose_layout`); CpuLimitError says what
    is missing."""
    return choose_layout(parse_mounts(_read(MOUNTS)), _read)


def usable_cores() -> int:
    """The cores this process (and so the testbed it starts) may run on: a limit is a share of
    them, as the CPU sampler measures a run on them (`taskset -c 0` makes it one core)."""
    return len(os.sched_getaffinity(0))


@dataclass(frozen=True)
class ActiveLimit:
    """The limit this process runs under (`active`): its share and its group's usage file."""

    limit: CpuLimit
    usage: Path

    def usage_s(self) -> float:
        """CPU time the group's processes have used, in seconds (OSError if it is gone)."""
        return parse_usage_s(self.usage, self.usage.read_text())


def active() -> ActiveLimit | None:
    """The limit announced in the environment (`ENV`) by the bench that started this process,
    None without one; a malformed value is logged and ignored (a run is then measured against
    the whole machine)."""
    text = os.environ.get(ENV)
    if not text:
        return None
    try:
        data = json.loads(text)
        found = ActiveLimit(CpuLimit(float(data["pct"]), int(data["ncpus"])), Path(data["usage"]))
    except (ValueError, KeyError, TypeError):
        log.warning("%s: malformed (%r); measuring against the whole machine", ENV, text)
        return None
    if not found.usage.exists():
        log.warning("%s: %s is gone; measuring against the whole machine", ENV, found.usage)
        return None
    return found


class LimitGroup:
    """A cgroup holding `limit`: `start()` creates it and moves this process in, `release()`
    (idempotent) moves every process in it back where this one came from and removes it; a
    context manager does both."""

    def __init__(self, limit: CpuLimit, layout: Layout | None = None) -> None:
        self.limit = limit
        self.layout = layout or detect_layout()
        self.owner = os.getpid()
        self.name = f"{GROUP_PREFIX}{self.owner}"
        self.quota = quota_for(limit)
        self.dirs = self.layout.dirs(self.name)
        self.home: dict[Path, Path] = {}  # group directory -> the cgroup this process left
        self._announced = False

    def describe(self) -> str:
        kind = f"cgroup v{self.layout.version}"
        return (f"{self.limit.pct:g} % of {self.limit.ncpus} core(s): {self.quota.quota_us} us of "
                f"CPU per {self.quota.period_us} us ({kind}, {', '.join(map(str, self.dirs))})")

    def start(self) -> None:
        """Create the group, set its quota, move this process in; CpuLimitError (with nothing
        left behind) when any step fails."""
        try:
            for d in self.dirs:
                _mkdir(d)
            self._set_quota()
            here = parse_proc_cgroup(_read(Path("/proc/self/cgroup")))
            for d in self.dirs:
                root = d.parent
                rel = here.get(self.layout.hierarchy_key(root), "/").lstrip("/")
                self.home[d] = root / rel if rel and (root / rel).is_dir() else root
            for d in self.dirs:
                _write(d / "cgroup.procs", str(os.getpid()))
        except (CpuLimitError, CgroupParseError) as exc:
            self.release()
            raise CpuLimitError(str(exc)) from None
        os.environ[ENV] = json.dumps({"pct": self.limit.pct, "ncpus": self.limit.ncpus,
                                      "usage": str(self.layout.usage_file(self.name))})
        self._announced = True

    def _set_quota(self) -> None:
        q, quota_dir = self.quota, self.layout.quota_root / self.name
        if self.layout.version == 2:
            _write(quota_dir / "cpu.max", q.cpu_max())
        else:
            _write(quota_dir / "cpu.cfs_period_us", str(q.period_us))
            _write(quota_dir / "cpu.cfs_quota_us", str(q.quota_us))

    def throttling(self) -> Throttling | None:
        """How often the quota held the group back so far; None when it cannot be read."""
        try:
            return parse_throttling((self.layout.quota_root / self.name / "cpu.stat").read_text())
        except (OSError, CgroupParseError) as exc:
            log.warning("the CPU limit's throttling: %s", exc)
            return None

    def usage_s(self) -> float:
        """CPU time the group's processes have used, in seconds."""
        path = self.layout.usage_file(self.name)
        return parse_usage_s(path, path.read_text())

    def release(self) -> None:
        """Every process in the group back to the cgroup this process came from (the
        hierarchy's root if that is gone), then the group removed; a group that stays (a
        process that cannot be moved) is logged: `mpsched cleanup` removes it later. Only in
        the process that started it: a forked child inherits the exit handler, not the group."""
        if os.getpid() != self.owner:
            return
        if self._announced:
            os.environ.pop(ENV, None)
            self._announced = False
        for d in self.dirs:
            if d.is_dir():
                _empty_and_remove(d, self.home.get(d, d.parent))

    def __enter__(self) -> LimitGroup:
        self.start()
        return self

    def __exit__(self, et: type[BaseException] | None, e: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.release()


def _mkdir(d: Path) -> None:
    try:
        d.mkdir()
    except FileExistsError:  # a killed run's, whose pid this process now has
        _empty_and_remove(d, d.parent)
        _mkdir_once(d)
    except PermissionError:
        raise CpuLimitError(f"cannot create the cgroup {d}: permission denied (run as "
                            "root)") from None
    except OSError as exc:
        raise CpuLimitError(f"cannot create the cgroup {d}: {exc.strerror}") from None


def _mkdir_once(d: Path) -> None:
    try:
        d.mkdir()
    except OSError as exc:
        raise CpuLimitError(f"cannot create the cgroup {d}: {exc.strerror}") from None


def _write(path: Path, text: str) -> None:
    try:
        path.write_text(text)
    except OSError as exc:
        raise CpuLimitError(f"cannot write {text!r} to {path}: {exc.strerror}") from None


def _empty_and_remove(d: Path, home: Path) -> bool:
    """Move the processes of the cgroup `d` to `home` and remove `d`; whether it is gone."""
    for _ in range(RMDIR_TRIES):
        for pid in _read(d / "cgroup.procs").split():
            with contextlib.suppress(OSError):  # exited meanwhile (ESRCH), or a zombie
                (home / "cgroup.procs").write_text(pid)
        try:
            d.rmdir()
            return True
        except FileNotFoundError:
            return True
        except OSError:
            time.sleep(0.05)
    log.warning("cgroup %s stays (processes %s); `make cleanup` removes it later", d,
                " ".join(_read(d / "cgroup.procs").split()) or "none listed")
    return False


def sweep_stale() -> list[str]:
    """Remove the groups (`GROUP_PREFIX` + pid) whose owner process is gone, their processes
    moved to the hierarchy's root; what was removed. Nothing where no cgroup cpu controller
    is mounted."""
    try:
        layout = detect_layout()
    except CpuLimitError:
        return []
    done = []
    for root in dict.fromkeys((layout.quota_root, layout.usage_root)):
        for d in sorted(root.glob(f"{GROUP_PREFIX}*")):
            owner = owner_of(d.name)
            if owner is None or not d.is_dir() or _pid_alive(owner):
                continue
            if _empty_and_remove(d, root):
                done.append(f"removed cgroup {d}")
    return done


def _pid_alive(pid: int) -> bool:
    return Path(f"/proc/{pid}").exists()


# ---- the benches' command line ---------------------------------------------------------------


def _pct(text: str) -> float:
    try:
        return parse_limit_pct(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def add_option(parser: argparse.ArgumentParser) -> None:
    """`--cpu-limit P` (`make ... CPU_LIMIT=P`)."""
    parser.add_argument(
        "--cpu-limit", type=_pct, default=None, metavar="P",
        help="give the whole testbed (switches, link emulators, hosts, controller, traffic) P "
             "%% of the cores this process may use, a cgroup CPU quota (root; docs/"
             "experiments.md, \"A slower machine\"); idle and cpu_bound are then against it",
    )


def confine(pct: float | None, prog: str) -> int | None:
    """Put this process, and so all it starts from now on, under `pct` % of its cores until
    it exits; None to go on (also without `pct`), or the exit status 2 after printing what is
    missing. Under a parent's limit already (`active`), the same `pct` is kept, another one
    refused."""
    if pct is None:
        return None
    current = active()
    if current is not None:
        if math.isclose(current.limit.pct, pct):
            log.info("already under a %g %% limit (%s)", pct, current.usage.parent)
            return None
        print(f"{prog}: --cpu-limit {pct:g}: this process already runs under a "
              f"{current.limit.pct:g} % limit ({ENV}); limits do not nest", file=sys.stderr)
        return 2
    try:
        group = LimitGroup(CpuLimit(pct, usable_cores()))
        group.start()
    except (CpuLimitError, ValueError) as exc:
        print(f"{prog}: --cpu-limit {pct:g}: {exc}", file=sys.stderr)
        return 2
    atexit.register(_finish, group, prog)
    if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:  # unwind, so that atexit runs
        signal.signal(signal.SIGTERM, _interrupt)
    print(f"{prog}: testbed limited to {group.describe()}", file=sys.stderr, flush=True)
    return None


def _finish(group: LimitGroup, prog: str) -> None:
    """At exit: how often the quota held the testbed back, then the group removed."""
    if os.getpid() != group.owner:
        return
    t = group.throttling()
    group.release()
    if t is not None:
        print(f"{prog}: the CPU limit held the testbed back in {t.throttled} of {t.periods} "
              f"periods of {group.quota.period_us} us ({t.throttled_s:.2f} s of waiting summed "
              "over the cores)", file=sys.stderr, flush=True)


def _interrupt(signum: int, _frame: object) -> None:
    raise KeyboardInterrupt(f"signal {signum}")
