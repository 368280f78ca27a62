"""Bulk TCP transfer with iperf3 between two Mininet hosts, reporting goodput."""

from __future__ import annotations

import json
import logging
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
    client, server, server_ip: str, seconds: float, streams: int = 1, port: int = 5201
) -> BulkResult:
    """Run iperf3 from `client` to `server` (Mininet hosts) for `seconds`."""
    srv = server.popen(["iperf3", "-s", "-1", "-p", str(port)])
    try:
        # Wait until the server listens (iperf3 has no readiness signal).
        for _ in range(50):
            if f":{port} " in server.cmd("ss -ltnH"):
                break
            server.cmd("sleep 0.1")
        out = client.cmd(
            f"iperf3 -c {server_ip} -p {port} -t {seconds:g} -P {streams} -J --connect-timeout 3000"
        )
        return parse_iperf3(out)
    finally:
        if srv.poll() is None:
            srv.terminate()
        srv.wait(timeout=5)
