"""The Makefile: `make help` lists every target, the p4c recipe is written once, and the
compile-time profiles are defined once (`make p4-profiles` builds every one but full)."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from mpsched.bench.cli import BY_NAME as BENCHES
from mpsched.proc.layout import REPO_ROOT

MAKEFILE = REPO_ROOT / "Makefile"
# The pattern of the help target's grep: `target: prerequisites ## description`.
HELP_LINE = re.compile(r"^([a-z0-9-]+):.*## ", re.M)


def make(*args: str) -> subprocess.CompletedProcess[str]:
    if shutil.which("make") is None:
        pytest.skip("missing: make")
    return subprocess.run(
        ["make", "--no-print-directory", *args],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def phony_targets(text: str) -> list[str]:
    """Every target the Makefile's .PHONY lines name (continuation lines joined)."""
    joined = text.replace("\\\n", " ")
    return [t for line in re.findall(r"^\.PHONY:(.*)$", joined, re.M) for t in line.split()]


def test_phony_parser():
    text = ".PHONY: a b \\\n  c\nx: ## y\n.PHONY: d\n"
    assert phony_targets(text) == ["a", "b", "c", "d"]


def test_every_phony_target_has_a_help_line():
    text = MAKEFILE.read_text()
    described = set(HELP_LINE.findall(text))
    phony = phony_targets(text)
    assert phony, "no .PHONY line found"
    missing = [t for t in phony if t not in described]
    assert not missing, f"targets without a `## ` description (so not in `make help`): {missing}"
    undeclared = sorted(described - set(phony))
    assert not undeclared, f"targets `make help` lists that .PHONY does not: {undeclared}"


def test_make_help_lists_every_phony_target():
    out = make("help")
    assert out.returncode == 0, out.stderr
    words = [line.split()[0] for line in out.stdout.splitlines() if line.strip()]
    listed = [word for word in words if "=" not in word]  # `VARIABLE=value` lines apart
    assert sorted(listed) == sorted(set(phony_targets(MAKEFILE.read_text())))
    assert all(len(line.split(maxsplit=1)) == 2 for line in out.stdout.splitlines())
    assert "CPU_LIMIT=P" in words


def cpu_limit_targets(text: str) -> list[str]:
    """The Makefile's CPU_LIMIT_TARGETS (continuation lines joined)."""
    found = re.search(r"^CPU_LIMIT_TARGETS :=(.*)$", text.replace("\\\n", " "), re.M)
    assert found, "no CPU_LIMIT_TARGETS"
    return found.group(1).split()


def test_every_bench_takes_the_cpu_limit():
    """Each target that starts a testbed (every bench-*, soak, compare) passes CPU_LIMIT on as
    `--cpu-limit`, so that no bench runs without the limit asked for."""
    text = MAKEFILE.read_text()
    targets = cpu_limit_targets(text)
    benches = [t for t in phony_targets(text) if t.startswith("bench-")]
    assert set(benches) | {"soak", "compare"} == set(targets)
    for target in targets:
        out = make("-n", target, "CPU_LIMIT=50")
        assert out.returncode == 0, out.stderr
        runs = [line for line in out.stdout.splitlines() if " -m mpsched." in line]
        assert runs and all(line.endswith("--cpu-limit 50") for line in runs), (target, runs)
    out = make("-n", "bench-links")
    assert "--cpu-limit" not in out.stdout


def bench_targets(text: str) -> list[str]:
    """The targets that run a benchmark: every bench-* and soak."""
    return [t for t in phony_targets(text) if t.startswith("bench-")] + ["soak"]


@pytest.mark.parametrize("target", bench_targets(MAKEFILE.read_text()))
def test_every_bench_target_runs_mpsched_bench(target):
    """`make bench-X` runs `mpsched bench X` (`make soak`: `mpsched bench soak`), a benchmark
    `mpsched bench --list` lists, and nothing else of the package's."""
    name = target.removeprefix("bench-")
    assert name in BENCHES, f"{target}: no benchmark {name!r} in src/mpsched/bench/cli.py"
    out = make("-n", target)
    assert out.returncode == 0, out.stderr
    runs = [line for line in out.stdout.splitlines() if " -m mpsched" in line]
    assert len(runs) == 1 and f" -m mpsched.cli bench {name}" in runs[0], (target, runs)


@pytest.mark.parametrize(
    ("goal", "expected"),
    [
        (["bench-reliability", "ONLY=rest,scenario", "CPU_LIMIT=50"],
         "bench reliability --only rest,scenario --cpu-limit 50"),
        (["bench-ui", "FABRIC=8x4"], "bench ui --fabric 8x4"),
        (["soak", "FABRIC=4x2", "SOAK_MINUTES=5"], "bench soak --minutes 5 --fabric 4x2"),
        (["bench-scale", "PROBE_MAX_PPS=100"], "bench scale --probe-max-pps 100"),
        (["bench-adaptive", "REUSE=d"], "bench adaptive --reuse d"),
        (["bench-dpcost", "PROFILES=1"], "bench dpcost --profiles"),
        (["compare", "RUNS=2"], "compare scenarios/*.yaml --runs 2 "),
    ],
)
def test_the_variables_reach_the_command(goal, expected):
    out = make("-n", "-o", "p4", "-o", "linkem", "-o", "p4-profiles", *goal)
    assert out.returncode == 0, out.stderr
    assert expected in out.stdout, out.stdout


@pytest.mark.parametrize("goal", ["unit", "demo", "test"])
def test_a_target_without_a_testbed_refuses_the_cpu_limit(goal):
    out = make("-n", goal, "CPU_LIMIT=50")
    assert out.returncode != 0
    assert f"CPU_LIMIT=50 does not apply to {goal}, only to: bench-links" in out.stderr


def test_p4c_recipe_is_written_once():
    text = MAKEFILE.read_text()
    assert len(re.findall(r"^\s*p4c --target", text, re.M)) == 1


def test_p4_builds_each_program_into_its_directory(tmp_path):
    out = make("-n", "-B", "p4", f"BUILD={tmp_path}")
    assert out.returncode == 0, out.stderr
    for program, directory in (("main", "p4"), ("minimal", "p4-minimal"), ("ipv4", "p4-ipv4"),
                               ("plain_ecmp", "p4-plain-ecmp")):
        assert f"-o {tmp_path}/{directory} " in out.stdout, program
        assert f"--p4runtime-files {tmp_path}/{directory}/{program}.p4info.txt" in out.stdout


def listed_profiles() -> list[str]:
    """The profiles `make p4 P4_PROFILE=<unknown>` says it knows."""
    out = make("-n", "p4", "P4_PROFILE=no-such-profile")
    assert out.returncode != 0
    found = re.search(r"P4_PROFILE=no-such-profile: not one of (.+?)\.\s+Stop", out.stderr)
    assert found, out.stderr
    return found.group(1).split()


def test_profiles_are_defined_once_and_all_built(tmp_path):
    profiles = listed_profiles()
    assert "full" in profiles and "lean" in profiles
    out = make("-n", "-B", "p4-profiles", f"BUILD={tmp_path}")
    assert out.returncode == 0, out.stderr
    out_dir = re.escape(f"-o {tmp_path}/p4-")
    built = re.findall(out_dir + r"([\w-]+) --p4runtime-files \S+/main\.p4info\.txt", out.stdout)
    assert sorted(built) == sorted(p for p in profiles if p != "full")
    lean = "-DNO_FLOW_ORDER -DNO_MPTCP -DNO_RTT_MONITOR -DNO_CONGESTION"
    assert f"{lean} -o {tmp_path}/p4-lean " in out.stdout


def test_demo_installs_what_is_missing_first():
    out = make("-n", "demo")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    setup = next(i for i, line in enumerate(lines) if "scripts/setup.sh --if-needed" in line)
    toolchain = next(i for i, line in enumerate(lines) if "scripts/toolchain.sh --ensure" in line)
    demo = next(i for i, line in enumerate(lines) if "-m mpsched.demo" in line)
    assert setup < toolchain < demo
