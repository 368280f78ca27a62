"""A WSGI application on a real HTTP server for tests: wsgiref, one thread per request, on an
ephemeral port of 127.0.0.1, without request logging. The controller itself serves its REST
API with waitress (src/mpsched/controller/northbound/server.py); tests that need those exact
semantics
use that server instead."""

from __future__ import annotations

import socketserver
import threading
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server
from wsgiref.types import WSGIApplication


class _ThreadingWSGIServer(socketserver.ThreadingMixIn, WSGIServer):
    daemon_threads = True


class _QuietHandler(WSGIRequestHandler):
    def log_message(self, format, *args):
        pass


class ServedApp:
    """``app`` served until ``close()`` (or the end of a ``with`` block); ``url`` reaches it."""

    def __init__(self, app: WSGIApplication) -> None:
        self.server = make_server("127.0.0.1", 0, app, server_class=_ThreadingWSGIServer,
                                  handler_class=_QuietHandler)
        self.port: int = self.server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self._thread = threading.Thread(target=self.server.serve_forever,
                                        kwargs={"poll_interval": 0.02}, daemon=True)
        self._thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> ServedApp:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
