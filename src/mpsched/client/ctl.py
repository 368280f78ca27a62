"""`mpsched ctl`: the controller's REST API from the command line.

Answers are printed as JSON. Exit status: 0 done, 1 the controller refused the
request (``error: <message> (field: <field>)`` on stderr) or could not be
reached, 2 usage errors.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

import requests

from mpsched import safeload
from mpsched.client.rest import ControllerError, RestClient, unreachable_text
from mpsched.controller.northbound.auth import default_read_token_path, default_token_path
from mpsched.proc import rundir
from mpsched.validation import InputError

DEFAULT_URL = "http://127.0.0.1:8080"
TOKEN_ENV = "MPSCHED_TOKEN"

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


class UsageError(Exception):
    """Bad command-line input found after parsing (exit status 2)."""


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


# -- input helpers -------------------------------------------------------------


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON value")


def parse_value(text: str) -> Any:
    """JSON if it parses (numbers, true, null, lists, objects; not NaN or Infinity), else
    the string itself."""
    try:
        return json.loads(text, parse_constant=_no_constant)
    except ValueError:
        return text


def nested(assignments: list[str]) -> dict[str, Any]:
    """``["a.b=1", "c=x"]`` -> ``{"a": {"b": 1}, "c": "x"}``."""
    out: dict[str, Any] = {}
    for item in assignments:
        key, sep, text = item.partition("=")
        parts = key.split(".")
        if not sep or not all(parts):
            raise UsageError(f"expected KEY=VALUE with a (dotted) key, got {item!r}")
        node = out
        for part in parts[:-1]:
            node = node.setdefault(part, {})
            if not isinstance(node, dict):
                raise UsageError(f"{key!r}: {part!r} is given a value and nested keys")
        if parts[-1] in node:
            raise UsageError(f"{key!r} given twice (or with nested keys)")
        node[parts[-1]] = parse_value(text)
    return out


def load_classes(name: str) -> list:
    """The classes of a JSON (``*.json``) or YAML file, or of stdin ("-"), read and parsed
    within `safeload`'s bounds."""
    try:
        if name == "-":
            data = safeload.parse_bytes(sys.stdin.buffer.read(safeload.DOCUMENT.max_bytes + 1),
                                        name)
        else:
            data = safeload.read_document(name)
    except InputError as error:
        raise UsageError(str(error)) from None
    if isinstance(data, dict) and set(data) == {"classes"}:
        data = data["classes"]
    if not isinstance(data, list):
        raise UsageError(f'{name} must hold a list of classes or {{"classes": [...]}}')
    return data


def url_port(url: str) -> int:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise UsageError(f"--url must be http(s)://host[:port], got {url!r}")
    try:
        port = parts.port
    except ValueError:
        raise UsageError(f"--url has an invalid port: {url!r}") from None
    return port or (443 if parts.scheme == "https" else 80)


def resolve_token(args: argparse.Namespace) -> tuple[str | None, str]:
    """The token to send and where it came from: the write token, else (its file not
    readable) the read token."""
    if args.token:
        return args.token, "--token"
    if args.token_file is not None:
        try:
            token = safeload.read_small_text(args.token_file).strip()
        except OSError as error:
            raise UsageError(f"cannot read {args.token_file}: {error.strerror or error}") from None
        except safeload.RefusedError as error:
            raise UsageError(f"{args.token_file}: {error.text()}") from None
        if not token:
            raise UsageError(f"{args.token_file} is empty")
        return token, str(args.token_file)
    if os.environ.get(TOKEN_ENV):
        return os.environ[TOKEN_ENV].strip(), f"${TOKEN_ENV}"
    port = url_port(args.url)
    path = default_token_path(port)
    for candidate, what in ((path, "token"), (default_read_token_path(port), "read token")):
        try:
            token = _own_token(candidate, f"{what} file")
        except rundir.UnsafePathError as error:
            print(f"mpsched ctl: not using the {what}: {error}", file=sys.stderr)
            return None, f"none ({candidate} not used: not this user's or root's)"
        if token is not None:
            return (token, str(candidate)) if token else (None, f"none ({candidate} is empty)")
    return None, f"none ({path} not readable)"


def _own_token(path: Path, what: str) -> str | None:
    """The token in `path` (None when it cannot be read); UnsafePathError when another user
    owns the file (they could have planted it)."""
    rundir.check_file(path, what)
    try:
        return safeload.read_small_text(path).strip()
    except (OSError, safeload.RefusedError):
        return None


# -- commands ------------------------------------------------------------------


def run(client: RestClient, args: argparse.Namespace) -> Any:
    cmd, action = args.command, getattr(args, "action", None)
    if cmd == "paths":
        return client.get("/paths")
    if cmd == "path":
        return client.get(f"/paths/{args.path_id}")
    if cmd == "telemetry":
        return client.get(f"/paths/{args.path_id}/telemetry")
    if cmd == "switches":
        return client.get("/switches")
    if cmd == "weight":
        return client.put(f"/paths/{args.path_id}/weight", {"weight": args.weight})
    if cmd == "admin":
        return client.put(f"/paths/{args.path_id}/admin", {"state": args.state})
    if cmd == "classes":
        if action == "set":
            return client.put("/classes", {"classes": load_classes(args.file)})
        return client.get("/classes")
    if cmd == "policy":
        if action == "set":
            body: dict[str, Any] = {"name": args.name}
            if args.param or args.clear_params:
                body["params"] = nested(args.param)
            if args.lm3 is not None:
                body["lm3"] = args.lm3
            if args.gap_us is not None:
                body["flowlet_gap_us"] = args.gap_us
            return client.put(f"/classes/{args.class_id}/policy", body)
        return client.get(f"/classes/{args.class_id}/policy")
    if cmd == "adaptive":
        return client.get(f"/classes/{args.class_id}/adaptive")
    if cmd == "params":
        if action == "set":
            return client.put("/params", nested(args.assignments))
        return client.get("/params")
    if cmd == "decisions":
        query = {"since": args.since, "limit": args.limit, "pair": args.pair}
        return client.get("/decisions", {k: v for k, v in query.items() if v is not None})
    if cmd in ("links", "link", "pairs", "pair"):
        return run_fabric(client, args)
    if cmd == "mptcp":
        if args.conn_id is not None:
            return client.get(f"/mptcp/connections/{args.conn_id}")
        return client.get("/mptcp/connections")
    if cmd == "state":
        return client.get("/state")
    raise UsageError(f"unknown command {cmd!r}")


def run_fabric(client: RestClient, args: argparse.Namespace) -> Any:
    """The fabric's links and pairs (a pair's id, e.g. leaf1->leaf3, quoted in the URL)."""
    if args.command == "links":
        return client.get("/links")
    if args.command == "link":
        return client.put(f"/links/{quote(args.name, safe='')}/admin", {"state": args.state})
    if args.command == "pairs":
        return client.get("/pairs")
    return client.get(f"/pairs/{quote(args.pair_id, safe='')}")


def main(argv: list[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as exit_:  # --help (0) or a usage error (2), already printed
        return int(exit_.code or 0)
    return execute(args)


def execute(args: argparse.Namespace) -> int:
    """Send the request `args` (parsed by `build_parser`, also as `mpsched ctl`) names."""
    token, token_source = None, ""
    try:
        url_port(args.url)
        token, token_source = resolve_token(args)
        result = run(RestClient(args.url, token, args.timeout, args.ca), args)
    except UsageError as error:
        build_parser().print_usage(sys.stderr)
        print(f"mpsched ctl: error: {error}", file=sys.stderr)
        return 2
    except ControllerError as error:
        field = f" (field: {error.field})" if error.field else ""
        print(f"error: {error.message}{field}", file=sys.stderr)
        if error.status == 401 and token is None:
            print(f"hint: no token ({token_source}); use --token, --token-file or "
                  f"${TOKEN_ENV}", file=sys.stderr)
        return 1
    except requests.RequestException as error:
        print(f"error: {unreachable_text(args.url, error, args.timeout)}", file=sys.stderr)
        return 1
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
