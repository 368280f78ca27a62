"""The kernel's netem as a link-emulation backend, for kernels that have it.

One netem qdisc at the root of the sending interface of each direction does
delay, jitter, loss, rate and the queue. Differences from linkem, stated so
results are read correctly:
- netem's `limit` bounds every packet it holds (the delay line too), so the
  limit given is `queue_packets` plus the packets one delay holds at the rate;
- jitter uses netem's `distribution normal`; netem keeps packets in order
  only while `rate` is set (otherwise jitter reorders, as netem documents);
- a link that is down is `loss 100%`;
- netem draws loss and jitter from the kernel's generator, not from the run's
  seed: runs with the same seed are not packet-for-packet identical;
- removing a rate needs a new qdisc (a `replace` without `rate` keeps the
  old one), so that change drops what the qdisc held.
The kernel of this project's machines has no sch_netem: this backend is
chosen only where `netem_available()` finds it (or when asked for by name).
"""

from __future__ import annotations

import contextlib
import functools
import logging
import math
import os
import re
import subprocess
from collections.abc import Callable

from .params import LinkParams

log = logging.getLogger(__name__)

Runner = Callable[[list[str]], subprocess.CompletedProcess]
MTU_FRAME = 1514


def netem_args(params: LinkParams) -> list[str]:
    """The `tc qdisc replace … netem` arguments after `netem` for one direction."""
    args: list[str] = []
    if params.delay_ms or params.jitter_ms:
        args += ["delay", f"{params.delay_ms:g}ms"]
        if params.jitter_ms:
            args += [f"{params.jitter_ms:g}ms", "distribution", "normal"]
    if not params.up:
        args += ["loss", "random", "100%"]
    elif params.gilbert is not None:
        g = params.gilbert
        args += [
            "loss",
            "gemodel",
            f"{g.p * 100:g}%",
            f"{g.r * 100:g}%",
            f"{g.loss_bad * 100:g}%",  # netem's 1-h: loss probability in the bad state
            f"{g.loss_good * 100:g}%",  # netem's 1-k: loss probability in the good state
        ]
    elif params.loss:
        args += ["loss", "random", f"{params.loss * 100:g}%"]
    limit = params.queue_packets
    if params.rate_mbps is not None:
        args += ["rate", f"{params.rate_mbps * 1e6:.0f}bit"]
        in_flight = params.rate_mbps * 1e6 * (params.delay_ms + 3 * params.jitter_ms) / 1e3
        limit += math.ceil(in_flight / 8 / MTU_FRAME)
    else:
        limit += 10_000
    args += ["limit", str(limit)]
    return args


def _run(cmd: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True, check=False)


@functools.cache
def netem_available() -> bool:
    """Whether this kernel can create a netem qdisc (tried in a throw-away namespace)."""
    if os.geteuid() != 0:
        return False
    ns = f"mpsnetem{os.getpid()}"
    try:
        if _run(["ip", "netns", "add", ns]).returncode != 0:
            return False
        result = _run(
            ["ip", "netns", "exec", ns, "tc", "qdisc", "add", "dev", "lo", "root", "netem"]
        )
        return result.returncode == 0
    finally:
        with contextlib.suppress(OSError):
            _run(["ip", "netns", "delete", ns])


class NetemLink:
    """netem on `iface_ab` (sends a→b) and `iface_ba` (sends b→a).

    `run_ab`/`run_ba` execute a command where each interface lives (root
    namespace or a Mininet node's namespace).
    """

    def __init__(
        self, iface_ab: str, iface_ba: str, run_ab: Runner = _run, run_ba: Runner = _run
    ) -> None:
        self.ifaces = {"ab": (iface_ab, run_ab), "ba": (iface_ba, run_ba)}
        self.current: dict[str, LinkParams] = {}

    def set(self, direction: str, params: LinkParams) -> None:
        iface, run = self.ifaces[direction]
        last = self.current.get(direction)
        if last is not None and last.rate_mbps is not None and params.rate_mbps is None:
            run(["tc", "qdisc", "del", "dev", iface, "root"])
        cmd = ["tc", "qdisc", "replace", "dev", iface, "root", "netem", *netem_args(params)]
        result = run(cmd)
        if result.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)}: {result.stderr.strip()}")
        self.current[direction] = params

    def stats(self) -> dict[str, dict[str, int]]:
        out: dict[str, dict[str, int]] = {}
        for direction, (iface, run) in self.ifaces.items():
            text = run(["tc", "-s", "qdisc", "show", "dev", iface]).stdout
            m = re.search(r"Sent (\d+) bytes (\d+) pkt \(dropped (\d+)", text)
            if m:
                out[direction] = {
                    "tx_bytes": int(m.group(1)),
                    "tx": int(m.group(2)),
                    "drop": int(m.group(3)),
                }
        return out

    def close(self) -> None:
        for iface, run in self.ifaces.values():
            run(["tc", "qdisc", "del", "dev", iface, "root"])
