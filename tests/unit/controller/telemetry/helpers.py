"""Helpers shared by the telemetry's unit tests."""

from __future__ import annotations

from mpsched.controller.telemetry.windows import PathReport


def report(t_s: float, packets: int, nbytes: int, lost: int = 0, reordered: int = 0,
           owd_us: int = 10_000, at: float | None = None, flow_ooo: int = 0) -> PathReport:
    rx = int(t_s * 1e6)
    return PathReport("s2", 1, packets, rx - owd_us + 5_000_000, rx, packets % 2**32,
                      nbytes % 2**32, lost % 2**32, reordered, flow_ooo % 2**32,
                      t_s if at is None else at)
