"""src/mpsched/controller/app/app.py: the os-ken application's settings from its arguments, and
stopping. (Starting it serves REST; that life cycle is tested with a server, in
northbound/test_rest_abuse.py, test_app_rest_listens_only_on_loopback_by_default.)"""

from __future__ import annotations

from mpsched.controller.app.app import MultipathApp


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


def test_stop_without_start_stops_the_controller():
    controller = FakeController()
    service = MultipathApp(controller=controller)
    service.stop()
    assert controller.stopped == 1
