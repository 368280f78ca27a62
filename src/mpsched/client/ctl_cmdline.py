"""The command line of `mpsched ctl` (src/mpsched/client/ctl.py sends what it asks for): the
commands and their options."""

from __future__ import annotations

import argparse
from pathlib import Path

DEFAULT_URL = "http://127.0.0.1:8080"

DESCRIPTION = """\
Drive a running controller over its REST API: paths, traffic classes and their
policies, scheduler parameters, the decision log, MPTCP connections, the
persisted intent. Every request sends the controller's token (--token, --token-file,
$MPSCHED_TOKEN, else the file the controller writes for its port:
$MPSCHED_RUN_DIR/token-<port>, default /run/mpsched, or where that one cannot be read, the read
token read-token-<port> beside it): writes need the write token, reads a token only on a
controller run with --read-token (the write or the read token).
"""

EPILOG = """\
examples:
  mpsched ctl paths
  mpsched ctl weight 2 0
  mpsched ctl admin 3 down
  mpsched ctl classes set classes.yaml
  mpsched ctl policy 1 set llhd --param beta=0.01 --lm3 --gap-us 200
  mpsched ctl policy 1 set ecmp --clear-params
  mpsched ctl params set policies.llhd.beta=0.01 lm3.blocking_threshold=8 control_period_ms=50
  mpsched ctl decisions --since 1700000000 --limit 20
  mpsched ctl mptcp
  mpsched ctl params set mptcp.steering=false
  mpsched ctl state
  mpsched ctl --url https://10.0.0.5:8443 --ca lab-certs/ca.pem paths

exit status: 0 done; 1 refused by the controller (or not reachable); 2 usage error
"""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mpsched ctl",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--url", default=DEFAULT_URL,
                        help="the controller's REST API, http:// or https:// "
                        "(default: %(default)s)")
    parser.add_argument("--ca", metavar="FILE",
                        help="https: the CA certificate the controller's certificate must be "
                        "signed by (default: the system's CAs; docs/security.md)")
    token = parser.add_mutually_exclusive_group()
    token.add_argument("--token", help="the write token, or the read token for reads only "
                       "(default: $MPSCHED_TOKEN, else the token file)")
    token.add_argument("--token-file", type=Path, metavar="FILE",
                       help="read the token from FILE")
    parser.add_argument("--timeout", type=float, default=10.0,
                        help="seconds to wait for an answer (default: %(default)s)")
    sub = parser.add_subparsers(dest="command", metavar="<command>", required=True)
    command = _Commands(sub)
    _path_commands(command)
    _class_commands(command)
    _params_commands(command)
    _fabric_commands(command)
    p = command("mptcp", "the MPTCP connections and their subflows' pins, or one connection")
    p.add_argument("conn_id", type=int, nargs="?", metavar="ID",
                   help="only this connection (default: all)")
    command("state", "the state file and the intent saved in it, when, and the last save error")
    return parser


class _Commands:
    """Adds a command to `mpsched ctl`: its help text, capitalised, is its description."""

    def __init__(self, sub: argparse._SubParsersAction) -> None:
        self.sub = sub

    def __call__(self, name: str, text: str, usage: str | None = None) -> argparse.ArgumentParser:
        description = text[0].upper() + text[1:] + "."
        return self.sub.add_parser(name, help=text, description=description, usage=usage)


def _path_commands(command: _Commands) -> None:
    """paths, path, telemetry, switches, weight, admin."""
    command("paths", "every path: weight, counters, current telemetry")
    p = command("path", "one path")
    p.add_argument("path_id", type=int, metavar="ID")
    p = command("telemetry", "a path's estimates per direction, with history")
    p.add_argument("path_id", type=int, metavar="ID")
    command("switches", "the switches' P4Runtime sessions")
    p = command("weight", "set a path's weight (0..255) on every switch (two edges; refused on "
                "a fabric)")
    p.add_argument("path_id", type=int, metavar="ID")
    p.add_argument("weight", type=int, metavar="W")
    p = command("admin", "take a path out of service (down) or back into it (up); on a "
                "fabric take links down instead (`link`)")
    p.add_argument("path_id", type=int, metavar="ID")
    p.add_argument("state", choices=["up", "down"])


def _class_commands(command: _Commands) -> None:
    """classes [set FILE], policy CLASS [set NAME ...], adaptive CLASS."""
    p = command("classes", "list the traffic classes; `classes set FILE` replaces them",
                "mpsched ctl classes [-h] [set FILE]")
    actions = p.add_subparsers(dest="action", title="action (optional)", metavar="set")
    s = actions.add_parser(
        "set",
        prog="mpsched ctl classes set",
        help="replace every class from a JSON or YAML file",
        description="Replace the whole class table. FILE (.json, .yaml/.yml, or - for stdin) "
        'holds the list of classes or {"classes": [...]}; class 0 (the default class) must '
        "be in it.",
    )
    s.add_argument("file", metavar="FILE")

    p = command("policy", "show a class's policy; `policy CLASS set NAME ...` changes it",
                "mpsched ctl policy [-h] CLASS [set NAME [options]]")
    p.add_argument("class_id", type=int, metavar="CLASS", help="class id (0 = default class)")
    actions = p.add_subparsers(dest="action", title="action (optional)", metavar="set")
    s = actions.add_parser(
        "set",
        prog="mpsched ctl policy CLASS set",
        help="set the class's policy",
        description="Set a class's policy NAME; options left out keep their current value.",
    )
    s.add_argument(
        "name",
        metavar="NAME",
        help=(
            "policy name: ecmp, rr, letflow, minrtt, wcmp, ca, llhd, cmtla, fdmvqs, qos, "
            "llhd-ca, cmtla-ca, fdmvqs-ca, qos-ca, adaptive"
        ),
    )
    params = s.add_mutually_exclusive_group()
    params.add_argument("--param", action="append", default=[], metavar="K=V",
                        help="a policy parameter (repeatable; dotted keys nest; V as JSON if "
                        "it parses, else a string); the class's parameters become those given")
    params.add_argument("--clear-params", action="store_true",
                        help="remove every parameter of the class's (the policy's global "
                        "defaults apply, GET /params). Without --param or this, a new NAME "
                        "keeps the parameters it knows; the answer's dropped_params names the "
                        "others")
    s.add_argument("--lm3", action=argparse.BooleanOptionalAction, default=None,
                   help="LM3 path activation on top of the policy (or not)")
    s.add_argument("--gap-us", type=int, metavar="N",
                   help="flowlet gap in microseconds (0..10000000; 0: automatic)")

    p = command("adaptive", "a class's adaptive policy: arm, context, learned table, dwells")
    p.add_argument("class_id", type=int, metavar="CLASS", help="class id (0 = default class)")


def _params_commands(command: _Commands) -> None:
    """params [set K=V ...], decisions."""
    p = command("params", "show the scheduler's parameters; `params set K=V ...` changes some",
                "mpsched ctl params [-h] [set K=V [K=V ...]]")
    actions = p.add_subparsers(dest="action", title="action (optional)", metavar="set")
    s = actions.add_parser(
        "set",
        prog="mpsched ctl params set",
        help="change some parameters",
        description="Change some parameters; the others keep their value. Dotted keys nest "
        "(policies.llhd.beta=0.01, lm3.blocking_threshold=8, control_period_ms=50); values "
        "are JSON if they parse, else strings.",
    )
    s.add_argument("assignments", nargs="+", metavar="K=V")

    p = command("decisions", "the scheduler's recent decisions, oldest first")
    p.add_argument("--since", type=float, metavar="T",
                   help="only decisions after UNIX time T (default: all)")
    p.add_argument("--limit", type=int, metavar="N", help="at most N, 1..1000 (default: 100)")
    p.add_argument("--pair", metavar="ID",
                   help="only this pair's (an id of `pairs`, e.g. leaf1->leaf3; default: all)")


def _fabric_commands(command: _Commands) -> None:
    """links, link NAME up|down, pairs, pair ID."""
    command("links", "a fabric's links and their administrative state")
    p = command("link", "take a fabric link out of the routing (down) or back into it (up)")
    p.add_argument("name", metavar="NAME", help="the link's name, e.g. leaf1-spine2")
    p.add_argument("state", choices=["up", "down"])
    command("pairs", "the scheduler's pairs: paths, placements, estimates")
    p = command("pair", "one pair of edges (leaf1->leaf3; with two edges a switch's name)")
    p.add_argument("pair_id", metavar="ID")
