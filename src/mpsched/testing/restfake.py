"""A REST backend without switches for the REST benchmarks and tests: the controller's
REST-facing methods over plain state, serialised by one lock like the controller's; classes,
policies and parameters go through the real `Scheduler`, so the controller's own validation
applies. What `mpsched bench reliability --only rest` serves when run without the testbed
(src/mpsched/testing/reststall.py), and the REST tests' backend."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from typing import Any

from mpsched.controller.model.errors import NotFoundError
from mpsched.controller.scheduling.classes import class_to_dict, policy_to_dict
from mpsched.controller.scheduling.scheduler import Scheduler

WRITE_S = 0.002  # a write's round trip to the switches


class FakeBackend:
    """The controller's REST-facing methods over plain state, serialised by one lock like
    the controller's; classes, policies and parameters go through the real Scheduler."""

    def __init__(self, paths: Sequence[int] = (1, 2)) -> None:
        self.lock = threading.Lock()
        self.weights = dict.fromkeys(paths, 1)
        self.admin = dict.fromkeys(paths, "up")
        self.scheduler = Scheduler(["s1"], list(paths))
        self.applied: list[tuple[int, int]] = []
        self.started = self.stopped = False

    # the controller's life cycle (MultipathApp)
    def start(self) -> None:
        self.started = True

    def stop(self) -> None:
        self.stopped = True

    def _path(self, path_id: int) -> dict[str, Any]:
        if path_id not in self.weights:
            raise NotFoundError(f"no path {path_id}")
        return {"id": path_id, "weight": self.weights[path_id], "admin": self.admin[path_id]}

    def path(self, path_id: int) -> dict[str, Any]:
        with self.lock:
            return self._path(path_id)

    def paths(self) -> list[dict[str, Any]]:
        with self.lock:
            return [self._path(p) for p in sorted(self.weights)]

    def switches(self) -> list[dict[str, Any]]:
        return [{"name": "s1", "state": "ready"}]

    def telemetry(self, path_id: int) -> dict[str, Any]:
        return {"id": self.path(path_id)["id"], "directions": {}}

    def telemetry_since(self, since: float, direction: str | None = None) -> dict[str, Any]:
        return {"now": time.time(), "paths": {}}

    def set_weight(self, path_id: int, weight: int) -> dict[str, Any]:
        with self.lock:
            self._path(path_id)
            time.sleep(WRITE_S)
            self.weights[path_id] = self.store(weight)
            self.applied.append((path_id, weight))
            return self._path(path_id)

    def store(self, weight: int) -> int:
        return weight

    def set_admin(self, path_id: int, up: bool) -> dict[str, Any]:
        with self.lock:
            self._path(path_id)
            self.admin[path_id] = "up" if up else "down"
            return self._path(path_id)

    def classes(self) -> list[dict[str, Any]]:
        with self.lock:
            return [class_to_dict(c) for c in self.scheduler.classes.values()]

    def set_classes(self, classes: list[Any]) -> list[dict[str, Any]]:
        with self.lock:
            self.scheduler.set_classes(classes)
        return self.classes()

    def _class(self, class_id: int) -> Any:
        if class_id not in self.scheduler.classes:
            raise NotFoundError(f"no class {class_id}")
        return self.scheduler.classes[class_id]

    def traffic_class(self, class_id: int) -> dict[str, Any]:
        with self.lock:
            return class_to_dict(self._class(class_id))

    def class_policy(self, class_id: int) -> dict[str, Any]:
        with self.lock:
            return policy_to_dict(self._class(class_id).policy)

    def set_class_policy(self, class_id: int, changes: dict[str, Any]) -> dict[str, Any]:
        with self.lock:
            self._class(class_id)
            return policy_to_dict(self.scheduler.set_class_policy(class_id, changes).policy)

    def params(self) -> dict[str, Any]:
        with self.lock:
            return {**self.scheduler.params.to_dict(), "schema": self.scheduler.params.schema()}

    def set_params(self, changes: dict[str, Any]) -> dict[str, Any]:
        with self.lock:
            self.scheduler.set_params(changes)
        return self.params()

    def decisions(self, since: float, limit: int, pair: str | None = None) -> dict[str, Any]:
        return {"now": time.time(), "decisions": [], "loop": {}}

    def mptcp_connections(self) -> dict[str, Any]:
        return {"steering": True, "connections": []}

    def mptcp_connection(self, conn_id: int) -> dict[str, Any]:
        raise NotFoundError(f"no MPTCP connection {conn_id}")
