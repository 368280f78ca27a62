"""The os-ken application: hosts the controller and serves the REST API.

It runs on os-ken's native hub (threads; `OSKEN_HUB_TYPE` unset or ``native``: the entry
point refuses another): every P4Runtime session lives in a native thread
(controller.southbound), and REST is served by waitress (`northbound.server.RestServer`),
whose worker threads call the controller directly.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import Any

from os_ken.base import app_manager

from mpsched.controller.app.core import Controller
from mpsched.controller.northbound.guard import HostCheck
from mpsched.controller.northbound.rest import REST_THREADS, RestApi
from mpsched.controller.northbound.server import RestLimits, RestServer, RestTls

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
        self._server: RestServer | None = None

    def start(self) -> Any:
        thread = super().start()
        api = RestApi(self.controller, token=self.token, read_token=self.read_token,
                      hosts=self.hosts)
        self._server = RestServer(api, *self.rest_address, self.rest_limits, self.rest_tls)
        self._server.start()
        self.controller.start()
        limits = self.rest_limits
        log.info(
            "REST API on %s://%s:%d (waitress: %d threads, backlog %d, "
            "%d connections, %d per client, request deadline %g s, idle timeout %g s)",
            "https" if self.rest_tls else "http",
            *self._server.address,
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
        super().stop()
