"""The REST server against clients that hold connections (connlimits.py) and the checks every
request passes (guard.py, the read token of auth.py): idle connections do not stall a GET, a
slowloris is cut off, the per-client and total limits close the longest-waiting connection,
the Host check, the security headers, the read token. Every test is bounded in time (socket
timeouts; the server's own deadlines are shortened)."""

from __future__ import annotations

import http.client
import socket
import threading
import time

import pytest

from mpsched.controller.northbound.connlimits import (
    ConnPolicy,
    ConnView,
    eviction_order,
    overdue,
)
from mpsched.controller.northbound.guard import API_CSP, UI_CSP, HostCheck
from mpsched.controller.northbound.rest import RestApi
from mpsched.controller.northbound.server import RestLimits, RestServer
from mpsched.testing import restabuse, reststall
from mpsched.testing.restfake import FakeBackend
from tests.conftest import TOKEN

READ = "read-token"
POLICY = ConnPolicy(connection_limit=4, per_client_limit=2, request_timeout_s=5,
                    idle_timeout_s=10)


@pytest.fixture
def serve():
    """serve(limits=None, **api_kwargs) -> (server, url); every server stopped afterwards."""
    servers = []

    def start(limits=None, **kwargs):
        kwargs.setdefault("token", TOKEN)
        server = RestServer(RestApi(FakeBackend(), **kwargs), "127.0.0.1", 0, limits)
        server.start()
        servers.append(server)
        return server, "http://{}:{}".format(*server.address)

    yield start
    for server in servers:
        server.stop()


def closed_within(sock, seconds):
    """Whether the server closed `sock` within `seconds` (EOF or reset)."""
    sock.settimeout(seconds)
    try:
        return sock.recv(1) == b""
    except ConnectionResetError:
        return True
    except TimeoutError:
        return False


def connect(address, source="127.0.0.1"):
    sock = socket.socket()
    sock.bind((source, 0))
    sock.connect(address)
    return sock


def get(url, path="/paths", headers=()):
    return restabuse.request(url, "GET", path, headers=headers, timeout=10)


# -- the policy's pure functions -------------------------------------------------------


def view(key, busy=False, request_since=None, last_activity=0.0, client="a"):
    return ConnView(key, client, busy, request_since, last_activity)


def test_overdue_request_and_idle():
    assert overdue(view(1, request_since=0.0), 5.1, POLICY) == "request"
    assert overdue(view(1, request_since=0.0), 4.9, POLICY) is None
    assert overdue(view(1, last_activity=0.0), 10.1, POLICY) == "idle"
    assert overdue(view(1, last_activity=0.0), 9.9, POLICY) is None
    assert overdue(view(1, busy=True, request_since=0.0), 100, POLICY) is None


def test_eviction_order_longest_waiting_first_never_busy():
    conns = [view(1, last_activity=5.0), view(2, request_since=1.0, last_activity=9.0),
             view(3, busy=True, request_since=0.0), view(4, last_activity=3.0)]
    assert [c.key for c in eviction_order(conns, now=10.0)] == [2, 4, 1]
    assert [c.key for c in eviction_order(conns, now=10.0, grace_s=6.0)] == [2, 4]


# -- connections -------------------------------------------------------------------------


def test_idle_connections_do_not_stall_a_get(serve):
    """300 idle connections from loopback (more than the 256 the server holds): a GET on a
    fresh connection is answered within 1 s, repeatedly."""
    server, url = serve()
    holder = reststall.IdleHolder(server.address, 300)
    try:
        waits = []
        for _ in range(10):
            waits.append(reststall.timed_get(server.address, "/paths", None))
            time.sleep(0.05)
    finally:
        holder.stop()
    assert max(waits) < 1.0, waits


def test_slowloris_is_cut_off_at_the_request_deadline(serve):
    """Headers sent a byte at a time never complete: the connection closes at the deadline,
    though bytes keep coming."""
    server, _ = serve(RestLimits(request_timeout_s=1.0))
    sock = connect(server.address)
    start = time.monotonic()
    request = b"GET /paths HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + b"a" * 1000
    cut = None
    try:
        for byte in request:
            sock.send(bytes([byte]))
            time.sleep(0.05)
            if time.monotonic() - start > 5:
                break
    except (BrokenPipeError, ConnectionResetError):
        cut = time.monotonic() - start
    if cut is None:
        assert closed_within(sock, 1)
        cut = time.monotonic() - start
    sock.close()
    assert 0.9 <= cut < 3.0


def test_a_connection_that_sends_nothing_closes_at_the_request_deadline(serve):
    server, _ = serve(RestLimits(request_timeout_s=0.5, idle_timeout_s=30))
    sock = connect(server.address)
    start = time.monotonic()
    assert closed_within(sock, 5)
    assert 0.4 <= time.monotonic() - start < 2.5
    sock.close()


def test_kept_alive_connection_closes_after_the_idle_timeout(serve):
    server, _ = serve(RestLimits(request_timeout_s=30, idle_timeout_s=0.5))
    sock = connect(server.address)
    sock.sendall(b"GET /paths HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    sock.settimeout(5)
    response = http.client.HTTPResponse(sock)
    response.begin()
    assert response.status == 200 and response.read()  # the whole answer, kept alive
    start = time.monotonic()
    assert closed_within(sock, 5)
    assert time.monotonic() - start < 2.5
    sock.close()


def test_per_client_limit_closes_the_clients_longest_waiting(serve):
    server, url = serve(RestLimits(per_client_limit=3))
    first = [connect(server.address) for _ in range(3)]
    other = connect(server.address, "127.0.0.2")  # another client: not counted
    time.sleep(0.2)
    fourth = connect(server.address)
    assert closed_within(first[0], 2)
    assert not closed_within(first[1], 0.3)
    assert not closed_within(other, 0.1)
    assert get(url)[0] == 200  # a fresh request gets in, closing first[1]
    for sock in [*first, other, fourth]:
        sock.close()


def test_per_client_limit_refuses_when_every_connection_is_busy(serve):
    release = threading.Event()

    class Slow(FakeBackend):
        def switches(self):
            release.wait(10)
            return super().switches()

    server = RestServer(RestApi(Slow()), "127.0.0.1", 0, RestLimits(per_client_limit=2))
    server.start()
    try:
        busy = [connect(server.address) for _ in range(2)]
        for sock in busy:
            sock.sendall(b"GET /switches HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        time.sleep(0.3)
        refused = connect(server.address)
        assert closed_within(refused, 2)
        release.set()
        for sock in busy:
            sock.settimeout(5)
            assert sock.recv(65536).startswith(b"HTTP/1.1 200")
            sock.close()
        refused.close()
    finally:
        release.set()
        server.stop()


def test_total_limit_closes_the_longest_waiting_of_any_client(serve):
    server, url = serve(RestLimits(connection_limit=4, per_client_limit=64))
    idle = [connect(server.address, f"127.0.0.{n}") for n in range(2, 6)]
    time.sleep(0.7)  # beyond the grace of another client's connection
    status, _, _ = get(url)
    assert status == 200
    assert closed_within(idle[0], 1)
    for sock in idle:
        sock.close()


# -- Host ------------------------------------------------------------------------------------


def with_host(url, host):
    request = f"GET /paths HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
    return restabuse.raw_request(url, request.encode(), timeout=10)


def test_a_foreign_host_gets_421_naming_it(serve):
    _, url = serve(hosts=HostCheck.serving("127.0.0.1", ["ctl.lab"]))
    status, _, data = with_host(url, "rebound.example:8080")
    assert status == 421 and b"rebound.example:8080" in data
    assert with_host(url, "ctl.lab:8080")[0] == 200
    assert get(url)[0] == 200  # Host 127.0.0.1:<port>
    assert get(url, headers=(("Host", "rebound.example"),))[0] == 421  # a second Host


# -- headers -----------------------------------------------------------------------------------


@pytest.mark.parametrize(("path", "csp"), [("/ui/", UI_CSP), ("/ui/app.js", UI_CSP),
                                           ("/paths", API_CSP), ("/nothing", API_CSP)])
def test_security_headers(serve, path, csp):
    _, url = serve()
    _, headers, _ = get(url, path)
    assert headers["content-security-policy"] == csp
    assert "frame-ancestors 'none'" in csp
    assert headers["x-frame-options"] == "DENY"
    assert headers["x-content-type-options"] == "nosniff"
    assert headers["referrer-policy"] == "no-referrer"
    if not path.startswith("/ui"):
        assert headers["cache-control"] == "no-store"


def test_ui_csp_has_no_inline_allowance_and_the_ui_no_inline_code():
    from importlib import resources

    assert "unsafe" not in UI_CSP
    ui = resources.files("mpsched.controller.northbound").joinpath("ui")
    html = ui.joinpath("index.html").read_text()
    assert "<script>" not in html and "<style" not in html and " style=" not in html
    scripts = sorted(e.name for e in ui.iterdir() if e.name.endswith(".js"))
    assert {"app.js", "fabric.js", "charts.js", "reasons.js"} <= set(scripts)
    for name in scripts:
        code = ui.joinpath(name).read_text()
        assert "innerHTML" not in code and 'setAttribute("style"' not in code
        assert f'<script src="{name}"></script>' in html  # each one loaded as a file


def test_the_http_servers_own_errors_carry_the_headers(serve):
    _, url = serve()
    status, headers, _ = restabuse.raw_request(url, b"GARBAGE\r\n\r\n", timeout=10)
    assert status == 400 and headers["x-content-type-options"] == "nosniff"


# -- the read token ----------------------------------------------------------------------------


def bearer(token):
    return (("Authorization", f"Bearer {token}"),)


def test_reads_need_no_token_by_default(serve):
    _, url = serve()
    assert get(url)[0] == 200


def test_reads_need_a_token_when_configured(serve):
    _, url = serve(read_token=READ)
    status, headers, _ = get(url)
    assert status == 401 and headers["www-authenticate"] == "Bearer"
    assert get(url, headers=bearer("wrong"))[0] == 403
    assert get(url, headers=bearer(READ))[0] == 200
    assert get(url, headers=bearer(TOKEN))[0] == 200  # the write token reads too
    assert get(url, "/ui/")[0] == 200  # the dashboard's files need none
    assert get(url, "/ui/app.js")[0] == 200


def test_the_read_token_cannot_write(serve):
    _, url = serve(read_token=READ)
    body = b'{"weight": 3}'
    ct = (("Content-Type", "application/json"),)
    status, _, data = restabuse.request(url, "PUT", "/paths/1/weight", body,
                                        ct + bearer(READ), timeout=10)
    assert status == 403 and b"reads only" in data
    status, _, _ = restabuse.request(url, "PUT", "/paths/1/weight", body, ct + bearer(TOKEN),
                                     timeout=10)
    assert status == 200
