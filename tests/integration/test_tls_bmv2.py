"""P4Runtime over TLS between the controller and a real BMv2 (simple_switch_grpc serving
TLS, src/mpsched/proc/bmv2.py), with certificates of `mpsched certs` (docs/security.md):

- the controller programs a TLS switch, also one that requires a client certificate;
- a switch presenting a certificate of another CA is refused, the error in GET /switches and
  in the log next to the switch's name;
- a plaintext switch is refused when TLS is required; a TLS switch reached in plaintext gives
  an error saying so.
"""

from __future__ import annotations

import pytest

from mpsched.p4rt.client import P4RuntimeClient
from mpsched.p4rt.p4info import P4Info
from mpsched.p4rt.pipeline import TABLE_WEIGHTS
from mpsched.p4rt.tls import TlsSettings
from mpsched.proc.bmv2 import Bmv2Switch, ServerTls
from mpsched.proc.cleanup import Registry
from tests.conftest import require
from tests.controllers import start_controller
from tests.netdesc import edge_switch
from tests.tlscerts import make_lab

pytestmark = pytest.mark.integration


@pytest.fixture
def lab(tmp_path):
    require("root", "simple_switch_grpc")
    return make_lab(tmp_path / "certs")


@pytest.fixture
def start_switch(tmp_path):
    """Starts BMv2 switches (no ports; TLS as asked); all stopped afterwards."""
    registry = Registry()
    started: list[Bmv2Switch] = []

    def start(tls: ServerTls | None) -> Bmv2Switch:
        sw = Bmv2Switch(f"itest-tls{len(started)}", 1, {}, tmp_path, registry=registry, tls=tls)
        started.append(sw)
        sw.start()
        return sw

    yield start
    for sw in started:
        sw.stop()
    registry.close()


def run_controller(tmp_path, artifacts, switch: dict, until, tls: dict | None = None):
    """Runs the controller on a description of `switch` until GET /switches satisfies
    `until` (20 s at most); that answer and the controller's log."""
    netcfg = {"switches": [switch], **({"tls": tls} if tls else {})}

    def ready(states: list[dict]) -> bool:
        return until(states[0])

    with start_controller(tmp_path, artifacts, netcfg, ready=ready) as ctl:
        answer = ctl.last
    assert answer is not None
    return answer[0], ctl.log()


def tls_of(lab, **kw) -> dict:
    return {"ca_cert": "certs/ca.pem", "cert": "certs/controller.pem",
            "key": "certs/controller.key", **kw}


def down(state: dict) -> bool:
    return state["state"] == "down" and bool(state["error"])


@pytest.mark.parametrize("client_auth", [False, True])
def test_the_controller_programs_a_tls_switch(lab, start_switch, tmp_path, artifacts,
                                              client_auth):
    sw = start_switch(ServerTls(lab / "s1.pem", lab / "s1.key", lab / "ca.pem", client_auth))
    state, _log = run_controller(tmp_path, artifacts, edge_switch(1, sw.grpc_address),
                                 lambda s: s["state"] == "ready", tls=tls_of(lab))
    assert state["name"] == "s1"
    reader = P4RuntimeClient(sw.grpc_address, 1, P4Info.from_file(artifacts.p4info),
                             tls=TlsSettings(lab / "ca.pem", lab / "controller.pem",
                                             lab / "controller.key"))
    reader.connect(primary=False)
    try:
        assert len(reader.read_table(TABLE_WEIGHTS)) == 1  # the controller wrote it
    finally:
        reader.close()


def test_a_certificate_of_another_ca_is_refused(lab, start_switch, tmp_path, artifacts):
    sw = start_switch(ServerTls(lab / "other-s1.pem", lab / "other-s1.key"))
    state, log = run_controller(tmp_path, artifacts, edge_switch(1, sw.grpc_address), down,
                                tls=tls_of(lab))
    assert "the switch's certificate is refused" in state["error"]
    assert str(lab / "ca.pem") in state["error"]
    assert f"s1: refused over TLS: {sw.grpc_address}: the switch's certificate" in log


def test_a_plaintext_switch_is_refused_when_tls_is_required(lab, start_switch, tmp_path,
                                                            artifacts):
    sw = start_switch(None)
    state, log = run_controller(tmp_path, artifacts, edge_switch(1, sw.grpc_address), down,
                                tls=tls_of(lab, required=True))
    assert state["error"] == (f"refused over TLS: {sw.grpc_address}: the switch does not "
                              "speak TLS (plaintext P4Runtime?)")
    assert "s1: refused over TLS" in log


def test_a_tls_switch_reached_in_plaintext_says_so(lab, start_switch, tmp_path, artifacts):
    sw = start_switch(ServerTls(lab / "s1.pem", lab / "s1.key"))
    state, _log = run_controller(tmp_path, artifacts, edge_switch(1, sw.grpc_address), down)
    assert state["error"].startswith(f"{sw.grpc_address} speaks TLS and the controller "
                                     "plaintext")
