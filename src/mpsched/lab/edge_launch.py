"""A two-edge run's traffic: where each workload's sender and sink run and the arguments of
their `mpsched.traffic.gen` roles (the runner, runner.py, starts them; a fabric's traffic is
fabric_launch.py's). Workload i listens on port `BASE_PORT + i`.
"""

from __future__ import annotations

from mpsched import addressing as ap
from mpsched.lab.scenario import Workload

BASE_PORT = 5000


def sink_host(w: Workload) -> tuple[str, str]:
    """(host, address) of the receiver of a workload."""
    if w.kind in ("vbr", "cross_bulk"):
        return f"y{w.path}", ap.cross_host_ip(ap.RECEIVER_EDGE, w.path)
    return "h2", ap.H2_IP


def source_host(w: Workload) -> str:
    return f"x{w.path}" if w.kind in ("vbr", "cross_bulk") else "h1"


def _client_args(w: Workload, index: int, dst: str, seconds: float, seed: int) -> list[str]:
    port = BASE_PORT + index
    common = ["--dst", dst, "--port", str(port), "--seconds", f"{seconds:g}", "--seed", str(seed)]
    return [*common, "--mptcp"] if w.mptcp else common


def sender_args(w: Workload, index: int, dst: str, seconds: float, seed: int) -> list[str]:
    """Arguments of `mpsched.traffic.gen` for workload number `index`."""
    common = _client_args(w, index, dst, seconds, seed)
    if w.kind in ("bulk", "cross_bulk"):
        return ["bulk", *common, "--streams", str(w.streams)]
    if w.kind == "files":
        return [
            "files", *common, "--sizes-kb", ",".join(map(str, w.sizes_kb)),
            "--count", str(w.count), "--concurrency", str(w.concurrency),
            "--interarrival-ms", f"{w.interarrival_ms:g}",
        ]  # fmt: skip
    if w.kind == "flows":
        return ["flows", *common, "--flows", str(w.flows), "--size-kb", str(w.size_kb)]
    if w.kind == "vbr":
        raise ValueError("vbr needs the path rate: use vbr_args")
    if w.kind == "poisson":
        raise ValueError("poisson needs the offered rate: use poisson_args")
    raise ValueError(f"unknown workload kind {w.kind}")


def vbr_args(
    w: Workload, index: int, dst: str, seconds: float, seed: int, rate: float
) -> list[str]:
    port = BASE_PORT + index
    return [
        "vbr", "--dst", dst, "--port", str(port), "--udp-port", str(port),
        "--seconds", f"{seconds:g}", "--seed", str(seed),
        "--rate-mbps", f"{rate * w.load_pct / 100:g}", "--shape", f"{w.pareto_shape:g}",
        "--on-ms", f"{w.mean_on_ms:g}", "--off-ms", f"{w.mean_off_ms:g}",
        "--tcp-pct", f"{w.tcp_pct:g}",
    ]  # fmt: skip


def poisson_args(
    w: Workload, index: int, dst: str, seconds: float, seed: int, rate_mbps: float
) -> list[str]:
    """`poisson` role arguments: `rate_mbps` is the offered application rate
    (`Scenario.offered_mbps`); arrivals end `drain_s` before the workload does."""
    return [
        "poisson", *_client_args(w, index, dst, seconds, seed),
        "--sizes", w.sizes, "--rate-mbps", f"{rate_mbps:g}",
        "--max-kb", f"{w.max_kb:g}", "--scale", f"{w.scale:g}",
        "--max-concurrent", str(w.max_concurrent),
        "--arrivals-s", f"{max(0.5, seconds - w.drain_s):g}",
    ]  # fmt: skip
