"""`mpsched` (src/mpsched/cli.py): argparse subcommands over the modules' own parsers."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from mpsched import cli

NAMES = [command.name for command in cli.COMMANDS]

# The fewest arguments each command parses without a usage error (its required ones).
REQUIRED = {"controller": ["--netcfg", "net.json"], "run": ["a.yaml"], "compare": ["a.yaml"],
            "ctl": ["paths"], "fabric": ["a.yaml"], "check": ["a.yaml"],
            "certs": ["--out", "certs", "--switch", "s1"]}


def own_options(name: str) -> set[str]:
    """Every option string of the command's module parser (the one definition of them)."""
    command = cli.BY_NAME[name]
    parser = command.load().build_parser(**command.parser_args)
    return {option for action in parser._actions for option in action.option_strings}


@pytest.fixture
def no_execute(monkeypatch):
    """Every command's execute replaced: a test that reaches one fails, nothing runs."""
    def refuse(args: argparse.Namespace) -> int:
        raise AssertionError(f"executed {args}")

    for command in cli.COMMANDS:
        monkeypatch.setattr(command.load(), "execute", refuse)


def test_help_lists_every_command(capsys):
    assert cli.main(["--help"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: mpsched [-h] <command> ...")
    width = max(len(command.name) for command in cli.COMMANDS)
    for command in cli.COMMANDS:
        assert f"    {command.name:<{width}}  {command.help}\n" in out, command.name


def test_no_arguments_print_the_help(capsys):
    assert cli.main([]) == 0
    assert "<command>" in capsys.readouterr().out


@pytest.mark.parametrize("name", NAMES)
def test_command_help_names_its_options(capsys, no_execute, name):
    assert cli.main([name, "--help"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"usage: mpsched {name} [-h]")
    missing = {option for option in own_options(name) if option not in out}
    assert not missing, f"mpsched {name} --help does not name {sorted(missing)}"


def test_command_help_is_the_modules_help(capsys):
    """`mpsched ctl --help` prints what `python -m mpsched.client.ctl --help` does."""
    assert cli.main(["ctl", "--help"]) == 0
    via_cli = capsys.readouterr().out
    with pytest.raises(SystemExit):
        cli.BY_NAME["ctl"].load().build_parser().parse_args(["--help"])
    assert capsys.readouterr().out == via_cli


def test_unknown_command_exits_2_naming_it(capsys):
    assert cli.main(["bogus"]) == 2
    err = capsys.readouterr().err
    assert "mpsched: error: argument <command>: invalid choice: 'bogus'" in err


@pytest.mark.parametrize("name", NAMES)
def test_unknown_option_exits_2_naming_it(capsys, no_execute, name):
    assert cli.main([name, *REQUIRED.get(name, []), "--bogus"]) == 2
    err = capsys.readouterr().err
    assert f"usage: mpsched {name} " in err
    assert f"mpsched {name}: error: unrecognized arguments: --bogus" in err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["run", "a.yaml", "--runs", "x"], "mpsched run: error: argument --runs: invalid int"),
        (["compare", "a.yaml", "--policy", "nope"], "argument --policy: invalid choice: 'nope'"),
        (["controller"], "the following arguments are required: --netcfg"),
        (["ctl", "weight", "x", "1"], "mpsched ctl weight: error: argument ID: invalid int"),
        (["topo", "--backend", "x"], "argument --backend: invalid choice: 'x'"),
    ],
)
def test_bad_value_exits_2_naming_the_argument(capsys, no_execute, argv, message):
    assert cli.main(argv) == 2
    assert message in capsys.readouterr().err


def recorder(monkeypatch, name: str) -> list[argparse.Namespace]:
    """The namespaces the command's execute is called with; it answers 7."""
    calls: list[argparse.Namespace] = []

    def execute(args: argparse.Namespace) -> int:
        calls.append(args)
        return 7

    monkeypatch.setattr(cli.BY_NAME[name].load(), "execute", execute)
    return calls


@pytest.mark.parametrize("name", ["run", "compare"])
def test_run_and_compare_dispatch_to_the_experiment(monkeypatch, name):
    calls = recorder(monkeypatch, name)
    assert cli.main([name, "a.yaml", "b.yaml", "--runs", "2", "--policy", "ca"]) == 7
    (args,) = calls
    assert args.compare is (name == "compare")
    assert args.scenarios == [Path("a.yaml"), Path("b.yaml")]
    assert (args.runs, args.policy, args.resume) == (2, ["ca"], False)


def test_ctl_dispatches_its_command(monkeypatch):
    calls = recorder(monkeypatch, "ctl")
    assert cli.main(["ctl", "--url", "http://h:9", "weight", "2", "0"]) == 7
    (args,) = calls
    assert (args.url, args.command, args.path_id, args.weight) == ("http://h:9", "weight", 2, 0)


def test_only_the_named_command_is_loaded(monkeypatch, capsys):
    loaded: list[str] = []
    load = cli.Command.load

    def counting(self: cli.Command):
        loaded.append(self.name)
        return load(self)

    monkeypatch.setattr(cli.Command, "load", counting)
    assert cli.main(["--help"]) == 0
    assert loaded == []
    assert cli.main(["cleanup", "--help"]) == 0
    assert loaded == ["cleanup"]
    capsys.readouterr()
