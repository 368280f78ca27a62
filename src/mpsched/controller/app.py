"""The os-ken application: hosts the controller and serves the REST API.

os-ken 4.x runs its hub on native threads by default (``OSKEN_HUB_TYPE``
unset or ``native``); it can still run on eventlet (``OSKEN_HUB_TYPE=eventlet``).
The app works on both:

- every P4Runtime session lives in a native thread (controller.southbound), so
  gRPC never runs inside an eventlet green thread (where it deadlocks);
- on the native hub, REST is served by waitress (`northbound.server.RestServer`);
- on the eventlet hub, the entry point patches with ``thread=False``, REST is
  served by eventlet's WSGI server (`northbound.server.EventletRestServer`) and
  handlers hand blocking controller calls to a native thread pool, polling with
  ``hub.sleep`` so that the hub keeps running.
"""

from __future__ import annotations

import logging
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import Any

from os_ken.base import app_manager
from os_ken.lib import hub

from mpsched.controller.core import Controller
from mpsched.controller.northbound.guard import HostCheck
from mpsched.controller.northbound.rest import REST_THREADS, RestApi
from mpsched.controller.northbound.server import (
    EVENTLET_HUB,
    EventletRestServer,
    RestLimits,
    RestServer,
    RestTls,
)

log = logging.getLogger(__name__)


class MultipathApp(app_manager.OSKenApp):
    """os-ken application of the in-network multipath scheduler."""

    def __init__(
        self,
        *args: Any,
        controller: Controller,
        rest_host: str = "127.0.0.1",
        rest_port: int = 8080,
        token: str | None = None,
        rest_threads: int = REST_THREADS,
        rest_tls: RestTls | None = None,
        read_token: str | None = None,
        rest_host_names: tuple[str, ...] = (),
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        self.controller = controller
        self.rest_address = (rest_host, rest_port)
        self.token = token
        self.read_token = read_token  # None: reads need no token
        self.hosts = HostCheck.serving(rest_host, rest_host_names)
        self.rest_limits = replace(RestLimits(), threads=rest_threads)
        self.rest_tls = rest_tls  # None: plain HTTP
        self._pool = ThreadPoolExecutor(
            max_workers=rest_threads, thread_name_prefix="rest-blocking"
        )
        self._server: RestServer | EventletRestServer | None = None

    def run_blocking(self, fn: Any, *args: Any) -> Any:
        if not EVENTLET_HUB:
            return fn(*args)
        future = self._pool.submit(fn, *args)
        while not future.done():
            hub.sleep(0.001)
        return future.result()

    def start(self) -> Any:
        thread = super().start()
        api = RestApi(self.controller, self.run_blocking, token=self.token,
                      read_token=self.read_token, hosts=self.hosts)
        server_class = EventletRestServer if EVENTLET_HUB else RestServer
        self._server = server_class(api, *self.rest_address, self.rest_limits, self.rest_tls)
        self._server.start()
        self.controller.start()
        limits = self.rest_limits
        log.info(
            "REST API on %s://%s:%d (%s; %s hub: %d threads, backlog %d, "
            "%d connections, %d per client, request deadline %g s, idle timeout %g s)",
            "https" if self.rest_tls else "http",
            *self._server.address,
            "eventlet.wsgi" if EVENTLET_HUB else "waitress",
            "eventlet" if EVENTLET_HUB else "native",
            limits.threads,
            limits.backlog,
            limits.connection_limit,
            limits.per_client_limit,
            limits.request_timeout_s,
            limits.idle_timeout_s,
        )
        return thread

    def stop(self) -> None:
        # REST first: requests in progress finish while the controller still runs.
        if self._server is not None:
            self._server.stop()
            self._server = None
        self.controller.stop()
        self._pool.shutdown(wait=False, cancel_futures=True)
        super().stop()
