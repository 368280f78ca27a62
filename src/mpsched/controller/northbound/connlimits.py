"""Connection policing of the waitress REST server (server.py): a slow or idle client cannot hold
connections open, and one client cannot take them all.

- Request deadline: a connection must deliver a whole request (request line, headers, body)
  within `request_timeout_s` of being accepted (the TLS handshake included) or, for a later
  request on a kept-alive connection, of that request's first byte; else it is closed. A
  slowloris client (headers sent a byte at a time) is cut off there.
- Idle: a kept-alive connection with no request for `idle_timeout_s` is closed.
- Per client (source address): at most `per_client_limit` connections. A new one beyond that
  closes the client's own connection that has waited longest for a request; if every one of
  them is busy (a request queued or running, or its answer not yet sent), the new one is
  closed instead.
- Total: at `connection_limit`, the connection (any client's) that has waited longest for a
  request, for at least `GRACE_S`, is closed to make room; only when there is none does
  accepting pause (new clients then wait in the listen backlog).

A connection whose request has arrived but not been read yet (bytes waiting on its socket) is
never the one closed: it is about to be busy.

Why the longest-waiting connection goes first: a fresh client's connection is the newest, and
the loop reads its request in the next round, so a flood of idle connections closes its own
older ones, never the fresh request (the stall this prevents: 300 idle connections against a
limit of 256 held every new client in the backlog until the 30 s idle timeout).

The choices are pure functions over `ConnView`s; `PolicedServer` and `PolicedChannel` apply
them to waitress's server and channels, on its loop thread only (no worker thread touches a
connection that is not busy).
"""

from __future__ import annotations

import logging
import select
import time
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from waitress.channel import HTTPChannel

log = logging.getLogger(__name__)

REPORT_EVERY_S = 10.0  # closings are logged as one summary at most this often
# Another client's connection is closed for room only once it has waited this long: the loop
# has read the request of any client that sent one by then.
GRACE_S = 0.5


@dataclass(frozen=True)
class ConnPolicy:
    """The limits `PolicedServer` enforces (server.py's `RestLimits` gives them)."""

    connection_limit: int
    per_client_limit: int
    request_timeout_s: float
    idle_timeout_s: float


@dataclass(frozen=True)
class ConnView:
    """What the policy needs of a connection: its `key` (file descriptor), its client's
    address, whether it is busy, since when it waits for its current request (accept, or its
    first byte; None between requests) and its last activity (time.time())."""

    key: int
    client: str
    busy: bool
    request_since: float | None
    last_activity: float

    @property
    def waiting_since(self) -> float:
        return self.last_activity if self.request_since is None else self.request_since


def overdue(conn: ConnView, now: float, policy: ConnPolicy) -> str | None:
    """Why `conn` must be closed now ("request" or "idle"), or None."""
    if conn.busy:
        return None
    if conn.request_since is not None:
        return "request" if now - conn.request_since > policy.request_timeout_s else None
    return "idle" if now - conn.last_activity > policy.idle_timeout_s else None


def eviction_order(conns: Iterable[ConnView], now: float, grace_s: float = 0.0
                   ) -> list[ConnView]:
    """The connections that may be closed to make room, the longest-waiting first: not busy,
    and waiting for at least `grace_s`."""
    free = [c for c in conns if not c.busy and now - c.waiting_since >= grace_s]
    return sorted(free, key=lambda c: (c.waiting_since, c.key))


def with_input(fds: Iterable[int]) -> set[int]:
    """Those of `fds` with bytes (or a close) waiting to be read: a request that has arrived
    but that the loop has not read yet, so its connection is about to be busy."""
    poller = select.poll()
    for fd in fds:
        poller.register(fd, select.POLLIN)
    return {fd for fd, _events in poller.poll(0)}


class PolicedChannel(HTTPChannel):
    """waitress's channel that knows since when it waits for its current request."""

    request_since: float | None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.request_since = self.creation_time  # the first request: from the accept

    def received(self, data: bytes) -> bool:
        before = self.request
        if self.request_since is None and data:
            self.request_since = time.time()  # a later request's first byte
        result = super().received(data)
        if self.request is None:  # every request received whole: none pending
            self.request_since = None
        elif before is not None and self.request is not before:  # one done, the next begun
            self.request_since = time.time()
        return bool(result)

    def view(self) -> ConnView:
        busy = bool(self.requests or self.total_outbufs_len or self.will_close
                    or self.close_when_flushed)
        return ConnView(self._fileno or -1, client_of(self.addr), busy, self.request_since,
                        self.last_activity)


def client_of(addr: Any) -> str:
    """A connection's client: its source address (without the port)."""
    return str(addr[0]) if isinstance(addr, tuple) and addr else str(addr)


class PolicedServer:
    """Mixin for waitress's TcpWSGIServer (before it in the bases): the per-client limit at
    accept, and `sweep` for the deadlines and the total limit, called by the loop's owner
    between rounds (server.py `RestServer._run`)."""

    policy: ConnPolicy
    active_channels: dict[int, Any]
    _closed: Counter[str]
    _reported: float

    def police(self, policy: ConnPolicy) -> None:
        """Enforce `policy` from now on (before the loop runs)."""
        self.policy = policy
        self._closed = Counter()
        self._reported = time.time()

    def accept(self) -> tuple[Any, Any] | None:
        pair = super().accept()  # type: ignore[misc]
        if pair is None:
            return None
        conn, addr = pair
        refusal = self._make_room(client_of(addr))
        if refusal is not None:
            conn.close()
            self._tally(refusal)
            return None
        return pair

    def _make_room(self, client: str) -> str | None:
        """Close a connection if `client`, or the server, is at its limit; why the new
        connection is refused instead (every candidate busy), or None."""
        views = [c.view() for c in self._channels()]
        mine = [v for v in views if v.client == client]
        if len(mine) >= self.policy.per_client_limit:
            victim = self._victim(mine, 0.0)  # a client crowding itself: no grace
            if victim is None:
                return "refused: every connection of its client busy"
            self._close(victim.key, "closed: its client at the per-client limit")
            views.remove(victim)
        if len(views) >= self.policy.connection_limit:
            victim = self._victim(views, GRACE_S)
            if victim is None:
                return "refused: every connection busy"
            self._close(victim.key, "closed: the connection limit")
        return None

    @staticmethod
    def _victim(views: list[ConnView], grace_s: float) -> ConnView | None:
        """The connection to close for room: the longest-waiting one without input."""
        order = eviction_order(views, time.time(), grace_s)
        if not order:
            return None
        arrived = with_input(v.key for v in order)
        return next((v for v in order if v.key not in arrived), None)

    def readable(self) -> bool:
        """At the total limit, go on accepting while some connection is not busy (`accept`
        closes one to make room); waitress's own check pauses accepting otherwise."""
        if (getattr(self, "accepting", False)
                and len(self.active_channels) >= self.policy.connection_limit
                and self._victim([c.view() for c in self._channels()], GRACE_S) is not None):
            return True
        return bool(super().readable())  # type: ignore[misc]

    def sweep(self, now: float | None = None) -> None:
        """Close the connections past their request deadline or idle timeout."""
        now = time.time() if now is None else now
        for conn in [c.view() for c in self._channels()]:
            reason = overdue(conn, now, self.policy)
            if reason is not None:
                self._close(conn.key, f"closed: {reason} timeout")
        self._report(now)

    def _channels(self) -> list[PolicedChannel]:
        return [c for c in self.active_channels.values() if isinstance(c, PolicedChannel)]

    def _close(self, key: int, reason: str) -> None:
        channel = self.active_channels.get(key)
        if channel is not None:
            channel.handle_close()
            self._tally(reason)

    def _tally(self, reason: str) -> None:
        self._closed[reason] += 1

    def _report(self, now: float) -> None:
        """One line for the closings since the last one: a warning when a limit or the
        request deadline was hit, debug when only idle connections were closed."""
        if not self._closed or now - self._reported < REPORT_EVERY_S:
            return
        summary = ", ".join(f"{n} {reason}" for reason, n in sorted(self._closed.items()))
        only_idle = all(reason.endswith("idle timeout") for reason in self._closed)
        log.log(logging.DEBUG if only_idle else logging.WARNING,
                "REST connections in the last %.0f s: %s", now - self._reported, summary)
        self._closed.clear()
        self._reported = now
