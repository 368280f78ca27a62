"""src/mpsched/controller/northbound/server.py over HTTPS (waitress with TLS connections): a client
verifying with the lab's CA is answered, one without it is refused, plain HTTP gets nothing;
`mpsched ctl --ca` verifies with it."""

from __future__ import annotations

import json

import pytest
import requests

from mpsched.client import ctl
from mpsched.client.rest import RestClient
from mpsched.controller.northbound.server import RestServer, RestTls
from tests.tlscerts import make_lab

BODY = {"paths": "many"}


def app(environ, start_response):
    size = int(environ.get("CONTENT_LENGTH") or 0)
    body = environ["wsgi.input"].read(size) if size else b""
    answer = json.dumps(dict(BODY, echoed=len(body))).encode()
    start_response("200 OK", [("Content-Type", "application/json"),
                              ("Content-Length", str(len(answer)))])
    return [answer]


@pytest.fixture
def https(tmp_path):
    lab = make_lab(tmp_path / "certs")
    server = RestServer(app, "127.0.0.1", 0, tls=RestTls(str(lab / "s1.pem"),
                                                         str(lab / "s1.key")))
    server.start()
    yield f"https://127.0.0.1:{server.address[1]}", lab
    server.stop()


def test_a_client_trusting_the_ca_is_answered(https):
    url, lab = https
    for _ in range(3):  # several connections, one after the other
        r = requests.get(url + "/paths", verify=str(lab / "ca.pem"), timeout=5)
        assert r.json() == dict(BODY, echoed=0)
    big = "x" * 100_000  # more than one TLS record
    r = requests.put(url + "/params", data=big, verify=str(lab / "ca.pem"), timeout=5)
    assert r.json()["echoed"] == len(big)


def test_a_client_without_the_ca_is_refused(https):
    url, _lab = https
    with pytest.raises(requests.exceptions.SSLError):
        requests.get(url + "/paths", timeout=5)


def test_plain_http_gets_no_answer(https):
    url, _lab = https
    with pytest.raises(requests.ConnectionError):
        requests.get(url.replace("https", "http") + "/paths", timeout=5)


def test_ctl_verifies_with_ca(https, capsys):
    url, lab = https
    assert RestClient(url, ca=str(lab / "ca.pem")).get("/paths")["paths"] == "many"
    assert ctl.main(["--url", url, "--ca", str(lab / "ca.pem"), "paths"]) == 0
    assert json.loads(capsys.readouterr().out)["paths"] == "many"
    assert ctl.main(["--url", url, "paths"]) == 1
    assert "CERTIFICATE_VERIFY_FAILED" in capsys.readouterr().err


EVENTLET_SERVER = """
import os, sys
os.environ["OSKEN_HUB_TYPE"] = "eventlet"
from os_ken.lib import hub
hub.patch(thread=False)
from mpsched.controller.northbound.server import EventletRestServer, RestTls

def app(environ, start_response):
    start_response("200 OK", [("Content-Type", "application/json")])
    return [b'{"hub": "eventlet"}']

server = EventletRestServer(app, "127.0.0.1", 0, tls=RestTls(sys.argv[1], sys.argv[2]))
server.start()
print(server.address[1], flush=True)
while True:  # until killed
    hub.sleep(1)
"""


def test_the_eventlet_hub_serves_https_too(tmp_path):
    import subprocess
    import sys

    lab = make_lab(tmp_path / "certs")
    proc = subprocess.Popen([sys.executable, "-c", EVENTLET_SERVER, str(lab / "s1.pem"),
                             str(lab / "s1.key")],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert proc.stdout is not None
        url = f"https://127.0.0.1:{int(proc.stdout.readline())}/"
        assert requests.get(url, verify=str(lab / "ca.pem"), timeout=5).json() == {
            "hub": "eventlet"}
        with pytest.raises(requests.exceptions.SSLError):
            requests.get(url, timeout=5)
    finally:
        proc.kill()
        proc.wait()


def test_a_client_that_never_finishes_its_handshake_is_cut_off(tmp_path):
    """The request deadline counts from the accept: a TLS handshake that never comes (or
    stops half-way) holds its connection only that long."""
    import contextlib
    import socket
    import time

    from mpsched.controller.northbound.server import RestLimits

    lab = make_lab(tmp_path / "certs")
    server = RestServer(app, "127.0.0.1", 0, RestLimits(request_timeout_s=0.5),
                        tls=RestTls(str(lab / "s1.pem"), str(lab / "s1.key")))
    server.start()
    try:
        silent = socket.create_connection(server.address, timeout=5)
        half = socket.create_connection(server.address, timeout=5)
        half.sendall(b"\x16\x03\x01\x02\x00\x01")  # the start of a ClientHello, no more
        start = time.monotonic()
        for sock in (silent, half):
            with contextlib.suppress(ConnectionResetError):
                assert sock.recv(1) == b""
            sock.close()
        assert time.monotonic() - start < 3
        url = f"https://127.0.0.1:{server.address[1]}/"
        assert requests.get(url, verify=str(lab / "ca.pem"), timeout=5).json() == dict(
            BODY, echoed=0)
    finally:
        server.stop()
