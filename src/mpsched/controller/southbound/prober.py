"""Active probes of a switch's paths (one thread per programmed switch).

Once programmed, the agent starts a `Prober` that sends a probe onto every path of the switch
towards every destination edge (one, the peer, with two edges; every other edge in a fabric:
the probe gate's `dst_edge`, p4src/include/probe_gate.p4) each probe interval: written as a
frame onto the switch's probe port where the network description names the controller's end
of it (`probe_iface`), else as a P4Runtime PacketOut, which it only puts on the client's
stream request queue (thread-safe). Either way it never waits for the switch and never delays
the agent's table writes, reads or digest handling. It stops when the session breaks or the
agent stops, and a new one starts with the next session.
"""

from __future__ import annotations

import logging
import socket
import threading
import time
from collections.abc import Callable

from mpsched.p4rt.client import P4RuntimeClient, P4RuntimeError
from mpsched.p4rt.pipeline import Pipeline

log = logging.getLogger(__name__)


def open_probe_socket(iface: str) -> socket.socket:
    """A raw socket that writes whole frames onto `iface` (the controller's end of the veth
    to a switch's probe port). Needs CAP_NET_RAW."""
    sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    try:
        sock.bind((iface, 0))
    except OSError:
        sock.close()
        raise
    return sock


class Prober(threading.Thread):
    """Sends one probe per (destination edge, path) of `targets` every `interval` seconds (or
    every `tick()`, and at once when poked), each only if `installed` and `wanted` say so.

    Through the switch's probe port when `iface` names the controller's end of the veth to it
    and the program has one (`Pipeline.probe_port`): one socket write per probe (under 40 us of
    CPU measured, docs/results/capacity.md). Otherwise as P4Runtime PacketOuts, which cost
    the controller about 200 us each (the gRPC stream's threads), i.e. 8 % of a core per
    switch at 4 paths every 10 ms.
    """

    def __init__(
        self,
        client: P4RuntimeClient,
        pipeline: Pipeline,
        targets: list[tuple[int, int]],
        interval: float,
        iface: str | None = None,
        wanted: Callable[[int, int], bool] | None = None,
        installed: Callable[[int, int], bool] | None = None,
        tick: Callable[[], float] | None = None,
    ) -> None:
        super().__init__(name=f"probe-{client.device_id}", daemon=True)
        self.client = client
        self.interval = interval
        self.wanted = wanted  # (dst edge, path id) -> probe it now? (None: always)
        # (dst edge, path id) -> is the path installed now? (None: always; a target that is
        # not is passed over, and not counted as skipped)
        self.installed = installed
        # the time to the next round, asked after each (None: `interval` always): a fabric's
        # switch whose pairs are all idle has nothing due more often than their idle interval
        self.tick = tick
        self.sent = 0
        self.skipped = 0
        self.via = "packet_out"
        self.sock: socket.socket | None = None
        if iface is not None and pipeline.probe_port is None:
            log.warning("probe iface %s ignored: the P4 program has no probe port", iface)
        elif iface is not None:
            try:
                self.sock = open_probe_socket(iface)
                self.via = f"probe port ({iface})"
            except OSError as error:
                log.warning("probe iface %s unusable (%s): probes go as PacketOuts", iface, error)
        # built once: a probe never changes
        self.frames = (
            [((e, p), pipeline.probe_frame(p, e)) for e, p in targets] if self.sock else []
        )
        self.probes = (
            []
            if self.sock
            else [((e, p), client.build_packet_out(*pipeline.probe(p, e))) for e, p in targets]
        )
        self._halt = threading.Event()
        self._wake = threading.Event()  # a round now (`poke`), or stop

    def poke(self) -> None:
        """Start a round now instead of at the next tick: a pair just became active, and its
        fast probes must start before its fast dead_after (controller/regime_ops.py)."""
        self._wake.set()

    def stop(self) -> None:
        self._halt.set()
        self._wake.set()
        if self.is_alive():
            self.join(timeout=1)
        if self.sock is not None and not self.is_alive():
            self.sock.close()

    def _due(self, target: tuple[int, int]) -> bool:
        if self.installed is not None and not self.installed(*target):
            return False
        if self.wanted is None or self.wanted(*target):
            return True
        self.skipped += 1
        return False

    def _send(self) -> None:
        if self.sock is not None:
            for target, frame in self.frames:
                if not self._due(target):
                    continue
                try:
                    self.sock.send(frame)
                    self.sent += 1
                except OSError as error:  # e.g. the veth went away with the switch
                    log.debug("probe not sent: %s", error)
            return
        for target, request in self.probes:
            if self._due(target):
                self.client.send_packet_out(request)
                self.sent += 1

    def run(self) -> None:
        next_at = time.monotonic()
        while not self._halt.is_set():
            try:
                self._send()
            except P4RuntimeError as error:  # session closed under us
                log.debug("probing stopped: %s", error)
                return
            next_at += self.interval if self.tick is None else self.tick()
            delay = next_at - time.monotonic()
            if delay < 0:  # fell behind (e.g. a paused process): do not burst
                next_at = time.monotonic()
                delay = 0
            if self._wake.wait(delay):
                self._wake.clear()
                next_at = time.monotonic()
