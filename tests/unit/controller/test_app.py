"""src/mpsched/controller/app.py: the os-ken application's settings from its arguments, blocking
calls on
the native hub, and stopping. (Starting it serves REST; that life cycle is tested with a
server, in northbound/test_rest_abuse.py, test_app_rest_listens_only_on_loopback_by_default.)"""

from __future__ import annotations

import threading

import pytest

from mpsched.controller import app
from mpsched.controller.app import MultipathApp


class FakeController:
    def __init__(self) -> None:
        self.stopped = 0

    def stop(self) -> None:
        self.stopped += 1


def test_settings_from_the_arguments():
    service = MultipathApp(controller=FakeController(), rest_port=9, rest_threads=3, token="t")
    try:
        assert service.rest_address == ("127.0.0.1", 9)
        assert service.rest_limits.threads == 3
        assert service.token == "t"
    finally:
        service.stop()


def test_on_the_native_hub_a_blocking_call_runs_in_the_callers_thread(monkeypatch):
    monkeypatch.setattr(app, "EVENTLET_HUB", False)
    service = MultipathApp(controller=FakeController())
    try:
        caller = threading.current_thread()
        assert service.run_blocking(lambda a, b: (a + b, threading.current_thread()), 1, 2) == (
            3, caller)
        with pytest.raises(ZeroDivisionError):
            service.run_blocking(lambda: 1 / 0)
    finally:
        service.stop()


def test_stop_without_start_stops_the_controller_and_the_pool():
    controller = FakeController()
    service = MultipathApp(controller=controller)
    service.stop()
    assert controller.stopped == 1
    with pytest.raises(RuntimeError):
        service._pool.submit(print)  # shut down: takes no more work
