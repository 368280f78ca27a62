"""The CPU limit's pure part (src/mpsched/proc/cgroups.py): the quota, the kernel's cgroup files
parsed, and which hierarchy holds the limit."""

from __future__ import annotations

from pathlib import Path

import pytest

from mpsched.proc import cgroups
from mpsched.proc.cgroups import (
    CgroupParseError,
    CpuLimit,
    CpuLimitError,
    Layout,
    Mount,
    Quota,
    choose_layout,
    quota_for,
)


@pytest.mark.parametrize(
    ("pct", "ncpus", "quota"),
    [
        (50, 2, Quota(5_000, 5_000)),  # a machine half as fast: one core's worth per period
        (100, 2, Quota(10_000, 5_000)),
        (20, 1, Quota(1_000, 5_000)),
        (25, 4, Quota(5_000, 5_000)),
        (10, 1, Quota(1_000, 10_000)),  # 500 us would be under the kernel's 1 ms: longer period
        (5, 2, Quota(1_000, 10_000)),
        (33.3, 2, Quota(3_330, 5_000)),
    ],
)
def test_quota_is_the_share_of_the_cores_per_short_period(pct, ncpus, quota):
    got = quota_for(CpuLimit(pct, ncpus))
    assert got == quota
    assert got.quota_us >= cgroups.MIN_QUOTA_US
    assert got.quota_us / got.period_us == pytest.approx(pct / 100 * ncpus, rel=1e-3)


def test_quota_too_small_for_the_kernel_is_refused():
    with pytest.raises(ValueError, match="smallest quota"):
        quota_for(CpuLimit(0.05, 1))
    with pytest.raises(ValueError):
        quota_for(CpuLimit(50, 0))


def test_cpu_max_line():
    assert Quota(5_000, 5_000).cpu_max() == "5000 5000"
    assert CpuLimit(50, 2).cores == 1.0


@pytest.mark.parametrize("text", ["50", "0.5", "100", " 20 "])
def test_limit_pct_accepts_a_share_of_the_machine(text):
    assert cgroups.parse_limit_pct(text) == float(text)


@pytest.mark.parametrize(
    ("text", "message"),
    [("0", "in (0, 100]"), ("150", "in (0, 100]"), ("-5", "in (0, 100]"), ("nan", "in (0, 100]"),
     ("half", "not a number")],
)
def test_limit_pct_refuses_what_is_not_one(text, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace("]", r"\]")):
        cgroups.parse_limit_pct(text)


CPU_STAT_V2 = """\
usage_usec 123456789
user_usec 100000000
system_usec 23456789
nr_periods 10
nr_throttled 2
throttled_usec 4000
"""


def test_cgroup_files_parse():
    assert cgroups.parse_cpu_stat_usage_s(CPU_STAT_V2) == pytest.approx(123.456789)
    assert cgroups.parse_cpuacct_usage_s("2500000000\n") == 2.5
    assert cgroups.parse_cpu_max("max 100000\n") == (None, 100000)
    assert cgroups.parse_cpu_max("5000 5000\n") == (5000, 5000)
    assert cgroups.parse_usage_s(Path("/x/cpu.stat"), CPU_STAT_V2) == pytest.approx(123.456789)
    assert cgroups.parse_usage_s(Path("/x/cpuacct.usage"), "1000000000") == 1.0


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: cgroups.parse_cpu_stat_usage_s("nr_periods 1\n"), "no usage_usec"),
        (lambda: cgroups.parse_cpu_stat_usage_s("usage_usec lots\n"), "non-numeric"),
        (lambda: cgroups.parse_cpuacct_usage_s(""), "not a number"),
        (lambda: cgroups.parse_cpu_max("5000\n"), "expected 'quota period'"),
        (lambda: cgroups.parse_cpu_max("x 5000\n"), "non-numeric"),
        (lambda: cgroups.parse_usage_s(Path("/x/cpu.max"), "1"), "not cpu.stat"),
        (lambda: cgroups.parse_proc_cgroup("garbage\n"), "malformed line"),
    ],
)
def test_malformed_cgroup_files_are_named(call, message):
    with pytest.raises(CgroupParseError, match=message):
        call()


def test_proc_cgroup_gives_each_controller_and_v2():
    text = "12:cpu,cpuacct:/mpsched-cpu-7\n4:memory:/x/y\n1:name=systemd:/init.scope\n0::/user\n"
    got = cgroups.parse_proc_cgroup(text)
    assert got["cpu"] == got["cpuacct"] == "/mpsched-cpu-7"
    assert got["memory"] == "/x/y"
    assert got["name=systemd"] == "/init.scope"
    assert got[""] == "/user"


MOUNTS_V1 = """\
tmpfs /sys/fs/cgroup tmpfs rw,relatime,mode=755 0 0
cgroup /sys/fs/cgroup/cpu cgroup rw,relatime,cpu 0 0
cgroup /sys/fs/cgroup/cpuacct cgroup rw,relatime,cpuacct 0 0
cgroup /sys/fs/cgroup/systemd cgroup rw,relatime,name=systemd 0 0
cgroup2 /sys/fs/cgroup/unified cgroup2 rw,relatime 0 0
"""
MOUNTS_V2 = "cgroup2 /sys/fs/cgroup cgroup2 rw,nosuid,nodev,noexec,relatime,nsdelegate 0 0\n"
MOUNTS_COMOUNTED = "cgroup /sys/fs/cgroup/cpu,cpuacct cgroup rw,nosuid,cpu,cpuacct 0 0\n"


def test_mounts_parse():
    mounts = cgroups.parse_mounts(MOUNTS_V1)
    assert [(str(m.path), m.version, sorted(m.controllers)) for m in mounts] == [
        ("/sys/fs/cgroup/cpu", 1, ["cpu"]),
        ("/sys/fs/cgroup/cpuacct", 1, ["cpuacct"]),
        ("/sys/fs/cgroup/systemd", 1, []),
        ("/sys/fs/cgroup/unified", 2, []),
    ]
    (co,) = cgroups.parse_mounts(MOUNTS_COMOUNTED)
    assert co.controllers == frozenset({"cpu", "cpuacct"})


def files(**by_path: str):
    """A `read` over the given files ("" for any other, as for a missing file)."""
    return lambda path: by_path.get(str(path), "")


def test_v2_with_the_cpu_controller_enabled_is_chosen():
    read = files(**{"/sys/fs/cgroup/cgroup.controllers": "cpuset cpu io memory pids\n",
                    "/sys/fs/cgroup/cgroup.subtree_control": "cpu memory pids\n"})
    layout = choose_layout(cgroups.parse_mounts(MOUNTS_V2), read)
    root = Path("/sys/fs/cgroup")
    assert layout == Layout(2, root, root)
    assert layout.dirs("g") == (root / "g",)
    assert layout.usage_file("g") == root / "g" / "cpu.stat"
    assert layout.hierarchy_key(root) == ""


def test_v1_when_v2_lacks_the_cpu_controller():
    """This machine: cgroup2 holds only hugetlb, cpu and cpuacct are separate v1 hierarchies."""
    read = files(**{"/sys/fs/cgroup/unified/cgroup.controllers": "hugetlb\n"})
    layout = choose_layout(cgroups.parse_mounts(MOUNTS_V1), read)
    cpu, acct = Path("/sys/fs/cgroup/cpu"), Path("/sys/fs/cgroup/cpuacct")
    assert layout == Layout(1, cpu, acct)
    assert layout.dirs("g") == (cpu / "g", acct / "g")
    assert layout.usage_file("g") == acct / "g" / "cpuacct.usage"
    assert (layout.hierarchy_key(cpu), layout.hierarchy_key(acct)) == ("cpu", "cpuacct")


def test_v1_comounted_is_one_directory():
    layout = choose_layout(cgroups.parse_mounts(MOUNTS_COMOUNTED), files())
    root = Path("/sys/fs/cgroup/cpu,cpuacct")
    assert layout.dirs("g") == (root / "g",)
    assert layout.usage_file("g") == root / "g" / "cpuacct.usage"


def test_v2_without_cpu_for_children_says_how_to_enable_it():
    read = files(**{"/sys/fs/cgroup/cgroup.controllers": "cpu memory\n",
                    "/sys/fs/cgroup/cgroup.subtree_control": "memory\n"})
    with pytest.raises(CpuLimitError, match=r"echo \+cpu > /sys/fs/cgroup/cgroup.subtree_control"):
        choose_layout(cgroups.parse_mounts(MOUNTS_V2), read)


def test_no_cpu_controller_anywhere_is_said():
    with pytest.raises(CpuLimitError, match="no cgroup cpu controller"):
        choose_layout(cgroups.parse_mounts(MOUNTS_V2), files())
    with pytest.raises(CpuLimitError, match="no cpuacct hierarchy"):
        choose_layout([Mount(Path("/c"), 1, frozenset({"cpu"}))], files())


def test_owner_of_a_group_name():
    assert cgroups.owner_of("mpsched-cpu-1234") == 1234
    assert cgroups.owner_of("mpsched-cpu-x") is None
    assert cgroups.owner_of("user.slice") is None


def test_throttling_of_either_version():
    v1 = "nr_periods 8347\nnr_throttled 28\nthrottled_time 34847428\nnr_bursts 0\nburst_time 0\n"
    assert cgroups.parse_throttling(v1) == cgroups.Throttling(8347, 28, 0.034847428)
    v2 = CPU_STAT_V2.replace("throttled_usec 4000", "throttled_usec 4000\nnr_bursts 0")
    assert cgroups.parse_throttling(v2) == cgroups.Throttling(10, 2, 0.004)


@pytest.mark.parametrize(("text", "message"), [
    ("nr_periods 1\nnr_throttled 0\n", "no throttled_time"),
    ("nr_periods x\n", "non-numeric"),
])
def test_malformed_throttling_is_named(text, message):
    with pytest.raises(CgroupParseError, match=message):
        cgroups.parse_throttling(text)
