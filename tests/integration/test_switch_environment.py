"""A switch the lab starts runs with few malloc arenas (src/mpsched/proc/bmv2.py,
SWITCH_MALLOC_ARENAS): the variable reaches the real simple_switch_grpc process."""

from __future__ import annotations

from pathlib import Path

import pytest

from mpsched.proc.bmv2 import SWITCH_MALLOC_ARENAS, Bmv2Switch
from mpsched.proc.cleanup import Registry
from tests.conftest import require

pytestmark = pytest.mark.integration


def environ(pid: int) -> dict[str, str]:
    raw = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    return dict(item.decode().split("=", 1) for item in raw if b"=" in item)


def test_the_switch_process_gets_the_arena_limit(tmp_path, monkeypatch):
    require("simple_switch_grpc")
    monkeypatch.delenv("MALLOC_ARENA_MAX", raising=False)
    registry = Registry()
    sw = Bmv2Switch("envsw", 1, {}, tmp_path, registry=registry, guard_thrift=False)
    try:
        sw.start()
        assert sw.process is not None
        assert environ(sw.process.pid).get("MALLOC_ARENA_MAX") == str(SWITCH_MALLOC_ARENAS)
        assert sw.alive()
    finally:
        sw.stop()
        registry.close()
