"""The bound on PacketOuts waiting for a session's stream.

A session's stream requests (arbitration, digest acks, PacketOuts) share one FIFO that the
gRPC stream drains. PacketOuts come from a sender thread (the prober) and must not grow it
without end when the stream stalls (a switch that stops reading, a slow channel): at most
`limit` PacketOuts wait; beyond that a new one is dropped (drop-new), counted, and a warning
is logged at most once per WARN_INTERVAL_S.

Drop-new rather than drop-oldest: the queue is a plain FIFO shared with control messages, so
dropping the newest needs no reordering of what is already queued, and a probe loses nothing
by waiting, since the data plane stamps its sequence number and send time (tx_ts) at the
ingress edge, not the controller at queueing (p4src/include/headers.p4, path_tag_t): an old
queued probe measures the path as well as a new one would.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

log = logging.getLogger(__name__)

# Default bound, and the least the controller sets (TelemetryConfig.packet_out_backlog sizes
# it to a switch's probes): one probe round of bench-scale's largest edge (63 peer edges x 4
# paths = 252 PacketOuts sent at once) fits.
PACKET_OUT_BACKLOG = 256
WARN_INTERVAL_S = 10.0


class PacketOutBacklog:
    """Counts the PacketOuts queued and not yet handed to the stream; admits a new one only
    below `limit` (thread-safe)."""

    def __init__(self, limit: int = PACKET_OUT_BACKLOG, what: str = "",
                 clock: Callable[[], float] = time.monotonic) -> None:
        if limit < 1:
            raise ValueError(f"PacketOut backlog limit must be >= 1, got {limit!r}")
        self.limit = limit
        self.what = what  # the device, for the warning
        self.queued = 0
        self.dropped = 0  # since the session began
        self._clock = clock
        self._lock = threading.Lock()
        self._warned_at: float | None = None
        self._dropped_at_warning = 0

    def admit(self) -> bool:
        """True (and counted as queued) if one more PacketOut may wait; else counts a drop."""
        with self._lock:
            if self.queued < self.limit:
                self.queued += 1
                return True
            self.dropped += 1
            now = self._clock()
            if self._warned_at is not None and now - self._warned_at < WARN_INTERVAL_S:
                return False
            since = self.dropped - self._dropped_at_warning
            self._warned_at, self._dropped_at_warning = now, self.dropped
        log.warning("%s: %d PacketOut(s) waiting for the stream; dropped %d new one(s) "
                    "(%d since the session began)", self.what, self.limit, since, self.dropped)
        return False

    def sent(self) -> None:
        """One queued PacketOut went to the stream."""
        with self._lock:
            self.queued = max(0, self.queued - 1)
