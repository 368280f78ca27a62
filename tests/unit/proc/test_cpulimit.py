"""The benches' `--cpu-limit` (src/mpsched/proc/cpulimit.py) without root: the option, the limit
announced to child processes, and a refusal that says what is missing. The cgroup itself
(root): tests/integration/test_cpu_limit.py."""

from __future__ import annotations

import argparse
import importlib
import json
import os
from pathlib import Path

import pytest

from mpsched.lab.cmdline import build_parser as run_parser
from mpsched.proc import cpulimit
from mpsched.proc.cgroups import CpuLimit, CpuLimitError, Layout

# every module a Makefile target in CPU_LIMIT_TARGETS runs (tests/unit/test_makefile.py checks
# that they all pass --cpu-limit), and the failover phase run alone
BENCHES = ("links", "telemetry", "control", "scale", "sched", "adaptive", "fct", "fabric",
           "fabric_failover", "fabric_mptcp", "mptcp", "capacity", "dataplane", "dpcost", "ui",
           "reliability", "soak")


@pytest.mark.parametrize("bench", BENCHES)
def test_every_bench_has_the_option(bench, capsys):
    module = importlib.import_module(f"mpsched.bench.{bench}")
    with pytest.raises(SystemExit) as exit_:
        module.main(["--help"])
    assert exit_.value.code == 0
    assert "--cpu-limit P" in capsys.readouterr().out


@pytest.mark.parametrize("compare", [False, True])
def test_run_and_compare_have_the_option(compare):
    args = run_parser(compare).parse_args(["x.yaml", "--cpu-limit", "50"])
    assert args.cpu_limit == 50.0
    assert run_parser(compare).parse_args(["x.yaml"]).cpu_limit is None


@pytest.mark.parametrize("value", ["0", "101", "fast"])
def test_a_bad_limit_is_a_usage_error_naming_the_option(value, capsys):
    p = argparse.ArgumentParser(prog="bench-x")
    cpulimit.add_option(p)
    with pytest.raises(SystemExit) as exit_:
        p.parse_args(["--cpu-limit", value])
    assert exit_.value.code == 2
    assert "argument --cpu-limit" in capsys.readouterr().err


def announce(monkeypatch, tmp_path, pct=50.0, ncpus=2, usage_text="1500000000"):
    usage = tmp_path / "cpuacct.usage"
    usage.write_text(usage_text)
    monkeypatch.setenv(cpulimit.ENV, json.dumps({"pct": pct, "ncpus": ncpus,
                                                 "usage": str(usage)}))
    return usage


def test_the_announced_limit_is_read_with_its_usage(monkeypatch, tmp_path):
    usage = announce(monkeypatch, tmp_path)
    found = cpulimit.active()
    assert found == cpulimit.ActiveLimit(CpuLimit(50.0, 2), usage)
    assert found.usage_s() == 1.5


def test_no_limit_announced(monkeypatch):
    monkeypatch.delenv(cpulimit.ENV, raising=False)
    assert cpulimit.active() is None


@pytest.mark.parametrize("value", ["{", '{"pct": 50}', '{"pct": "x", "ncpus": 2, "usage": "/"}'])
def test_a_malformed_announcement_is_ignored_with_a_warning(monkeypatch, caplog, value):
    monkeypatch.setenv(cpulimit.ENV, value)
    assert cpulimit.active() is None
    assert cpulimit.ENV in caplog.text


def test_an_announcement_whose_group_is_gone_is_ignored(monkeypatch, tmp_path, caplog):
    usage = announce(monkeypatch, tmp_path)
    usage.unlink()
    assert cpulimit.active() is None
    assert "is gone" in caplog.text


def test_no_limit_asked_changes_nothing(monkeypatch):
    monkeypatch.setattr(cpulimit, "LimitGroup", None)  # would fail if used
    assert cpulimit.confine(None, "bench-x") is None


def test_a_child_under_the_same_limit_stays_in_its_parents_group(monkeypatch, tmp_path):
    announce(monkeypatch, tmp_path, pct=50.0)
    monkeypatch.setattr(cpulimit, "LimitGroup", None)
    assert cpulimit.confine(50.0, "mpsched compare") is None


def test_limits_do_not_nest(monkeypatch, tmp_path, capsys):
    announce(monkeypatch, tmp_path, pct=50.0)
    assert cpulimit.confine(25.0, "bench-x") == 2
    err = capsys.readouterr().err
    assert "bench-x: --cpu-limit 25: this process already runs under a 50 % limit" in err


def test_no_cgroups_exits_2_saying_what_is_missing(monkeypatch, capsys):
    monkeypatch.delenv(cpulimit.ENV, raising=False)

    def missing() -> None:
        raise CpuLimitError("no cgroup cpu controller: neither ...")

    monkeypatch.setattr(cpulimit, "detect_layout", missing)
    assert cpulimit.confine(50.0, "bench-links") == 2
    err = capsys.readouterr().err
    assert "bench-links: --cpu-limit 50: no cgroup cpu controller" in err
    assert cpulimit.ENV not in os.environ


def test_not_root_is_said(monkeypatch, tmp_path):
    def denied(self: Path, *args: object, **kwargs: object) -> None:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(Path, "mkdir", denied)
    group = cpulimit.LimitGroup(CpuLimit(50, 2), Layout(2, tmp_path, tmp_path))
    with pytest.raises(CpuLimitError, match=r"cannot create the cgroup .*: permission denied "
                                            r"\(run as root\)"):
        group.start()
    assert cpulimit.ENV not in os.environ
