"""The os-ken application: hosts the controller and serves the REST API.

os-ken 4.x runs its hub on native threads by default (``OSKEN_HUB_TYPE``
unset or ``native``); it can still run on eventlet (``OSKEN_HUB_TYPE=eventlet``).
The app works on both:

- every P4Runtime session lives in a native thread (controller.southbound), so
  gRPC never runs inside an eventlet green thread (where it deadlocks);
- on the eventlet hub, the entry point patches with ``thread=False``, REST is
  served by eventlet's WSGI server and handlers hand blocking controller calls
  to a native thread pool, polling with ``hub.sleep`` so that the hub keeps
  running; on the native hub, REST is a threaded WSGI server.
"""

from __future__ import annotations

import logging
import socketserver
from concurrent.futures import ThreadPoolExecutor
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from os_ken.base import app_manager
from os_ken.lib import hub

from mpsched.controller.core import Controller
from mpsched.controller.northbound.rest import RestApi

log = logging.getLogger(__name__)

EVENTLET_HUB = hasattr(hub, "WSGIServer")


class _ThreadingWSGIServer(socketserver.ThreadingMixIn, WSGIServer):
    daemon_threads = True
    allow_reuse_address = True


class _QuietHandler(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        log.debug("REST %s", format % args)


class MultipathApp(app_manager.OSKenApp):
    """os-ken application of the in-network multipath scheduler."""

    def __init__(
        self,
        *args: Any,
        controller: Controller,
        rest_host: str = "127.0.0.1",
        rest_port: int = 8080,
        token: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        self.controller = controller
        self.rest_address = (rest_host, rest_port)
        self.token = token
        self._pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="rest-blocking")
        self._server: Any = None
        self._server_thread: Any = None

    def run_blocking(self, fn: Any, *args: Any) -> Any:
        if not EVENTLET_HUB:
            return fn(*args)
        future = self._pool.submit(fn, *args)
        while not future.done():
            hub.sleep(0.001)
        return future.result()

    def start(self) -> Any:
        thread = super().start()
        api = RestApi(self.controller, self.run_blocking, token=self.token)
        if EVENTLET_HUB:
            self._server = hub.WSGIServer(self.rest_address, api)
        else:
            host, port = self.rest_address
            self._server = make_server(
                host, port, api, server_class=_ThreadingWSGIServer, handler_class=_QuietHandler
            )
        self._server_thread = hub.spawn(self._server.serve_forever)
        self.controller.start()
        log.info(
            "REST API on http://%s:%d (%s hub)",
            *self.rest_address,
            "eventlet" if EVENTLET_HUB else "native",
        )
        return thread

    def stop(self) -> None:
        self.controller.stop()
        if self._server is not None:
            if EVENTLET_HUB:
                hub.kill(self._server_thread)
                self._server.server.close()
            else:
                self._server.shutdown()
                self._server.server_close()
            hub.joinall([self._server_thread])
        self._pool.shutdown(wait=False, cancel_futures=True)
        super().stop()
