"""The testbed's CPU limit on this kernel (src/mpsched/proc/cpulimit.py, root): a process under a
20 % limit gets a fifth of its core, and its cgroup is gone when it exits, also after an
exception, Ctrl-C or SIGTERM; a killed process's group is removed by `mpsched cleanup`'s
sweep. Each limited process is a child of the test (`confine` moves the process that calls it,
never pytest itself)."""

from __future__ import annotations

import json
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from mpsched.proc import cpulimit
from mpsched.proc.cgroups import CpuLimitError
from tests.conftest import require

# A child that limits itself to `PCT` % of core 0 and reports its group; then, by its first
# argument: spins for 1 s of wall time and reports the CPU it got (`spin`), or what the runs'
# CPU sampler saw meanwhile (`sample`), raises (`fail`), or waits to be signalled (`wait`).
CHILD = """
import json, os, sys, time
from mpsched.proc import cpulimit
os.sched_setaffinity(0, {0})
if cpulimit.confine(float(sys.argv[2]), "itest") is not None:
    sys.exit(2)
limit = cpulimit.active()
group = [str(d) for d in cpulimit.detect_layout().dirs(f"mpsched-cpu-{os.getpid()}")]
print(json.dumps({"group": group, "cgroup": open("/proc/self/cgroup").read()}), flush=True)
if sys.argv[1] == "spin":
    cpu0, usage0, t0 = time.process_time(), limit.usage_s(), time.monotonic()
    while time.monotonic() - t0 < 1.0:
        pass
    print(json.dumps({"cpu_s": time.process_time() - cpu0, "usage_s": limit.usage_s() - usage0,
                      "wall_s": time.monotonic() - t0}), flush=True)
elif sys.argv[1] == "sample":
    from mpsched.lab import cpu
    from mpsched.lab.cpu_sampler import CpuSampler
    sampler = CpuSampler(lambda: {"me": os.getpid()}, period=0.1)
    sampler.start()
    t0 = time.monotonic()
    while time.monotonic() - t0 < 1.0:
        pass
    samples = sampler.stop()
    idle = [x for _, _, x in cpu.idle_series(samples)]
    print(json.dumps({"limit_pct": cpu.limit_pct(samples), "idle": idle,
                      "bound": cpu.is_cpu_bound(cpu.idle_series(samples), cpu.CpuRule()),
                      "share": cpu.process_shares(samples)["me"]}), flush=True)
elif sys.argv[1] == "nest":  # a command it starts, given the same limit and another
    import subprocess
    code = ("import sys; from mpsched.proc import cpulimit; rc = cpulimit.confine("
            "float(sys.argv[1]), 'inner'); print(rc, cpulimit.active().limit.pct, "
            "open('/proc/self/cgroup').read().count('mpsched-cpu-'))")
    for pct in ("20", "30"):
        print(subprocess.run([sys.executable, "-c", code, pct], capture_output=True, text=True)
              .stdout.strip(), flush=True)
elif sys.argv[1] == "fail":
    raise RuntimeError("a bench failing")
else:
    time.sleep(60)
"""


@pytest.fixture(autouse=True)
def cgroups_here():
    require("root")
    try:
        cpulimit.detect_layout()
    except CpuLimitError as exc:
        pytest.skip(f"no CPU limit here: {exc}")


def child(mode: str, pct: float = 20.0) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-c", CHILD, mode, str(pct)], text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def first_line(proc: subprocess.Popen[str]) -> dict:
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert line, proc.stderr.read() if proc.stderr else ""
    return json.loads(line)


def test_a_spinner_under_20_percent_gets_a_fifth_of_its_core():
    proc = child("spin")
    info = first_line(proc)
    assert any("mpsched-cpu-" in line for line in info["cgroup"].splitlines())
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    got = json.loads(out)
    assert got["wall_s"] >= 1.0
    # 0.2 s of CPU per second under the quota; unlimited it would be about 1 s (less when
    # the machine's other programs share the core, never less than the quota allows here)
    assert 0.1 <= got["cpu_s"] <= 0.3, got
    assert got["usage_s"] == pytest.approx(got["cpu_s"], abs=0.05)  # the group measures it
    assert "testbed limited to 20 % of 1 core(s): 1000 us of CPU per 5000 us" in err
    held = re.search(r"held the testbed back in (\d+) of (\d+) periods of 5000 us", err)
    assert held, err
    assert int(held[1]) >= 100 and int(held[2]) >= 150  # most of the 1 s spin's 200 periods
    assert not any(Path(d).exists() for d in info["group"]), "the group outlived its process"


def test_the_sampler_measures_idle_against_the_limit():
    """A process using all of its 20 % leaves the limit no idle: CPU-bound, though its core
    had up to 80 % to spare; its share stays in % of the core (about 20)."""
    proc = child("sample")
    first_line(proc)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    got = json.loads(out)
    assert got["limit_pct"] == 20.0
    assert got["bound"] is True, got
    assert sum(got["idle"]) / len(got["idle"]) < 15, got  # each interval within a period's slop
    assert 10 <= got["share"] <= 30, got


def test_a_command_started_under_the_limit_stays_in_it():
    proc = child("nest")
    info = first_line(proc)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    same, other = out.splitlines()
    groups = len(info["group"])  # v1 here: cpu and cpuacct, each the parent's group
    assert same == f"None 20.0 {groups}"  # no group of its own: inherited, measured against 20
    assert other == f"2 20.0 {groups}"  # another limit refused: limits do not nest


def test_the_group_goes_when_the_process_fails():
    proc = child("fail")
    info = first_line(proc)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 1 and "RuntimeError: a bench failing" in err
    assert not any(Path(d).exists() for d in info["group"])


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_the_group_goes_when_the_process_is_interrupted(signum):
    proc = child("wait")
    info = first_line(proc)
    assert all(Path(d).is_dir() for d in info["group"])
    proc.send_signal(signum)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode != 0 and "KeyboardInterrupt" in err
    assert not any(Path(d).exists() for d in info["group"])


def test_a_killed_processs_group_is_swept():
    proc = child("wait")
    info = first_line(proc)
    proc.kill()
    proc.communicate(timeout=30)
    assert all(Path(d).is_dir() for d in info["group"]), "SIGKILL leaves the group"
    done = cpulimit.sweep_stale()
    assert all(f"removed cgroup {d}" in done for d in info["group"])
    assert not any(Path(d).exists() for d in info["group"])


def test_without_root_the_bench_says_so():
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("missing: setpriv (util-linux)")
    proc = subprocess.run(
        [setpriv, "--reuid=nobody", "--regid=nogroup", "--clear-groups",
         sys.executable, "-c", CHILD, "spin", "50"],
        capture_output=True, text=True, timeout=60, check=False,
    )
    if "Permission denied" in proc.stderr and "cpulimit" not in proc.stderr:
        pytest.skip(f"nobody cannot run this checkout's Python: {proc.stderr.strip()[:200]}")
    assert proc.returncode == 2, proc.stderr
    assert "itest: --cpu-limit 50: cannot create the cgroup" in proc.stderr
    assert "permission denied (run as root)" in proc.stderr
