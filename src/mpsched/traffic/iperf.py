"""Bulk TCP transfer with iperf3 between two Mininet hosts, reporting goodput."""

from __future__ import annotations

import json
import logging
import subprocess
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass

log = logging.getLogger(__name__)


class TrafficError(RuntimeError):
    pass


@dataclass(frozen=True)
class BulkResult:
    """Receiver-side goodput of one iperf3 run."""

    seconds: float
    bytes_received: int
    streams: int

    @property
    def goodput_mbps(self) -> float:
        return 8 * self.bytes_received / self.seconds / 1e6 if self.seconds else 0.0


def parse_iperf3(report: str) -> BulkResult:
    """Goodput from an iperf3 client's JSON report (the receiver's byte count)."""
    try:
        data = json.loads(report)
    except json.JSONDecodeError:
        raise TrafficError(f"iperf3 did not print JSON: {report[-300:]!r}") from None
    if "error" in data:
        raise TrafficError(f"iperf3: {data['error']}")
    try:
        received = data["end"]["sum_received"]
        streams = len(data["end"]["streams"])
    except (KeyError, TypeError):
        raise TrafficError("iperf3 report lacks end.sum_received") from None
    return BulkResult(float(received["seconds"]), int(received["bytes"]), streams)


def bulk_tcp(
    client,
    server,
    server_ip: str,
    seconds: float,
    streams: int = 1,
    port: int = 5201,
    abort: Callable[[], str | None] = lambda: None,
    grace: float = 15.0,
) -> BulkResult:
    """Run iperf3 from `client` to `server` (Mininet hosts) for `seconds`.

    `abort` is polled while the transfer runs; when it returns a reason (e.g. a
    switch died) the transfer is stopped and TrafficError raised. The client
    is also stopped `grace` seconds after its end (iperf3 3.12 can spin for
    ever on a dead path).
    """
    srv = server.popen(["iperf3", "-s", "-1", "-p", str(port)])
    cli = None
    report = tempfile.TemporaryFile(mode="w+")
    try:
        # Wait until the server listens (iperf3 has no readiness signal).
        for _ in range(50):
            if f":{port} " in server.cmd("ss -ltnH"):
                break
            time.sleep(0.1)
        # The JSON report goes to a file: a pipe read only at the end would fill
        # up (several streams' reports exceed 64 KiB) and block iperf3.
        cli = client.popen(
            ["iperf3", "-c", server_ip, "-p", str(port), "-t", f"{seconds:g}", "-P",
             str(streams), "-J", "-i", "0", "--connect-timeout", "3000"],
            stdout=report, stderr=subprocess.STDOUT, text=True,
        )
        deadline = time.monotonic() + seconds + grace
        while cli.poll() is None:
            reason = abort()
            if reason:
                raise TrafficError(f"transfer aborted: {reason}")
            if time.monotonic() > deadline:
                raise TrafficError(f"iperf3 still running {grace:g}s after its end")
            time.sleep(0.2)
        report.seek(0)
        return parse_iperf3(report.read())
    finally:
        for proc in (cli, srv):
            if proc is not None and proc.poll() is None:
                proc.kill()
            if proc is not None:
                proc.wait(timeout=5)
        report.close()
