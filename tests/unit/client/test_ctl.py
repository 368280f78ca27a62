"""`mpsched ctl` in-process against a real HTTP server (wsgiref, threaded) serving RestApi
over the fake backend of test_rest."""

import json
import socket

import pytest
import requests

from mpsched import cli
from mpsched.client import ctl, ctl_cmdline, rest
from mpsched.client.rest import ControllerError, RestClient
from mpsched.controller.northbound.rest import RestApi
from tests.unit.controller.northbound.test_rest import FakeBackend
from tests.wsgi_server import ServedApp

TOKEN = "t0ken"


class Served(ServedApp):
    """RestApi over a fresh FakeBackend (``backend``), served over HTTP."""

    def __init__(self, token=None, read_token=None):
        self.backend = FakeBackend()
        super().__init__(RestApi(self.backend, token=token, read_token=read_token))


@pytest.fixture(autouse=True)
def isolated_env(monkeypatch, tmp_path):
    monkeypatch.delenv("MPSCHED_TOKEN", raising=False)
    monkeypatch.setenv("MPSCHED_RUN_DIR", str(tmp_path / "run"))


@pytest.fixture
def open_server():
    served = Served()
    yield served
    served.close()


@pytest.fixture
def guarded_server():
    served = Served(token=TOKEN)
    yield served
    served.close()


def run_ctl(capsys, served, *args):
    """(exit status, parsed stdout or None, stderr)."""
    code = ctl.main(["--url", served.url, *args])
    out, err = capsys.readouterr()
    return code, (json.loads(out) if out.strip() else None), err


# -- reading -------------------------------------------------------------------


def test_reads(capsys, open_server):
    code, out, _ = run_ctl(capsys, open_server, "paths")
    assert code == 0 and [p["id"] for p in out] == [1, 2]
    assert run_ctl(capsys, open_server, "path", "2")[1]["id"] == 2
    assert run_ctl(capsys, open_server, "telemetry", "1")[1] == {"id": 1, "directions": {}}
    assert run_ctl(capsys, open_server, "switches")[1][0]["state"] == "ready"
    assert run_ctl(capsys, open_server, "classes")[1][0]["name"] == "default"
    assert run_ctl(capsys, open_server, "policy", "0")[1]["name"] == "ecmp"
    assert run_ctl(capsys, open_server, "params")[1]["lm3"]["sigma"] == 0.5


def test_adaptive(capsys, open_server):
    code, _, err = run_ctl(capsys, open_server, "adaptive", "0")
    assert code == 1 and "not the adaptive policy" in err
    assert run_ctl(capsys, open_server, "policy", "0", "set", "adaptive")[0] == 0
    code, out, _ = run_ctl(capsys, open_server, "adaptive", "0")
    assert code == 0 and out["switches"]["s1"]["arm"] == "ecmp"


def test_output_is_indented_json(capsys, open_server):
    assert ctl.main(["--url", open_server.url, "path", "1"]) == 0
    out = capsys.readouterr().out
    assert out.startswith('{\n  "id": 1,')


def test_decisions(capsys, open_server):
    code, out, _ = run_ctl(capsys, open_server, "decisions")
    assert code == 0 and out["decisions"][0]["reason"] == "start"
    code, out, _ = run_ctl(capsys, open_server, "decisions", "--since", "10.5", "--limit", "3")
    assert code == 0 and out["decisions"] == []
    assert open_server.backend.calls == [("decisions", 0.0, 100), ("decisions", 10.5, 3)]


def test_links_and_pairs(capsys, open_server):
    code, out, _ = run_ctl(capsys, open_server, "links")
    assert code == 0 and out[0]["name"] == "leaf1-spine1"
    code, out, _ = run_ctl(capsys, open_server, "link", "leaf1-spine1", "down")
    assert code == 0 and out["admin"] == "down"
    assert open_server.backend.calls[-1] == ("link_admin", "leaf1-spine1", False)
    assert run_ctl(capsys, open_server, "pairs")[1][0]["id"] == "leaf1->leaf2"
    code, out, _ = run_ctl(capsys, open_server, "pair", "leaf1->leaf2")
    assert code == 0 and out["egress"] == "leaf2"
    code, _, err = run_ctl(capsys, open_server, "pair", "leaf3->leaf1")
    assert code == 1 and "no pair leaf3->leaf1" in err
    run_ctl(capsys, open_server, "decisions", "--pair", "leaf1->leaf2")
    assert open_server.backend.calls[-1] == ("decisions", 0.0, 100, "leaf1->leaf2")


def test_mptcp(capsys, open_server):
    code, out, _ = run_ctl(capsys, open_server, "mptcp")
    assert code == 0 and out["connections"][0]["server_token"] == "cd266215"
    code, out, _ = run_ctl(capsys, open_server, "mptcp", "1")
    assert code == 0 and out["subflows"][0]["path_id"] == 2
    code, _, err = run_ctl(capsys, open_server, "mptcp", "7")
    assert code == 1 and "no MPTCP connection 7" in err


# -- writing -------------------------------------------------------------------


def test_weight_and_admin(capsys, open_server):
    code, out, _ = run_ctl(capsys, open_server, "weight", "2", "0")
    assert code == 0 and out["weight"] == 0 and open_server.backend.weights[2] == 0
    code, out, _ = run_ctl(capsys, open_server, "admin", "1", "down")
    assert code == 0 and out["admin"] == "down"
    assert open_server.backend.calls == [("set_admin", 1, False)]


CLASSES = [
    {"id": 0, "name": "default"},
    {"id": 4, "name": "video", "priority": 9, "match": {"dscp": 34, "dst_port": [5000, 5100]},
     "policy": {"name": "llhd", "lm3": True}},
]


def test_classes_set_from_json_list(capsys, open_server, tmp_path):
    path = tmp_path / "classes.json"
    path.write_text(json.dumps(CLASSES))
    code, out, _ = run_ctl(capsys, open_server, "classes", "set", str(path))
    assert code == 0 and [c["id"] for c in out] == [0, 4]
    assert [c.name for c in open_server.backend.class_table] == ["default", "video"]


def test_classes_set_from_yaml_object(capsys, open_server, tmp_path):
    path = tmp_path / "classes.yaml"
    path.write_text(
        "classes:\n"
        "  - {id: 0, name: default}\n"
        "  - id: 2\n"
        "    name: bulk\n"
        "    match: {proto: tcp, src: 10.0.0.0/24}\n"
        "    policy: {name: static, flowlet_gap_us: 2000}\n"
    )
    code, out, _ = run_ctl(capsys, open_server, "classes", "set", str(path))
    assert code == 0 and out[1]["match"] == {"src": "10.0.0.0/24", "proto": 6}
    assert open_server.backend.class_table[1].policy.flowlet_gap_us == 2000


def test_policy_set(capsys, open_server):
    code, out, _ = run_ctl(capsys, open_server, "policy", "0", "set", "llhd",
                           "--param", "beta=0.01", "--param", "window.k=3",
                           "--param", "mode=fast", "--lm3", "--gap-us", "200")
    assert code == 0 and out["name"] == "llhd" and out["lm3"] is True
    assert open_server.backend.calls[-1] == (
        "set_class_policy", 0,
        {"name": "llhd", "params": {"beta": 0.01, "window": {"k": 3}, "mode": "fast"},
         "lm3": True, "flowlet_gap_us": 200},
    )
    code, out, _ = run_ctl(capsys, open_server, "policy", "0", "set", "llhd", "--no-lm3")
    assert code == 0 and out["lm3"] is False and out["flowlet_gap_us"] == 200
    assert open_server.backend.calls[-1] == ("set_class_policy", 0, {"name": "llhd",
                                                                     "lm3": False})


def test_policy_set_clear_params(capsys, open_server):
    """--clear-params sends params {} (the class's overrides removed); with --param it is a
    usage error."""
    run_ctl(capsys, open_server, "policy", "0", "set", "llhd", "--param", "beta=0.01")
    code, out, _ = run_ctl(capsys, open_server, "policy", "0", "set", "ecmp", "--clear-params")
    assert code == 0 and out["params"] == {}
    assert open_server.backend.calls[-1] == ("set_class_policy", 0,
                                             {"name": "ecmp", "params": {}})
    code, _, err = run_ctl(capsys, open_server, "policy", "0", "set", "ecmp", "--clear-params",
                           "--param", "beta=1")
    assert code == 2 and "not allowed with argument" in err


def test_params_set_nests_dotted_keys(capsys, open_server):
    code, out, _ = run_ctl(capsys, open_server, "params", "set", "policies.llhd.beta=0.01",
                           "lm3.sigma=0.3", "control_period_ms=50")
    assert code == 0 and out["control_period_ms"] == 50 and out["lm3"]["sigma"] == 0.3
    assert open_server.backend.calls == [("set_params", {
        "policies": {"llhd": {"beta": 0.01}}, "lm3": {"sigma": 0.3}, "control_period_ms": 50,
    })]


# -- errors --------------------------------------------------------------------


def test_refused_request_names_the_field(capsys, open_server):
    code, out, err = run_ctl(capsys, open_server, "weight", "1", "300")
    assert code == 1 and out is None
    assert err == "error: 'weight' must be an integer 0..255 (field: weight)\n"


def test_refused_class_table_names_the_indexed_field(capsys, open_server, tmp_path):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({"classes": [CLASSES[0], {**CLASSES[1], "match": {"dscp": 99}}]}))
    code, _, err = run_ctl(capsys, open_server, "classes", "set", str(path))
    assert code == 1 and "(field: classes[1].match.dscp)" in err


def test_refused_by_the_backend(capsys, open_server):
    code, _, err = run_ctl(capsys, open_server, "params", "set", "lm3.gamma=1")
    assert code == 1 and err == "error: unknown parameter (field: lm3.gamma)\n"
    code, _, err = run_ctl(capsys, open_server, "policy", "0", "set", "nosuch")
    assert code == 1 and "(field: policy.name)" in err


def test_unknown_resource_has_no_field(capsys, open_server):
    code, _, err = run_ctl(capsys, open_server, "path", "9")
    assert code == 1 and err == "error: no path 9\n"
    code, _, err = run_ctl(capsys, open_server, "policy", "7")
    assert code == 1 and err == "error: no class 7\n"


def test_unreachable_controller(capsys):
    """Nothing listens: one line naming the URL, that no controller answers and how to start
    one; none of urllib3's retry text."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"http://127.0.0.1:{port}"
    assert ctl.main(["--url", url, "--timeout", "2", "paths"]) == 1
    err = capsys.readouterr().err
    assert err == (
        f"error: no controller answers at {url} (connection refused); start one with "
        "`mpsched controller --netcfg FILE` (docs/operator.md), or give its URL with --url\n"
    )


def test_a_controller_that_does_not_answer(capsys):
    """Something takes the connection but never answers: say so, with the timeout."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(1)
        url = f"http://127.0.0.1:{sock.getsockname()[1]}"
        assert ctl.main(["--url", url, "--timeout", "0.3", "paths"]) == 1
    err = capsys.readouterr().err
    assert err == f"error: the controller at {url} did not answer within 0.3 s (--timeout)\n"


def test_os_reason_is_the_innermost_socket_error():
    refused = ConnectionRefusedError(111, "Connection refused")
    wrapper = RuntimeError("pool: Max retries exceeded")
    wrapper.__cause__ = refused
    error = requests.ConnectionError(wrapper)
    assert rest.unreachable_text("http://h:1", error, 1.0).startswith(
        "no controller answers at http://h:1 (connection refused); start one with")
    assert "(cannot connect)" in rest.unreachable_text("http://h:1", requests.ConnectionError(), 1)


@pytest.mark.parametrize(
    "args",
    [
        [],
        ["nosuch"],
        ["weight", "1"],
        ["weight", "x", "1"],
        ["admin", "1", "sideways"],
        ["policy"],
        ["policy", "0", "set"],
        ["policy", "0", "set", "llhd", "--gap-us", "soon"],
        ["params", "set"],
        ["params", "set", "novalue"],
        ["params", "set", "a..b=1"],
        ["params", "set", "a=1", "a.b=2"],
        ["params", "set", "a=1", "a=2"],
        ["decisions", "--limit", "many"],
        ["classes", "set"],
        ["classes", "set", "/nonexistent/classes.json"],
        ["--token", "a", "--token-file", "b", "paths"],
        ["--url", "ftp://x", "paths"],
    ],
)
def test_usage_errors_exit_2(capsys, open_server, args):
    code = ctl.main(args if args[:1] == ["--url"] else ["--url", open_server.url, *args])
    out, err = capsys.readouterr()
    assert code == 2 and out == "" and "usage:" in err
    assert open_server.backend.calls == []


@pytest.mark.parametrize(("name", "text"), [("c.json", "{nope"), ("c.yaml", "- [unclosed"),
                                             ("c.yaml", "classes: 3"), ("c.yaml", "7")])
def test_bad_class_file_is_a_usage_error(capsys, open_server, tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    code, _, err = run_ctl(capsys, open_server, "classes", "set", str(path))
    assert code == 2 and "usage:" in err


def test_help(capsys):
    assert ctl.main(["--help"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: mpsched ctl")
    for command in ("paths", "path", "telemetry", "switches", "weight", "admin", "classes",
                    "policy", "params", "decisions"):
        assert f"    {command} " in out, command
    assert ctl.main(["policy", "0", "set", "--help"]) == 0
    assert "--no-lm3" in capsys.readouterr().out


def test_mpsched_cli_dispatches_ctl(capsys, open_server):
    assert cli.main(["ctl", "--url", open_server.url, "switches"]) == 0
    assert json.loads(capsys.readouterr().out)[0]["name"] == "s1"
    assert cli.main(["--help"]) == 0
    assert "  ctl " in capsys.readouterr().out


# -- the write token -------------------------------------------------------------


def test_write_without_token_is_refused(capsys, guarded_server):
    code, _, err = run_ctl(capsys, guarded_server, "weight", "1", "0")
    assert code == 1 and err.startswith("error: ") and "hint: no token" in err
    assert guarded_server.backend.weights[1] == 1


def test_reads_need_no_token(capsys, guarded_server):
    assert run_ctl(capsys, guarded_server, "paths")[0] == 0
    assert run_ctl(capsys, guarded_server, "decisions")[0] == 0


def test_wrong_token_is_refused(capsys, guarded_server):
    code, _, err = run_ctl(capsys, guarded_server, "--token", "nope", "admin", "1", "down")
    assert code == 1 and err == "error: wrong token\n"
    assert guarded_server.backend.calls == []


def test_token_option(capsys, guarded_server):
    code, out, _ = run_ctl(capsys, guarded_server, "--token", TOKEN, "weight", "1", "0")
    assert code == 0 and out["weight"] == 0


def test_token_file_option(capsys, guarded_server, tmp_path):
    path = tmp_path / "tok"
    path.write_text(TOKEN + "\n")
    assert run_ctl(capsys, guarded_server, "--token-file", str(path), "weight", "1", "0")[0] == 0
    path.write_text("")
    assert run_ctl(capsys, guarded_server, "--token-file", str(path), "weight", "1", "0")[0] == 2
    assert run_ctl(capsys, guarded_server, "--token-file", str(tmp_path / "none"), "paths")[0] == 2


def test_token_from_environment(capsys, guarded_server, monkeypatch):
    monkeypatch.setenv("MPSCHED_TOKEN", TOKEN)
    assert run_ctl(capsys, guarded_server, "params", "set", "control_period_ms=20")[0] == 0


def test_token_from_the_controllers_file_for_the_port(capsys, guarded_server, tmp_path):
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / f"token-{guarded_server.port}").write_text(TOKEN + "\n")
    (run_dir / "token-1").write_text("other\n")
    code, out, _ = run_ctl(capsys, guarded_server, "policy", "0", "set", "static")
    assert code == 0 and out["name"] == "static"


def test_reads_send_the_token_where_the_controller_asks_for_one(capsys, tmp_path):
    """With --read-token on the controller: reads with the write token, or with the read
    token from its file when the write token's cannot be read; writes refused with it."""
    served = Served(token=TOKEN, read_token="r3ad")
    try:
        code, _, err = run_ctl(capsys, served, "paths")
        assert code == 1 and "hint: no token" in err
        assert run_ctl(capsys, served, "--token", TOKEN, "paths")[0] == 0
        run_dir = tmp_path / "run"
        run_dir.mkdir()
        (run_dir / f"read-token-{served.port}").write_text("r3ad\n")
        code, out, _ = run_ctl(capsys, served, "paths")
        assert code == 0 and [p["id"] for p in out] == [1, 2]
        code, _, err = run_ctl(capsys, served, "weight", "1", "0")
        assert code == 1 and "reads only" in err
    finally:
        served.close()


def test_a_token_file_of_another_user_is_not_used(capsys, guarded_server, tmp_path,
                                                   monkeypatch):
    """Someone else could have planted it (a run directory on a shared path): not sent, and
    said so."""
    import os

    from mpsched.proc import rundir

    run_dir = tmp_path / "run"
    run_dir.mkdir()
    path = run_dir / f"token-{guarded_server.port}"
    path.write_text(TOKEN + "\n")
    me = os.geteuid()
    if me == 0:
        os.chown(path, 4242, -1)
    else:
        monkeypatch.setattr(rundir.os, "geteuid", lambda: me + 1)
    code, _, err = run_ctl(capsys, guarded_server, "policy", "0", "set", "static")
    assert code == 1
    assert "not using the token: token file" in err and "is owned by uid" in err
    assert "hint: no token (none (" in err


def test_client_error_carries_status_field_and_message(guarded_server):
    client = RestClient(guarded_server.url, token=TOKEN)
    with pytest.raises(ControllerError) as info:
        client.put("/classes/0/policy", {"flowlet_gap_us": -1})
    error = info.value
    assert (error.status, error.field) == (400, "policy.flowlet_gap_us")
    assert "0..10000000" in error.message and "PUT /classes/0/policy" in str(error)
    with pytest.raises(ControllerError) as info:
        RestClient(guarded_server.url).set_weight(1, 3)
    assert info.value.status == 401 and info.value.field is None
    assert client.set_weight(1, 3)["weight"] == 3


def test_a_classes_file_is_read_within_bounds(tmp_path, monkeypatch):
    import io

    path = tmp_path / "classes.yaml"
    path.write_text("classes:\n  - &c {id: 0, name: default}\n  - *c\n")
    with pytest.raises(ctl.UsageError, match=r"classes\.yaml: anchor &c: anchors and aliases"):
        ctl.load_classes(str(path))
    path.write_text("- {id: 0, name: default, name: x}\n")
    with pytest.raises(ctl.UsageError, match="duplicate key 'name'"):
        ctl.load_classes(str(path))
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(b"#" * (2 << 20))))
    with pytest.raises(ctl.UsageError, match="-: larger than 1048576 bytes"):
        ctl.load_classes("-")
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(b"[{id: 0, name: d}]")))
    assert ctl.load_classes("-") == [{"id": 0, "name": "d"}]
    token = tmp_path / "token"
    token.write_bytes(b"x" * 5000)
    args = ctl_cmdline.build_parser().parse_args(["--token-file", str(token), "paths"])
    with pytest.raises(ctl.UsageError, match="larger than 4096 bytes"):
        ctl.resolve_token(args)
