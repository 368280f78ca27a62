"""`mpsched bench` (src/mpsched/bench/cli.py): the list of benchmarks and the dispatch to their
own `main`, arguments untouched."""

from __future__ import annotations

import pytest

from mpsched import cli as mpsched_cli
from mpsched.bench import cli

NAMES = [bench.name for bench in cli.BENCHES]


def test_list_prints_every_benchmark_on_one_line(capsys):
    assert mpsched_cli.main(["bench", "--list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lines] == NAMES
    width = max(map(len, NAMES))
    for line, bench in zip(lines, cli.BENCHES, strict=True):
        assert line == f"{bench.name:<{width}}  {bench.help}"


def test_names_are_unique_and_as_make_spells_them():
    assert len(set(NAMES)) == len(NAMES)
    assert all(name == name.lower() and "_" not in name for name in NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_each_benchmark_helps_under_its_name(capsys, name):
    """`mpsched bench NAME --help` reaches the benchmark's own parser, which names itself so."""
    with pytest.raises(SystemExit) as exit_:
        mpsched_cli.main(["bench", name, "--help"])
    assert exit_.value.code == 0
    assert capsys.readouterr().out.startswith(f"usage: mpsched bench {name} [-h]")


def test_arguments_go_to_the_benchmark_untouched(monkeypatch):
    calls: list[list[str]] = []

    def main(argv: list[str]) -> int:
        calls.append(argv)
        return 3

    monkeypatch.setattr(cli.BY_NAME["reliability"].load(), "main", main)
    argv = ["--only", "rest", "--cpu-limit", "50", "-h"]
    assert mpsched_cli.main(["bench", "reliability", *argv]) == 3
    assert calls == [argv]


def test_only_the_named_benchmark_is_loaded(monkeypatch, capsys):
    loaded: list[str] = []
    load = cli.Bench.load

    def counting(self: cli.Bench):
        loaded.append(self.name)
        return load(self)

    monkeypatch.setattr(cli.Bench, "load", counting)
    assert mpsched_cli.main(["bench", "--list"]) == 0
    with pytest.raises(SystemExit):
        mpsched_cli.main(["bench", "sched", "--help"])
    assert loaded == ["sched"]
    capsys.readouterr()


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["bench"], "mpsched bench: error: name a benchmark (`mpsched bench --list`"),
        (["bench", "nope"], "argument NAME: invalid choice: 'nope'"),
        (["bench", "--bogus"], "mpsched bench: error: unrecognized arguments: --bogus"),
    ],
)
def test_usage_errors_exit_2_naming_the_argument(capsys, argv, message):
    assert mpsched_cli.main(argv) == 2
    assert message in capsys.readouterr().err


def test_a_benchmarks_usage_error_is_its_own(capsys):
    with pytest.raises(SystemExit) as exit_:
        mpsched_cli.main(["bench", "scale", "--bogus"])
    assert exit_.value.code == 2
    assert "mpsched bench scale: error: unrecognized arguments: --bogus" in capsys.readouterr().err
