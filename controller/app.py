"""The os-ken application: hosts the controller and serves the REST API.

os-ken runs on eventlet. gRPC deadlocks under eventlet-patched threads, so the
process patches with ``thread=False`` and keeps every P4Runtime session in a
native thread (controller.southbound). REST handlers run in green threads and
hand blocking controller calls to a native thread pool, polling for the result
with ``hub.sleep`` so that the hub keeps running.
"""

from __future__ import annotations

import logging
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from os_ken.base import app_manager
from os_ken.lib import hub

from .core import Controller
from .rest import RestApi

log = logging.getLogger(__name__)


class MultipathApp(app_manager.OSKenApp):
    """os-ken application of the in-network multipath scheduler."""

    def __init__(
        self,
        *args: Any,
        controller: Controller,
        rest_host: str = "127.0.0.1",
        rest_port: int = 8080,
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        self.controller = controller
        self.rest_address = (rest_host, rest_port)
        self._pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="rest-blocking")
        self._server: Any = None

    def run_blocking(self, fn: Any, *args: Any) -> Any:
        future = self._pool.submit(fn, *args)
        while not future.done():
            hub.sleep(0.001)
        return future.result()

    def start(self) -> Any:
        thread = super().start()
        self._server = hub.WSGIServer(
            self.rest_address, RestApi(self.controller, self.run_blocking)
        )
        self.threads.append(hub.spawn(self._server.serve_forever))
        self.controller.start()
        log.info("REST API on http://%s:%d", *self.rest_address)
        return thread

    def stop(self) -> None:
        self.controller.stop()
        if self._server is not None:
            self._server.server.close()
        self._pool.shutdown(wait=False, cancel_futures=True)
        super().stop()
