"""The soak's warm bursts (src/mpsched/bench/soak_warm.py) on a real veth: the frames arrive at
the far end as written, and the bursts stop once the watched RSS stops growing."""

from __future__ import annotations

import socket
import subprocess

import pytest

from mpsched.bench.soak_warm import FLAT_KB, WARM_ETHERTYPE, warm
from mpsched.proc.cleanup import Registry
from tests.conftest import require

pytestmark = pytest.mark.integration

A, B = "mpswarm-a", "mpswarm-b"


def test_bursts_reach_the_far_end_until_the_rss_is_flat():
    require("root")
    registry = Registry()
    try:
        subprocess.run(["ip", "link", "add", A, "type", "veth", "peer", "name", B], check=True)
        registry.add_link(A)
        for name in (A, B):
            subprocess.run(["ip", "link", "set", name, "up"], check=True)
        sink = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(WARM_ETHERTYPE))
        sink.bind((B, 0))
        sink.settimeout(2)
        rss = iter([100_000, 110_000, 110_000, 115_000, 115_000, 115_000 + FLAT_KB // 2,
                    115_000 + FLAT_KB // 2, 115_000 + FLAT_KB, 115_000 + FLAT_KB,
                    115_000 + FLAT_KB])
        grown = warm(A, lambda: next(rss), frames=50, pause_s=0.01)
        assert grown == [10_000, 5_000, FLAT_KB // 2, FLAT_KB // 2, 0]  # three flat in a row
        frame = sink.recv(2048)
        assert int.from_bytes(frame[12:14], "big") == WARM_ETHERTYPE
        sink.close()
    finally:
        registry.close()
