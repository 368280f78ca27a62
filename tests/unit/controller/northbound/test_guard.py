"""The Host check's pure parts (src/mpsched/controller/northbound/guard.py); the server answering a
foreign
Host with 421 and the security headers are tested in test_connlimits.py."""

from __future__ import annotations

import pytest

from mpsched.controller.northbound.guard import HostCheck, host_name


@pytest.mark.parametrize(("header", "name"), [
    ("localhost:8080", "localhost"), ("[::1]:8080", "::1"), ("Ctl.Example.", "ctl.example"),
    ("10.0.0.5", "10.0.0.5"), ("::1", "::1"),
])
def test_host_name(header, name):
    assert host_name(header) == name


def test_host_check():
    check = HostCheck.serving("ctl.lab", ["dash.lab"])
    for ok in (None, "localhost", "localhost:9000", "127.0.0.1:8080", "[::1]:1", "10.1.2.3",
               "ctl.lab:8443", "DASH.lab"):
        assert check.problem(ok) is None, ok
    problem = check.problem("evil.example:8080")
    assert problem is not None and "'evil.example:8080'" in problem
    for bad in ("127.0.0.1, evil.example", "evil.example 127.0.0.1", "user@127.0.0.1", ""):
        assert check.problem(bad) is not None, bad
