"""The REST API on its real server (waitress, as the controller runs it on the native hub) on
127.0.0.1 under abuse and load, with a fake backend: no switch, but the controller's own
validation of classes, policies and parameters (the real `Scheduler`).

The abuse table and the concurrent writer are `mpsched.testing.restabuse` (also run by hand
against a real controller: `mpsched bench rest-abuse --url ...`).
"""

from __future__ import annotations

import contextlib
import http.client
import json
import socket
import threading
import time
from pathlib import Path

import pytest

from mpsched.controller.__main__ import build_parser
from mpsched.controller.app.app import MultipathApp
from mpsched.controller.northbound.jsonbody import MAX_BODY
from mpsched.controller.northbound.rest import RestApi
from mpsched.controller.northbound.server import RestLimits, RestServer
from mpsched.controller.scheduling.classes import DEFAULT_CLASS_ID
from mpsched.proc.bmv2 import free_port
from mpsched.testing import restabuse
from mpsched.testing.restabuse import CASES, Write, concurrent_writes, possible_last, run_cases
from mpsched.testing.restfake import FakeBackend
from tests.conftest import TOKEN


def serve(backend, token=TOKEN, limits=None):
    server = RestServer(RestApi(backend, token=token), "127.0.0.1", 0, limits)
    server.start()
    return server, "http://{}:{}".format(*server.address)


@pytest.fixture
def served():
    backend = FakeBackend()
    server, url = serve(backend)
    try:
        yield url, backend
    finally:
        server.stop()


def failures(results):
    return [f"{r.case.name}: {r.problem}" for r in results if not r.ok]


def test_abuse_cases_answered_as_documented(served):
    url, _ = served
    results = run_cases(url, TOKEN)
    assert len(results) == len(CASES) + 1  # every case, and the state check
    assert failures(results) == []


def test_abuse_cases_without_a_token_skip_only_the_token_cases():
    server, url = serve(FakeBackend(), token=None)
    try:
        results = run_cases(url, None)
    finally:
        server.stop()
    assert len(results) == sum(1 for c in CASES if not c.needs_token) + 1
    assert failures(results) == []


def test_a_case_with_the_wrong_expectation_fails(served):
    """The runner reports what differs: status, field, a missing answer."""
    url, _ = served
    wrong = (
        restabuse.Case("expects 404", "PUT", "/paths/{path}/weight", b"{}", status=404,
                       field="weight"),
        restabuse.Case("expects field x", "PUT", "/paths/{path}/weight", b"{}", field="x"),
    )
    results = run_cases(url, TOKEN, wrong)
    assert [r.ok for r in results] == [False, False, True]
    assert "status 400, expected 404" in results[0].problem
    assert "field 'weight', expected 'x'" in results[1].problem
    gone = restabuse.check_case(f"http://127.0.0.1:{free_port()}", TOKEN, wrong[0], 1)
    assert gone.status is None and "no answer" in gone.problem


def test_state_check_catches_an_accepted_bad_request(served):
    url, _ = served
    accepted = restabuse.Case("a valid write", "PUT", "/paths/{path}/weight",
                              b'{"weight": 7}', status=200)
    results = run_cases(url, TOKEN, (accepted,))
    assert "changed by refused requests: paths" in results[-1].problem


def test_concurrent_writes_all_answered_and_consistent(served):
    url, backend = served
    answered, failed, final_ok = concurrent_writes(url, TOKEN, clients=50, writes=200)
    assert (answered, failed, final_ok) == (200, 0, True)
    assert len(backend.applied) == 200 + 2  # and the weights put back
    assert backend.weights == {1: 1, 2: 1}


def test_concurrent_writes_detect_a_lost_write():
    """A backend that acknowledges writes but keeps another value is caught."""

    class Lossy(FakeBackend):
        def store(self, weight):
            return 0  # never written: the plan writes 1..255

    server, url = serve(Lossy())
    try:
        answered, failed, final_ok = concurrent_writes(url, TOKEN, clients=10, writes=20)
    finally:
        server.stop()
    assert (answered, failed, final_ok) == (20, 0, False)


def test_possible_last_is_linearisable_register():
    w = [Write(1, 10, sent=0.0, acked=1.0, status=200),
         Write(1, 11, sent=0.5, acked=2.0, status=200),  # overlaps the first
         Write(1, 12, sent=3.0, acked=4.0, status=200),  # after both: the only last
         Write(2, 20, sent=0.0, acked=1.0, status=200),
         Write(2, 21, sent=0.5, acked=1.5, status=200),
         Write(3, 30, sent=0.0, acked=1.0, status=503),
         Write(4, 40, sent=0.0, acked=1.0, status=200),
         Write(4, 41, sent=2.0, acked=3.0, status=None)]  # no answer: may have applied
    assert possible_last(w, 1, 1) == {12}
    assert possible_last(w, 2, 1) == {20, 21}
    assert possible_last(w, 3, 1) == {30, 1}
    assert possible_last(w, 4, 1) == {40, 41}


def test_plan_writes_distinct_values_per_path():
    plan = restabuse.plan_writes([1, 2], 200)
    for path_id in (1, 2):
        values = [w.weight for w in plan if w.path_id == path_id]
        assert len(values) == 100 == len(set(values)) and 0 not in values


# -- the server itself ---------------------------------------------------------------


def listening(port):
    """(address, family) of every socket listening on TCP `port` (/proc/net/tcp, tcp6)."""
    out = []
    for name, family in (("/proc/net/tcp", 4), ("/proc/net/tcp6", 6)):
        try:
            lines = Path(name).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            addr, port_hex = fields[1].rsplit(":", 1)
            if fields[3] == "0A" and int(port_hex, 16) == port:  # 0A: LISTEN
                if family == 4:
                    addr = socket.inet_ntoa(bytes.fromhex(addr)[::-1])
                out.append((addr, family))
    return out


def test_app_rest_listens_only_on_loopback_by_default():
    assert build_parser().parse_args(["--netcfg", "x"]).rest_host == "127.0.0.1"
    port = free_port()
    backend = FakeBackend()
    app = MultipathApp(controller=backend, rest_port=port)
    app.start()
    try:
        assert backend.started
        assert listening(port) == [("127.0.0.1", 4)]
        status, _, data = restabuse.request(f"http://127.0.0.1:{port}", "GET", "/paths")
        assert status == 200 and [p["id"] for p in json.loads(data)] == [1, 2]
    finally:
        app.stop()
    assert backend.stopped and listening(port) == []


def threads_now():
    return {t for t in threading.enumerate() if t.is_alive()}


def test_stop_leaves_no_thread_and_releases_the_port():
    before = threads_now()
    server, url = serve(FakeBackend())
    port = server.address[1]
    assert restabuse.request(url, "GET", "/paths")[0] == 200
    idle = socket.create_connection(("127.0.0.1", port))  # keep-alive client, idle
    server.stop()
    deadline = time.monotonic() + 5
    while threads_now() - before and time.monotonic() < deadline:
        time.sleep(0.05)
    assert {t.name for t in threads_now() - before} == set()
    assert listening(port) == []
    idle.settimeout(5)
    # closed by the server (reset if it was still in the backlog, never accepted)
    with contextlib.suppress(ConnectionResetError):
        assert idle.recv(1) == b""
    idle.close()
    with socket.socket() as again:  # the port is free to bind (as any server binds it)
        again.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        again.bind(("127.0.0.1", port))


def test_stop_finishes_a_request_in_progress():
    started = threading.Event()

    class Slow(FakeBackend):
        def set_weight(self, path_id, weight):
            started.set()
            time.sleep(0.5)
            return super().set_weight(path_id, weight)

    server, url = serve(Slow())
    answer = {}

    def write():
        answer["got"] = restabuse.request(
            url, "PUT", "/paths/1/weight", b'{"weight": 9}',
            (("Authorization", f"Bearer {TOKEN}"),),
        )

    writer = threading.Thread(target=write)
    writer.start()
    assert started.wait(10)
    server.stop()
    writer.join(5)
    status, _, data = answer["got"]
    assert status == 200 and json.loads(data)["weight"] == 9


def test_busy_port_is_an_error_and_leaves_no_thread():
    before = threads_now()
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        with pytest.raises(OSError):
            RestServer(RestApi(FakeBackend()), "127.0.0.1", taken.getsockname()[1])
    assert threads_now() - before == set()


def test_more_clients_than_connections_wait_instead_of_failing():
    """Beyond the connection limit new clients wait in the backlog, and get answers."""
    limits = RestLimits(threads=2, connection_limit=4)
    server, url = serve(FakeBackend(), limits=limits)
    try:
        answered, failed, final_ok = concurrent_writes(url, TOKEN, clients=30, writes=60)
    finally:
        server.stop()
    assert (answered, failed, final_ok) == (60, 0, True)


def test_idle_connection_is_closed_after_the_timeout():
    server, url = serve(FakeBackend(), limits=RestLimits(idle_timeout_s=1))
    try:
        sock = socket.create_connection(server.address)
        sock.settimeout(10)
        start = time.monotonic()
        assert sock.recv(1) == b""  # a client that never sends a request is dropped
        assert time.monotonic() - start < 8
        sock.close()
    finally:
        server.stop()


def test_keep_alive_connection_serves_many_requests(served):
    url, _ = served
    conn = http.client.HTTPConnection(*url[len("http://"):].split(":"), timeout=10)
    try:
        for _ in range(20):
            conn.request("GET", "/paths")
            response = conn.getresponse()
            assert response.status == 200 and json.loads(response.read())
        conn.request("PUT", "/paths/1/weight", b" " * (MAX_BODY + 1),
                     {"Authorization": f"Bearer {TOKEN}"})
        response = conn.getresponse()
        assert response.status == 413 and json.loads(response.read())["field"] == "body"
        conn.request("GET", "/paths/1")  # the connection is still in step
        assert conn.getresponse().status == 200
    finally:
        conn.close()


@pytest.mark.parametrize(
    ("content_type", "status"),
    [
        (None, 200),
        ("application/json", 200),
        ("application/json; charset=utf-8", 200),
        ("application/merge-patch+json", 200),
        ("application/x-www-form-urlencoded", 200),  # curl -d
        ("text/plain", 200),
        ("text/html", 415),
        ("application/json; charset=utf-16", 415),
    ],
)
def test_content_types(served, content_type, status):
    url, backend = served
    headers = [("Authorization", f"Bearer {TOKEN}")]
    if content_type:
        headers.append(("Content-Type", content_type))
    got, _, data = restabuse.request(url, "PUT", "/paths/2/weight", b'{"weight": 4}', headers)
    assert got == status, data
    assert backend.weights[2] == (4 if status == 200 else 1)
    if status != 200:
        assert json.loads(data)["field"] is None


def test_default_class_policy_names_fields_under_policy(served):
    url, _ = served
    status, _, data = restabuse.request(
        url, "PUT", f"/classes/{DEFAULT_CLASS_ID}/policy", b'{"params": {"a": {"b": NaN}}}',
        (("Authorization", f"Bearer {TOKEN}"),),
    )
    assert status == 400 and json.loads(data)["field"] == "policy.params.a.b"


def test_bmv2_grpc_binds_to_loopback(monkeypatch, tmp_path):
    """BMv2's P4Runtime server is started on 127.0.0.1 (its own default is 0.0.0.0:9559);
    its Thrift port cannot be (docs/design.md, listening sockets)."""
    from mpsched.proc import bmv2

    monkeypatch.setattr(bmv2.shutil, "which", lambda name: f"/usr/bin/{name}")
    sw = bmv2.Bmv2Switch("s1", 1, {1: "veth0"}, tmp_path)
    cmd = sw.command()
    assert cmd[cmd.index("--grpc-server-addr") + 1] == f"127.0.0.1:{sw.grpc_port}"
