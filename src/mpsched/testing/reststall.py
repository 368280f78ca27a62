"""The REST section of `make bench-reliability`: the abuse suite (mpsched.testing.restabuse) and
how long a GET waits while idle connections are held open.

`stall_ms`: `IDLE` connections from loopback that send nothing are held open (any the server
closes is opened again, every `REOPEN_S`), and meanwhile a GET /paths on a fresh connection is
sent every `EVERY_S` for `seconds`; the figure is the longest a GET waited for its answer
(`rest_stall_ms=`, target <= 1000). Before the server polices its connections
(src/mpsched/controller/northbound/connlimits.py), 300 idle connections against its limit of 256
held every
new client in the listen backlog until its 30 s idle timeout.

The section runs against the testbed's controller in a full run, or alone
(``mpsched bench reliability --only rest``) against the REST server the controller
runs (waitress `RestServer` and `RestApi`, as on the native hub) over a fake backend
(src/mpsched/testing/restfake.py): no root, BMv2 or Mininet needed.
"""

from __future__ import annotations

import contextlib
import http.client
import logging
import secrets
import select
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

from mpsched.testing.restabuse import _split, concurrent_writes, run_cases

log = logging.getLogger("mpsched.testing.reststall")

IDLE = 300  # idle connections held open
EVERY_S = 0.1  # one GET on a fresh connection this often
REOPEN_S = 0.5  # closed idle connections are opened again this often
STALL_SECONDS = 7.0  # longer than the server's request deadline (5 s): its closings included
GET_TIMEOUT_S = 35.0  # above the old idle timeout (30 s): a stall is measured, not cut short


class IdleHolder:
    """`count` connections to `address` that send nothing, kept open from a thread of its own
    (reopened every `REOPEN_S` where the server closed them) until `stop`."""

    def __init__(self, address: tuple[str, int], count: int) -> None:
        self.address = address
        self.socks: list[socket.socket | None] = [None] * count
        self.reopened = 0
        self._stop = threading.Event()
        self._fill()
        self._thread = threading.Thread(target=self._run, name="idle-holder", daemon=True)
        self._thread.start()

    def _fill(self) -> None:
        for i, sock in enumerate(self.socks):
            if sock is None:
                with contextlib.suppress(OSError):
                    self.socks[i] = socket.create_connection(self.address, timeout=5)

    def _run(self) -> None:
        while not self._stop.wait(REOPEN_S):
            open_ = [s for s in self.socks if s is not None]
            readable, _, _ = select.select(open_, [], [], 0) if open_ else ([], [], [])
            for sock in readable:  # closed by the server (an idle client never gets data)
                i = self.socks.index(sock)
                sock.close()
                self.socks[i] = None
                self.reopened += 1
            self._fill()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=10)
        for sock in self.socks:
            if sock is not None:
                sock.close()


def timed_get(address: tuple[str, int], path: str, token: str | None) -> float:
    """Seconds until a GET on a fresh connection is answered (GET_TIMEOUT_S if it is not)."""
    start = time.monotonic()
    conn = http.client.HTTPConnection(*address, timeout=GET_TIMEOUT_S)
    try:
        conn.request("GET", path, headers={"Authorization": f"Bearer {token}"} if token else {})
        conn.getresponse().read()
    except (OSError, http.client.HTTPException) as error:
        log.warning("GET %s while idle connections were held: %r", path, error)
        return GET_TIMEOUT_S
    finally:
        conn.close()
    return time.monotonic() - start


def stall_ms(base_url: str, token: str | None = None, idle: int = IDLE,
             seconds: float = STALL_SECONDS) -> float:
    """The longest a GET waited, in ms, while `idle` idle connections were held open."""
    address = _split(base_url)
    holder = IdleHolder(address, idle)
    worst = 0.0
    try:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            worst = max(worst, timed_get(address, "/paths", token))
            time.sleep(EVERY_S)
    finally:
        holder.stop()
    log.info("idle connections reopened after the server closed them: %d", holder.reopened)
    return round(worst * 1000, 1)


def rest_figures(base_url: str, token: str | None) -> tuple[dict[str, float | int], list[str]]:
    """The section's figures (`rest_abuse_cases`, `rest_abuse_failures`,
    `rest_concurrent_failed` of 200 writes from 50 clients, `rest_stall_ms`) and notes."""
    results = run_cases(base_url, token)
    _answered, failed, final_ok = concurrent_writes(base_url, token, 50, 200)
    notes = [f"REST case failed: {r.case.name}: {r.status} {r.field!r} {r.problem}"
             for r in results if not r.ok]
    values: dict[str, float | int] = {
        "rest_abuse_cases": len(results),
        "rest_abuse_failures": sum(1 for r in results if not r.ok),
        "rest_concurrent_failed": failed + (0 if final_ok else 1),
        "rest_stall_ms": stall_ms(base_url, token),
    }
    return values, notes


@contextlib.contextmanager
def fake_server() -> Iterator[tuple[str, str]]:
    """The controller's REST server over a fake backend on 127.0.0.1: (its URL, its token)."""
    from mpsched.controller.northbound.rest import RestApi
    from mpsched.controller.northbound.server import RestServer
    from mpsched.testing.restfake import FakeBackend

    token = secrets.token_urlsafe(24)
    server: Any = RestServer(RestApi(FakeBackend(), token=token), "127.0.0.1", 0)
    server.start()
    try:
        yield "http://{}:{}".format(*server.address), token
    finally:
        server.stop()
