"""The pure part of the testbed's CPU limit (`cpulimit.py` does the file system): the kernel's
cgroup files parsed, the CFS bandwidth quota computed, and which cgroup hierarchy can hold the
limit.

A limit of P % of the machine is a CFS bandwidth quota (Documentation/scheduler/
sched-bwc.rst): the cgroup's processes together may run `quota` µs of CPU time in every
`period` µs, quota = P / 100 x ncpus x period. The period is short (`PERIOD_US`, 5 ms, the
kernel's default bandwidth slice) so that a throttled testbed waits at most a few ms for its
next period, instead of the hundreds of ms a 100 ms period (the kernel's default) could leave
it stalled; a period is lengthened only where the quota would fall below the kernel's 1 ms
minimum (`MIN_QUOTA_US`). Two interfaces (Documentation/admin-guide/cgroup-v2.rst and
cgroup-v1/): cgroup v2's ``cpu.max`` ("quota period") and ``cpu.stat`` (``usage_usec``), or
cgroup v1's ``cpu.cfs_quota_us`` / ``cpu.cfs_period_us`` with the usage in the cpuacct
controller's ``cpuacct.usage`` (ns; the same directory when cpu and cpuacct are mounted
together, another hierarchy otherwise).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

PERIOD_US = 5_000
MIN_QUOTA_US = 1_000  # the kernel refuses a smaller quota (EINVAL)
MAX_PERIOD_US = 1_000_000  # and a longer period
GROUP_PREFIX = "mpsched-cpu-"  # + the owner's pid: `make cleanup` finds a killed run's
V2_USAGE = "cpu.stat"
V1_USAGE = "cpuacct.usage"


class CgroupParseError(ValueError):
    """A cgroup or /proc file that does not have the documented format."""


class CpuLimitError(RuntimeError):
    """The CPU limit cannot be set here; the message says what is missing."""


@dataclass(frozen=True)
class CpuLimit:
    """A limit of `pct` % of `ncpus` cores (the cores the testbed may use)."""

    pct: float
    ncpus: int

    @property
    def cores(self) -> float:
        """The CPU the limit allows, in cores."""
        return self.pct / 100.0 * self.ncpus


@dataclass(frozen=True)
class Quota:
    quota_us: int
    period_us: int

    def cpu_max(self) -> str:
        """The cgroup v2 ``cpu.max`` line."""
        return f"{self.quota_us} {self.period_us}"


def parse_limit_pct(text: str) -> float:
    """A ``--cpu-limit`` value: a percentage in (0, 100]; ValueError saying so otherwise."""
    try:
        pct = float(text)
    except ValueError:
        raise ValueError(f"not a number: {text!r}") from None
    if not (math.isfinite(pct) and 0 < pct <= 100):
        raise ValueError(f"must be a percentage of the machine in (0, 100], got {text!r}")
    return pct


def quota_for(limit: CpuLimit, period_us: int = PERIOD_US) -> Quota:
    """The quota of `limit` per `period_us`; the period lengthened (up to `MAX_PERIOD_US`)
    where the quota would be under `MIN_QUOTA_US`."""
    if limit.ncpus < 1 or not 0 < limit.pct <= 100:
        raise ValueError(f"no quota for {limit}")
    cores = limit.cores
    period = max(period_us, math.ceil(MIN_QUOTA_US / cores))
    if period > MAX_PERIOD_US:
        raise ValueError(f"{limit.pct:g} % of {limit.ncpus} core(s) is under the kernel's "
                         f"smallest quota ({MIN_QUOTA_US} us per {MAX_PERIOD_US} us)")
    return Quota(quota_us=max(MIN_QUOTA_US, round(cores * period)), period_us=period)


def parse_cpu_max(text: str) -> tuple[int | None, int]:
    """cgroup v2 ``cpu.max``: (quota µs, None for ``max``, period µs)."""
    parts = text.split()
    if len(parts) != 2:
        raise CgroupParseError(f"cpu.max: expected 'quota period', got {text.strip()!r}")
    try:
        return (None if parts[0] == "max" else int(parts[0])), int(parts[1])
    except ValueError:
        raise CgroupParseError(f"cpu.max: non-numeric {text.strip()!r}") from None


def parse_cpu_stat_usage_s(text: str) -> float:
    """cgroup v2 ``cpu.stat``: the ``usage_usec`` line, in seconds."""
    for line in text.splitlines():
        key, _, value = line.partition(" ")
        if key == "usage_usec":
            try:
                return int(value) / 1e6
            except ValueError:
                raise CgroupParseError(f"cpu.stat: non-numeric {line!r}") from None
    raise CgroupParseError("cpu.stat: no usage_usec line")


def parse_cpuacct_usage_s(text: str) -> float:
    """cgroup v1 ``cpuacct.usage`` (ns), in seconds."""
    try:
        return int(text.strip()) / 1e9
    except ValueError:
        raise CgroupParseError(f"cpuacct.usage: not a number: {text.strip()!r}") from None


def parse_usage_s(path: Path, text: str) -> float:
    """A usage file's text, by its name (`V2_USAGE` or `V1_USAGE`), in seconds."""
    if path.name == V2_USAGE:
        return parse_cpu_stat_usage_s(text)
    if path.name == V1_USAGE:
        return parse_cpuacct_usage_s(text)
    raise CgroupParseError(f"{path}: not {V2_USAGE} or {V1_USAGE}")


@dataclass(frozen=True)
class Throttling:
    """How often the quota held the group back: periods it ran in, periods it ran out of
    quota in, and the time its run queues waited for the next period, summed over the cores."""

    periods: int
    throttled: int
    throttled_s: float


def parse_throttling(text: str) -> Throttling:
    """The quota's ``cpu.stat``: ``nr_periods``, ``nr_throttled`` and ``throttled_usec``
    (cgroup v2) or ``throttled_time`` (ns, cgroup v1)."""
    values: dict[str, int] = {}
    for line in text.splitlines():
        key, _, value = line.partition(" ")
        try:
            values[key] = int(value)
        except ValueError:
            raise CgroupParseError(f"cpu.stat: non-numeric {line!r}") from None
    try:
        waited = (values["throttled_usec"] / 1e6 if "throttled_usec" in values
                  else values["throttled_time"] / 1e9)
        return Throttling(values["nr_periods"], values["nr_throttled"], waited)
    except KeyError as missing:
        raise CgroupParseError(f"cpu.stat: no {missing.args[0]} line") from None


def parse_proc_cgroup(text: str) -> dict[str, str]:
    """/proc/<pid>/cgroup: the process's cgroup per v1 controller (``cpu``, ``cpuacct``, ...)
    and, under the key "", its cgroup v2 path. A v1 hierarchy of several controllers
    (``4:cpu,cpuacct:/x``) gives each of them."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        if not line.strip():
            continue
        parts = line.split(":", 2)
        if len(parts) != 3:
            raise CgroupParseError(f"/proc/<pid>/cgroup: malformed line {line!r}")
        _, controllers, path = parts
        for name in controllers.split(",") if controllers else [""]:
            out[name] = path
    return out


@dataclass(frozen=True)
class Mount:
    """A cgroup file system: where, its version, and (v1) the controllers it holds."""

    path: Path
    version: int
    controllers: frozenset[str] = frozenset()


def parse_mounts(text: str) -> list[Mount]:
    """The cgroup (v1) and cgroup2 mounts of /proc/self/mounts (proc(5)); a v1 mount's
    controllers are its options but the mount flags and ``name=`` (a named hierarchy)."""
    flags = {"rw", "ro", "relatime", "noatime", "nosuid", "nodev", "noexec", "nsdelegate",
             "memory_recursiveprot", "clone_children", "noprefix"}
    out = []
    for line in text.splitlines():
        fields = line.split()
        if len(fields) < 4 or fields[2] not in ("cgroup", "cgroup2"):
            continue
        path = Path(fields[1].replace("\\040", " "))
        if fields[2] == "cgroup2":
            out.append(Mount(path, 2))
            continue
        opts = {o for o in fields[3].split(",") if o not in flags and "=" not in o}
        out.append(Mount(path, 1, frozenset(opts)))
    return out


@dataclass(frozen=True)
class Layout:
    """Where a limit goes: `quota_root`, the hierarchy whose cpu controller enforces it, and
    `usage_root`, the one whose usage file measures it (the same but for split v1
    cpu/cpuacct hierarchies). The group is created right under each root."""

    version: int
    quota_root: Path
    usage_root: Path

    def dirs(self, name: str) -> tuple[Path, ...]:
        """The group's directories (one, or cpu's and cpuacct's)."""
        roots = dict.fromkeys((self.quota_root, self.usage_root))
        return tuple(root / name for root in roots)

    def usage_file(self, name: str) -> Path:
        return self.usage_root / name / (V2_USAGE if self.version == 2 else V1_USAGE)

    def hierarchy_key(self, root: Path) -> str:
        """The /proc/<pid>/cgroup key (`parse_proc_cgroup`) of the hierarchy at `root`."""
        if self.version == 2:
            return ""
        return "cpu" if root == self.quota_root else "cpuacct"


def choose_layout(mounts: list[Mount], read: Callable[[Path], str]) -> Layout:
    """cgroup v2 where a cgroup2 mount has the cpu controller enabled for its children (its
    ``cgroup.subtree_control``), else cgroup v1's cpu and cpuacct hierarchies. `read` reads a
    file ("" when it is missing). CpuLimitError says what is missing when neither works."""
    v2_blocked = None
    for m in mounts:
        if m.version == 2 and "cpu" in read(m.path / "cgroup.controllers").split():
            if "cpu" in read(m.path / "cgroup.subtree_control").split():
                return Layout(2, m.path, m.path)
            v2_blocked = (
                f"cgroup v2 at {m.path} has the cpu controller but does not enable it for its "
                f"children: `echo +cpu > {m.path / 'cgroup.subtree_control'}` (root) enables it"
            )
    cpu = next((m.path for m in mounts if m.version == 1 and "cpu" in m.controllers), None)
    acct = next((m.path for m in mounts if m.version == 1 and "cpuacct" in m.controllers), None)
    if cpu is not None and acct is not None:
        return Layout(1, cpu, acct)
    if v2_blocked is not None:
        raise CpuLimitError(v2_blocked)
    if cpu is not None:
        raise CpuLimitError(f"cgroup v1 cpu controller at {cpu}, but no cpuacct hierarchy to "
                            "measure the testbed's CPU with")
    raise CpuLimitError("no cgroup cpu controller: neither a cgroup v2 mount with the cpu "
                        "controller (its cgroup.controllers) nor a cgroup v1 cpu hierarchy "
                        "(/proc/self/mounts)")


def owner_of(name: str) -> int | None:
    """The pid a group of ours is named after (`GROUP_PREFIX` + pid); None for another name."""
    if not name.startswith(GROUP_PREFIX):
        return None
    rest = name[len(GROUP_PREFIX):]
    return int(rest) if rest.isdigit() else None
