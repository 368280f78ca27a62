"""`mpsched`: one command for the project's tools, as argparse subcommands.

A command's options are defined once, by its module's `build_parser()` (which also serves
`python -m <module>`); this parser takes them over as the command's subparser (argparse
`parents`) and hands the parsed namespace to the module's `execute(args)`, whose exit status
is the command's. Only the module of the command given is imported: `mpsched ctl` does not
load the experiment runner, and `mpsched --help` loads none.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from types import ModuleType

DESCRIPTION = (
    "One command for the project's tools: the controller, the BMv2 testbed, the demo, the "
    "experiment runner, the benchmarks, the fabric inspector, the input checker, the REST "
    "client, the cleanup of killed runs and the lab's TLS certificates."
)
EPILOG = "`mpsched <command> --help` describes a command and its options."


@dataclass(frozen=True)
class Command:
    """A subcommand: its module has `build_parser(**parser_args)` and `execute(args)`."""

    name: str
    help: str
    module: str
    parser_args: Mapping[str, object] = field(default_factory=dict)

    def load(self) -> ModuleType:
        return importlib.import_module(self.module)


COMMANDS = (
    Command("controller", "run the controller (os-ken app, P4Runtime, REST)",
            "mpsched.controller.__main__"),
    Command("topo", "bring the two-path BMv2 testbed up and wait", "mpsched.topo.__main__"),
    Command("demo", "walking-skeleton demo with weights 1:0 then 1:1", "mpsched.demo"),
    Command("run", "run a scenario N times with fixed seeds", "mpsched.lab.experiment"),
    Command("compare", "run scenarios under every policy, one table", "mpsched.lab.experiment",
            {"compare": True}),
    Command("bench", "run a benchmark by name (--list lists them)", "mpsched.bench.cli"),
    Command("fabric", "show a fabric scenario's switches, links and paths",
            "mpsched.fabric.__main__"),
    Command("check", "validate scenario, fabric and network description files",
            "mpsched.check"),
    Command("ctl", "drive a running controller over its REST API", "mpsched.client.ctl"),
    Command("cleanup", "remove what killed runs left: processes, links, TLS keys",
            "mpsched.proc.cleanup"),
    Command("certs", "create a lab's private CA and TLS certificates", "mpsched.certs"),
)
BY_NAME = {command.name: command for command in COMMANDS}


class HelpFormatter(argparse.HelpFormatter):
    """argparse (3.11) places the help column by a command's name without the indent it
    prints the name at, so `controller`'s help would wrap onto a line of its own: count it."""

    def add_argument(self, action: argparse.Action) -> None:
        super().add_argument(action)
        if isinstance(action, argparse._SubParsersAction) and action.help is not argparse.SUPPRESS:
            longest = max(map(len, action.choices), default=0)
            indent = self._current_indent + self._indent_increment
            self._action_max_length = max(self._action_max_length, longest + indent)


class CommandParser(argparse.ArgumentParser):
    """A command's parser: an argument it does not know is its error, reported with its usage
    (`mpsched run: error: unrecognized arguments: ...`), as the module's own parser does; a
    plain subparser leaves it to the top-level parser and its usage."""

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        parsed, extras = super().parse_known_args(args, namespace)
        if extras:
            self.error(f"unrecognized arguments: {' '.join(extras)}")
        return parsed, extras


def build_parser(selected: Collection[str] | None = None) -> argparse.ArgumentParser:
    """`mpsched`'s parser. Every command is listed; the options of only those `selected`
    (default: all) are loaded, the others would parse no option but `--help`."""
    parser = argparse.ArgumentParser(
        prog="mpsched", description=DESCRIPTION, epilog=EPILOG, formatter_class=HelpFormatter
    )
    sub = parser.add_subparsers(
        dest="mpsched_command",
        metavar="<command>",
        title="commands",
        required=True,
        parser_class=CommandParser,
    )
    for command in COMMANDS:
        if selected is not None and command.name not in selected:
            sub.add_parser(command.name, help=command.help)
            continue
        own = command.load().build_parser(**command.parser_args)
        sub.add_parser(
            command.name,
            help=command.help,
            parents=[own],
            add_help=False,  # the module's parser brings its -h
            prog=own.prog,
            usage=own.usage,
            description=own.description,
            epilog=own.epilog,
            formatter_class=own.formatter_class,
        )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Parse `argv` (default: the process's arguments) and run the command; its exit status,
    0 after `--help`, 2 after a usage error (printed by argparse, naming the argument)."""
    args = list(sys.argv[1:] if argv is None else argv)
    # The top-level parser has no option taking a value: the first word is the command.
    named = next((arg for arg in args if not arg.startswith("-")), None)
    parser = build_parser([named] if named else [])
    if not args:
        parser.print_help()
        return 0
    try:
        parsed = parser.parse_args(args)
    except SystemExit as exit_:  # --help (0) or a usage error (2), already printed
        return int(exit_.code or 0)
    return int(BY_NAME[parsed.mpsched_command].load().execute(parsed))


if __name__ == "__main__":
    sys.exit(main())
