"""The REST API under abuse and load: bad requests answered as documented, and concurrent
writes all answered with a consistent final state.

`CASES` (restabuse_cases.py) is a table of bad requests (method, path, body bytes, headers,
expected status and `field` of the ``{"error": ..., "field": ...}`` body): invalid JSON,
wrong types, NaN and infinities, booleans where numbers belong, huge and deeply nested
bodies, unknown ids, missing and wrong tokens, wrong methods and Content-Types. `run_cases`
sends each on a connection of its own and checks the answer, then that none of them changed anything
(paths' weights and admin states, classes, parameters). `concurrent_writes` sends
``PUT /paths/{id}/weight`` from many clients at once (a new connection per request) and
checks that every request is answered 200 and that what ``GET /paths`` returns afterwards
is a value some write could have left last: no write acknowledged before it was sent.

Runs against any server (the tests' one with a fake backend, or a real controller; ids
of paths are read from ``GET /paths``, the first path is used for writes). Against a
controller the weight writes make the default class run ``wcmp`` (as any weight write
does); the weights are put back afterwards.

    mpsched bench rest-abuse --url http://127.0.0.1:8080 [--token-file F]

ends with ``rest_abuse_cases=`` (cases run, the state check included),
``rest_abuse_failures=`` (cases not answered as expected) and ``rest_concurrent_failed=``
(writes not acknowledged with 200, plus 1 if the final state is inconsistent).
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import json
import logging
import socket
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from mpsched.testing.restabuse_cases import CASES, JSON_CT, Case, json_body

__all__ = ["CASES", "Case", "CaseResult", "Write", "concurrent_writes", "possible_last",
           "run_cases"]

log = logging.getLogger("mpsched.testing.restabuse")

TIMEOUT_S = 60.0


@dataclass(frozen=True)
class CaseResult:
    case: Case
    status: int | None  # None: no answer (refused, reset, timed out)
    field: str | None
    problem: str = ""  # empty: answered as expected

    @property
    def ok(self) -> bool:
        return not self.problem


@dataclass
class Write:
    path_id: int
    weight: int
    sent: float = 0.0
    acked: float = 0.0
    status: int | None = None
    error: str = ""


# -- running -------------------------------------------------------------------


def _split(base_url: str) -> tuple[str, int]:
    parts = urlsplit(base_url)
    if parts.scheme != "http" or not parts.hostname:
        raise ValueError(f"url must be http://host[:port], got {base_url!r}")
    return parts.hostname, parts.port or 80


def request(
    base_url: str,
    method: str,
    path: str,
    body: bytes | None = None,
    headers: Sequence[tuple[str, str]] = (),
    timeout: float = TIMEOUT_S,
) -> tuple[int, dict[str, str], bytes]:
    """One request on a connection of its own: (status, headers, body). OSError (refused,
    reset, timed out) and http.client.HTTPException propagate."""
    host, port = _split(base_url)
    conn = http.client.HTTPConnection(host, port, timeout=timeout)
    try:
        conn.putrequest(method, path, skip_accept_encoding=True)
        for key, value in headers:
            conn.putheader(key, value)
        if body is not None:
            conn.putheader("Content-Length", str(len(body)))
        conn.putheader("Connection", "close")
        conn.endheaders()
        if body:
            # the server may answer (and close) before reading it all
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                conn.send(body)
        response = conn.getresponse()
        data = response.read()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, data
    finally:
        conn.close()


def raw_request(
    base_url: str, data: bytes, timeout: float = TIMEOUT_S
) -> tuple[int, dict[str, str], bytes]:
    """`data` sent as it is on a connection of its own; the answer as from `request`."""
    with socket.create_connection(_split(base_url), timeout=timeout) as sock:
        sock.sendall(data)
        response = http.client.HTTPResponse(sock)
        response.begin()
        body = response.read()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, body


def _get_json(base_url: str, path: str) -> Any:
    status, _, data = request(base_url, "GET", path)
    if status != 200:
        raise RuntimeError(f"GET {path}: {status} {data[:200]!r}")
    return json.loads(data)


def _auth(token: str | None) -> tuple[tuple[str, str], ...]:
    return (("Authorization", f"Bearer {token}"),) if token else ()


def check_case(base_url: str, token: str | None, case: Case, path_id: int) -> CaseResult:
    headers = case.headers + (_auth(token) if case.auth == "token" else ())
    path = case.path.replace("{path}", str(path_id))
    try:
        if case.raw is not None:
            status, got_headers, data = raw_request(base_url, case.raw)
        else:
            status, got_headers, data = request(base_url, case.method, path, case.body, headers)
    except (OSError, http.client.HTTPException) as error:
        return CaseResult(case, None, None, f"no answer: {error!r}")
    try:
        body = json.loads(data)
    except ValueError:
        body = None
    if not (isinstance(body, dict) and set(body) == {"error", "field"}
            and isinstance(body["error"], str) and body["error"]):
        return CaseResult(case, status, None, f"{status}: not an error body: {data[:120]!r}")
    problems = []
    if status != case.status:
        problems.append(f"status {status}, expected {case.status} ({body['error'][:120]})")
    if body["field"] != case.field:
        problems.append(f"field {body['field']!r}, expected {case.field!r}")
    if case.allow is not None and got_headers.get("allow") != case.allow:
        problems.append(f"Allow {got_headers.get('allow')!r}, expected {case.allow!r}")
    if status == 401 and "www-authenticate" not in got_headers:
        problems.append("401 without WWW-Authenticate")
    return CaseResult(case, status, body["field"], "; ".join(problems))


def snapshot(base_url: str) -> dict[str, Any]:
    """What a refused request must not change: paths' weight and admin state, classes
    (without their placements, which the control loop changes), parameters."""
    paths = {p["id"]: (p["weight"], p["admin"]) for p in _get_json(base_url, "/paths")}
    classes = [{k: v for k, v in c.items() if k != "placement"}
               for c in _get_json(base_url, "/classes")]
    params = _get_json(base_url, "/params")
    return {"paths": paths, "classes": classes, "params": params}


def run_cases(
    base_url: str, token: str | None, cases: Sequence[Case] = CASES
) -> list[CaseResult]:
    """Every case that applies (those about the token need a server with one), then a
    last result "state unchanged" comparing `snapshot` before and after."""
    paths = _get_json(base_url, "/paths")
    if not paths:
        raise RuntimeError("the server has no paths")
    path_id = paths[0]["id"]
    before = snapshot(base_url)
    results = [
        check_case(base_url, token, case, path_id)
        for case in cases
        if token is not None or not case.needs_token
    ]
    after = snapshot(base_url)
    changed = [key for key in before if before[key] != after[key]]
    final = Case("state unchanged", "GET", "/paths /classes /params", status=200)
    problem = f"changed by refused requests: {', '.join(changed)}" if changed else ""
    results.append(CaseResult(final, 200, None, problem))
    return results


# -- concurrent writes -----------------------------------------------------------


def plan_writes(path_ids: Sequence[int], writes: int) -> list[Write]:
    """Write k goes to path k mod n; the weights written to a path differ (1..255, cycling
    only beyond 255 writes per path), so the final value tells which write was last."""
    n = len(path_ids)
    return [Write(path_ids[k % n], 1 + (k // n) % 255) for k in range(writes)]


def possible_last(writes: Sequence[Write], path_id: int, initial: int) -> set[int]:
    """The weights `path_id` may hold after `writes` (linearisability of a register): any
    write acknowledged (200) unless another acknowledged write to it was sent after it was
    acknowledged, and any unacknowledged one (it may have been applied); the initial
    weight if no write was acknowledged."""
    mine = [w for w in writes if w.path_id == path_id]
    acked = [w for w in mine if w.status == 200]
    out = {w.weight for w in mine if w.status != 200}
    out |= {w.weight for w in acked if not any(o.sent > w.acked for o in acked)}
    if not acked:
        out.add(initial)
    return out


def concurrent_writes(
    base_url: str, token: str | None, clients: int = 50, writes: int = 200
) -> tuple[int, int, bool]:
    """`writes` weight writes from `clients` threads at once, each on a new connection:
    (answered: requests that got an HTTP answer, failed: requests not acknowledged with
    200, final_state_ok: every path's weight read afterwards is one that some write could
    have left last, see `possible_last`). The weights are put back afterwards."""
    initial = {p["id"]: p["weight"] for p in _get_json(base_url, "/paths")}
    plan = plan_writes(sorted(initial), writes)
    headers = (*JSON_CT, *_auth(token))
    start = threading.Barrier(clients)

    def client(mine: list[Write]) -> None:
        start.wait()
        for w in mine:
            w.sent = time.monotonic()
            try:
                w.status, _, data = request(
                    base_url, "PUT", f"/paths/{w.path_id}/weight",
                    json_body({"weight": w.weight}), headers,
                )
                if w.status != 200:
                    w.error = data[:200].decode(errors="replace")
            except (OSError, http.client.HTTPException) as error:
                w.error = repr(error)
            w.acked = time.monotonic()

    threads = [
        threading.Thread(target=client, args=(plan[c::clients],), name=f"abuse-client-{c}")
        for c in range(clients)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    answered = sum(1 for w in plan if w.status is not None)
    failed = sum(1 for w in plan if w.status != 200)
    for w in plan:
        if w.status != 200:
            log.warning("PUT /paths/%d/weight: %s %s", w.path_id, w.status, w.error)
    final_ok = True
    try:
        final = {p["id"]: p["weight"] for p in _get_json(base_url, "/paths")}
    except (OSError, http.client.HTTPException, RuntimeError, ValueError) as error:
        log.warning("GET /paths after the writes: %r", error)
        return answered, failed, False
    for path_id, weight in sorted(final.items()):
        allowed = possible_last(plan, path_id, initial.get(path_id, weight))
        if weight not in allowed:
            log.warning("path %d: weight %d after the writes; possible: %s",
                        path_id, weight, sorted(allowed))
            final_ok = False
    for path_id, weight in initial.items():
        status, _, _ = request(base_url, "PUT", f"/paths/{path_id}/weight",
                               json_body({"weight": weight}), headers)
        if status != 200:
            log.warning("could not put path %d's weight back to %d: %d", path_id, weight, status)
    return answered, failed, final_ok


# -- command line ------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="mpsched bench rest-abuse",
        description=__doc__.split("\n\n")[0],
    )
    p.add_argument("--url", default="http://127.0.0.1:8080",
                   help="the REST API (default: %(default)s)")
    p.add_argument("--token", default=None, help="the write token")
    p.add_argument("--token-file", type=Path, default=None,
                   help="file holding the write token (default: $MPSCHED_TOKEN, else the "
                   "controller's token file for the port of --url)")
    p.add_argument("--clients", type=int, default=50, help="concurrent clients (default: 50)")
    p.add_argument("--writes", type=int, default=200, help="weight writes (default: 200)")
    p.add_argument("-v", "--verbose", action="store_true", help="print every case")
    args = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING,
                        format="%(name)s: %(message)s")
    from mpsched.client.ctl import UsageError, resolve_token

    try:
        _split(args.url)
        token, source = resolve_token(args)
    except (ValueError, UsageError) as error:
        print(f"restabuse: {error}", file=sys.stderr)
        return 2
    log.info("token: %s", source)
    if args.clients < 1 or args.writes < 1:
        print("restabuse: --clients and --writes must be >= 1", file=sys.stderr)
        return 2
    try:
        results = run_cases(args.url, token)
        answered, failed, final_ok = concurrent_writes(args.url, token, args.clients, args.writes)
    except (OSError, http.client.HTTPException, RuntimeError, ValueError) as error:
        print(f"restabuse: {args.url}: {error}", file=sys.stderr)
        return 1
    for r in results:
        if args.verbose or not r.ok:
            mark = "ok  " if r.ok else "FAIL"
            print(f"{mark} {r.case.name:40s} {r.status} {r.field!r} {r.problem}")
    failures = sum(1 for r in results if not r.ok)
    print(f"concurrent: {args.writes} writes from {args.clients} clients: {answered} answered, "
          f"{failed} not acknowledged, final state {'consistent' if final_ok else 'INCONSISTENT'}")
    if token is None:
        print("(no token: the cases about the token were skipped)")
    print(f"rest_abuse_cases={len(results)}")
    print(f"rest_abuse_failures={failures}")
    print(f"rest_concurrent_failed={failed + (0 if final_ok else 1)}")
    return 0 if failures == 0 and failed == 0 and final_ok else 1


if __name__ == "__main__":
    sys.exit(main())
