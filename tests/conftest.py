"""Shared fixtures: prerequisites of the integration tests skip with a printed reason.

Layout: tests/unit/<package>/ mirrors the code and needs neither root nor a switch;
tests/integration/ needs root, BMv2 or Mininet; tests/ptf/ runs the PTF data-plane suite.
Everything under the last two is marked `integration`."""

from __future__ import annotations

import pytest

from mpsched.proc import prereqs
from mpsched.proc.layout import p4_artifacts

NEEDS_ROOT = ("integration", "ptf")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.path.parent.name in NEEDS_ROOT and item.path.parent.parent.name == "tests":
            item.add_marker(pytest.mark.integration)


def require(*names: str) -> None:
    """Skip the calling test, naming what is missing."""
    problems = prereqs.missing(*names)
    if problems:
        pytest.skip("missing: " + "; ".join(problems))


@pytest.fixture
def artifacts():
    art = p4_artifacts()
    if art.missing():
        pytest.skip(f"P4 program not compiled ({art.missing()[0]}); run `make p4` (needs p4c)")
    return art


@pytest.fixture
def switch(tmp_path, artifacts):
    """One BMv2 (device 1, CPU port) on three veth pairs: yields it and the pairs (switch end,
    tester end; ports 1..3); everything removed afterwards."""
    from mpsched.p4rt.pipeline import program_cpu_port
    from mpsched.proc.bmv2 import Bmv2Switch
    from mpsched.proc.cleanup import Registry
    from mpsched.proc.veth import make_veths

    require("root", "simple_switch_grpc", "ethtool")
    registry = Registry()
    sw = None
    try:
        pairs = make_veths(registry, 3)
        sw = Bmv2Switch(
            "itest-bmv2",
            1,
            {i: s for i, (s, _) in enumerate(pairs, start=1)},
            tmp_path,
            registry=registry,
            cpu_port=program_cpu_port(artifacts.p4info),
        )
        sw.start()
        yield sw, pairs
    finally:
        if sw is not None:
            sw.stop()
        registry.close()


@pytest.fixture
def p4info():
    """The synthetic P4Info of the fake P4Runtime server (tests/fake_p4rt.py)."""
    from mpsched.p4rt.p4info import P4Info

    from .fake_p4rt import synthetic_p4info

    return P4Info(synthetic_p4info())


@pytest.fixture
def server():
    """A fake P4Runtime server on 127.0.0.1 (tests/fake_p4rt.py), stopped afterwards."""
    from .fake_p4rt import FakeServer

    srv = FakeServer().start()
    yield srv
    srv.stop()


TOKEN = "test-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


def token_file(tmp_path):
    """The controller's write token, in a file it reads at start."""
    path = tmp_path / "token"
    path.write_text(TOKEN + "\n")
    return path
