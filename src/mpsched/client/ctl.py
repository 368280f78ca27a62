"""`mpsched ctl`: the controller's REST API from the command line.

Answers are printed as JSON. Exit status: 0 done, 1 the controller refused the
request (``error: <message> (field: <field>)`` on stderr) or could not be
reached, 2 usage errors. The commands and their options are
src/mpsched/client/ctl_cmdline.py's.
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
from mpsched.client.ctl_cmdline import build_parser
from mpsched.client.rest import ControllerError, RestClient, unreachable_text
from mpsched.controller.northbound.auth import default_read_token_path, default_token_path
from mpsched.proc import rundir
from mpsched.validation import InputError

TOKEN_ENV = "MPSCHED_TOKEN"


class UsageError(Exception):
    """Bad command-line input found after parsing (exit status 2)."""


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
