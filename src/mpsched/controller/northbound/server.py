"""The REST API's HTTP servers, both with the limits of `RestLimits`.

- On os-ken's native hub, waitress (`RestServer`): one thread multiplexes the connections, a
  fixed pool of worker threads runs the requests.
- On the eventlet hub, eventlet's WSGI server (`EventletRestServer`).

A listen backlog far above a burst of clients (wsgiref's default of 5 refused connections
under 50 concurrent clients), a bounded number of open connections, and bodies bounded (the API
refuses bodies over jsonbody.MAX_BODY itself, with its JSON error; waitress reads bodies up to
`RestLimits.max_body` whole before that, so the connection stays usable, and refuses larger
ones at the headers).

On waitress, connlimits.py polices the connections: a request must arrive whole within a short
deadline of the accept (TLS handshake included), idle kept-alive connections close soon, each
client address has a connection limit, and at a limit the connection that has waited longest
for a request is closed to make room, so idle or slow clients cannot stall the others. waitress
offers only an idle timeout and a total limit at which it stops accepting; the rest hooks its
accept and runs a sweep between rounds of its loop, parsing nothing itself. eventlet's server
keeps its idle timeout (`idle_timeout_s` per read) and connection limit only.

Either serves HTTPS when given a `RestTls` (docs/security.md). waitress has no TLS of its own:
`_TlsServer` wraps each accepted connection in the `ssl` module's server-side socket and
`_TlsChannel` lets waitress's non-blocking loop drive the handshake and the records (a TLS
socket that needs more bytes raises SSLWantRead/WriteError where a plain one would return or
block). Wrapping per connection keeps the accept loop itself plain, so a client that never
finishes its handshake holds one connection, not the listener, and only until the request
deadline. eventlet has TLS sockets of its own (`eventlet.wrap_ssl` around the listening socket).
"""

from __future__ import annotations

import json
import logging
import math
import ssl
import threading
import time
from dataclasses import dataclass
from typing import Any

from os_ken.lib import hub
from waitress import wasyncore
from waitress.adjustments import Adjustments
from waitress.channel import HTTPChannel
from waitress.server import TcpWSGIServer
from waitress.task import ErrorTask, ThreadedTaskDispatcher

from mpsched.controller.northbound.connlimits import ConnPolicy, PolicedChannel, PolicedServer
from mpsched.controller.northbound.guard import ERROR_HEADERS
from mpsched.controller.northbound.jsonbody import MAX_BODY
from mpsched.controller.northbound.rest import REST_THREADS

log = logging.getLogger(__name__)

EVENTLET_HUB = hasattr(hub, "WSGIServer")
SWEEP_S = 0.25  # how often the deadlines and the total limit are enforced (connlimits.py)


@dataclass(frozen=True)
class RestLimits:
    """Limits of the REST server (both hubs unless noted)."""

    threads: int = REST_THREADS  # worker threads (eventlet: the blocking-call pool)
    backlog: int = 1024  # listen(2) backlog: clients wait here while every connection is busy
    connection_limit: int = 256  # open connections (waitress: at the limit, connlimits.py)
    per_client_limit: int = 64  # waitress: open connections of one client address
    request_timeout_s: float = 5.0  # waitress: a request (line, headers, body) arrives in this
    idle_timeout_s: float = 10.0  # a kept-alive connection with no request this long closes
    max_body: int = 16 * MAX_BODY  # waitress: read whole up to this, refused (413) above
    max_header_bytes: int = 64 * 1024  # waitress: request line + headers, 431 above
    stop_grace_s: float = 5.0  # on stop, requests in progress get this long to finish


class _JsonErrorTask(ErrorTask):
    """Errors waitress answers itself (malformed HTTP, headers or body too large) in the
    API's format ``{"error": ..., "field": ...}``."""

    def execute(self) -> None:
        error = self.request.error
        body = json.dumps(
            {
                "error": f"{error.reason}: {error.body}",
                "field": "body" if error.code == 413 else None,
            }
        ).encode()
        self.status = f"{error.code} {error.reason}"
        self.response_headers.append(("Content-Type", "application/json"))
        self.response_headers.extend(ERROR_HEADERS)
        self.set_close_on_finish()
        self.content_length = len(body)
        self.write(body)


class _Channel(PolicedChannel):
    error_task_class = _JsonErrorTask


class _Server(PolicedServer, TcpWSGIServer):
    channel_class = _Channel


@dataclass(frozen=True)
class RestTls:
    """The REST server's certificate and key (PEM files)."""

    cert: str
    key: str

    def context(self) -> ssl.SSLContext:
        """A server context with them; OSError or ssl.SSLError for a bad file."""
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(self.cert, self.key)
        return context


class _PendingError(Exception):
    """A TLS record is incomplete: wait for the socket to be ready again."""


class _TlsChannel(_Channel):
    def recv(self, buffer_size: int) -> bytes:
        try:
            data = super().recv(buffer_size)
        except (ssl.SSLWantReadError, ssl.SSLWantWriteError):
            raise _PendingError from None
        # bytes TLS decrypted already wake no poll(): take them now
        while data and self.socket.pending():
            data += self.socket.recv(self.socket.pending())
        return data

    def handle_read(self) -> None:
        try:
            super().handle_read()
        except _PendingError:
            return

    def send(self, data: bytes, do_close: bool = True) -> int:
        try:
            return super().send(data, do_close)
        except (ssl.SSLWantReadError, ssl.SSLWantWriteError):
            return 0


class _TlsServer(_Server):
    channel_class = _TlsChannel
    ssl_context: ssl.SSLContext

    def accept(self) -> tuple[Any, Any] | None:
        pair = super().accept()
        if pair is None:
            return None
        conn, addr = pair
        wrapped = self.ssl_context.wrap_socket(conn, server_side=True,
                                               do_handshake_on_connect=False)
        return wrapped, addr


class RestServer:
    """A WSGI app served by waitress on native threads; `start` runs it, `stop` ends it
    (listening socket closed, requests in progress finished within the grace time,
    connections closed, every thread joined)."""

    def __init__(
        self, app: Any, host: str, port: int, limits: RestLimits | None = None,
        tls: RestTls | None = None,
    ) -> None:
        self.limits = limits or RestLimits()
        context = tls.context() if tls else None
        adj = Adjustments(
            host=host,
            port=port,
            threads=self.limits.threads,
            backlog=self.limits.backlog,
            # the map holds the listener and the wake-up pipe besides the connections
            connection_limit=self.limits.connection_limit + 2,
            channel_timeout=math.ceil(self.limits.idle_timeout_s),
            cleanup_interval=max(1, math.ceil(self.limits.idle_timeout_s) // 3),
            max_request_body_size=self.limits.max_body,
            max_request_header_size=self.limits.max_header_bytes,
            asyncore_use_poll=True,
            ident="mpsched",
            expose_tracebacks=False,
        )
        # Requests queue for a worker under bursts: expected, bounded by the connection
        # limit; waitress would warn once per queued request.
        logging.getLogger("waitress.queue").setLevel(logging.ERROR)
        self._map: dict = {}
        # Threads start only once the socket is bound: a busy port leaves none behind.
        self._dispatcher = ThreadedTaskDispatcher()
        server_class = _Server if context is None else _TlsServer
        try:
            self._server = server_class(app, map=self._map, adj=adj, dispatcher=self._dispatcher)
        except BaseException:
            wasyncore.close_all(self._map, ignore_all=True)
            raise
        if isinstance(self._server, _TlsServer) and context is not None:
            self._server.ssl_context = context
        self._server.police(ConnPolicy(
            connection_limit=self.limits.connection_limit,
            per_client_limit=self.limits.per_client_limit,
            request_timeout_s=self.limits.request_timeout_s,
            idle_timeout_s=self.limits.idle_timeout_s,
        ))
        self._dispatcher.set_thread_count(self.limits.threads)
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self._closed = False
        self._close_lock = threading.Lock()  # the wake-up pipe is never written once closed

    @property
    def address(self) -> tuple[str, int]:
        return self._server.effective_host, int(self._server.effective_port)

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="rest-http", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stopping.set()
        if self._thread is None:
            self._close()
            return
        with self._close_lock:
            if not self._closed:
                self._server.pull_trigger()
        self._thread.join(timeout=2 * self.limits.stop_grace_s + 5)
        if self._thread.is_alive():
            log.error("REST server thread did not stop")

    def _run(self) -> None:
        try:
            next_sweep = 0.0
            while not self._stopping.is_set():
                wasyncore.loop(timeout=SWEEP_S, map=self._map, use_poll=True, count=1)
                if time.monotonic() >= next_sweep:  # between rounds: no channel in use
                    self._server.sweep()
                    next_sweep = time.monotonic() + SWEEP_S
            self._drain()
        except Exception:
            log.exception("REST server loop failed")
        finally:
            self._close()

    def _drain(self) -> None:
        """Stop accepting, let requests in progress finish and their answers go out,
        close connections as they become idle."""
        wasyncore.dispatcher.close(self._server)  # the listening socket only
        deadline = time.monotonic() + self.limits.stop_grace_s
        while time.monotonic() < deadline:
            channels = [c for c in self._map.values() if isinstance(c, HTTPChannel)]
            if not channels:
                return
            for channel in channels:
                if not channel.requests and not channel.total_outbufs_len:
                    channel.will_close = True
            wasyncore.loop(timeout=0.05, map=self._map, use_poll=True, count=1)
        log.warning("REST server: connections still busy after %.1f s", self.limits.stop_grace_s)

    def _close(self) -> None:
        """Connections first (a worker waiting to hand output to the loop is released),
        then the workers, then the wake-up pipe the workers write to."""
        if self._closed:
            return
        for channel in list(self._map.values()):
            if isinstance(channel, HTTPChannel):
                channel.handle_close()
        if self._server.accepting:
            wasyncore.dispatcher.close(self._server)
        self._dispatcher.shutdown(cancel_pending=True, timeout=self.limits.stop_grace_s)
        with self._close_lock:
            self._closed = True
            wasyncore.close_all(self._map, ignore_all=True)


class _EventletLog:
    """eventlet.wsgi's log: access lines at DEBUG, its errors as warnings."""

    def info(self, msg: str, *args: Any, **_kw: Any) -> None:
        log.debug("REST " + msg.rstrip(), *args)

    def debug(self, msg: str, *args: Any, **_kw: Any) -> None:
        log.debug("REST " + msg.rstrip(), *args)

    def error(self, msg: str, *args: Any, **_kw: Any) -> None:
        log.warning("REST " + msg.rstrip(), *args)


class EventletRestServer:
    """The same app on eventlet's WSGI server (the eventlet hub): a green thread per
    connection, at most `connection_limit` of them; bodies are bounded by the API."""

    def __init__(
        self, app: Any, host: str, port: int, limits: RestLimits | None = None,
        tls: RestTls | None = None,
    ) -> None:
        import eventlet

        self.app = app
        self.limits = limits or RestLimits()
        self._sock = eventlet.listen((host, port), backlog=self.limits.backlog)
        if tls is not None:
            self._sock = eventlet.wrap_ssl(self._sock, certfile=tls.cert, keyfile=tls.key,
                                           server_side=True)
        self._thread: Any = None

    @property
    def address(self) -> tuple[str, int]:
        host, port = self._sock.getsockname()[:2]
        return host, int(port)

    def start(self) -> None:
        import eventlet.wsgi

        self._thread = hub.spawn(
            eventlet.wsgi.server,
            self._sock,
            self.app,
            log=_EventletLog(),
            max_size=self.limits.connection_limit,
            socket_timeout=self.limits.idle_timeout_s,
            debug=False,
        )

    def stop(self) -> None:
        if self._thread is not None:
            hub.kill(self._thread)
        self._sock.close()
        if self._thread is not None:
            hub.joinall([self._thread])
