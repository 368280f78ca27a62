"""Fill each switch's pool of packet header vectors before the fabric soak measures it.

simple_switch takes a PHV (every header and metadata field of the program) from a pool for
each packet it receives and gives it back when the packet leaves; the pool never frees one
(`PHVSourceContextPools`, behavioral-model's src/bm_sim/phv_source.cpp). A switch's memory
therefore grows to the most packets it ever held at once, in steps when a burst queues more
than any before, and stays there: a high-water mark bounded by its queues (an input buffer of
1024 packets, 64 per egress queue), not a leak, but over an hour's soak it reads as one
(docs/results/fabric-soak.md). So before the soak's first sample (the two-edge
soak's and the fabric's), and after the restarted switch is programmed again, every switch
gets bursts of `frames` frames written faster than it takes them onto the far end of one of
its links (the link emulator's interface, which linkem does not read its own transmissions
from, csrc/linkem.c), until FLAT_BURSTS bursts in a row add less than FLAT_KB each to its RSS
(at most MAX_BURSTS): how far each burst takes it depends on the machine, so the RSS says
when it stops growing (one or two flat bursts were not enough: in the hours' soaks leaves
stepped up 13.1 and 27 MB twenty and thirty minutes in, docs/results/fabric-soak.md).
The frames carry an EtherType that is neither IPv4 nor the path tag, so the ingress counts
and drops them (p4src/include/ingress.p4): nothing is forwarded, no controller state
changes. `--warm-frames 0` soaks without it.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Callable, Iterable

WARM_ETHERTYPE = 0x88B6  # IEEE 802 local experimental EtherType 2 (the path tag has 1)
WARM_FRAMES = 100_000  # per burst: far beyond the 1024 the switch's input buffer holds
MAX_BURSTS = 24  # a switch grew for up to sixteen such bursts in the hours' soaks
FLAT_KB = 1024  # FLAT_BURSTS bursts in a row that add less to the RSS: the pool is full
# Growth comes in steps of 5-35 MB with flat bursts between them: after two flat bursts a
# leaf stepped up 27 MB half an hour into the second hour's soak, and a lone switch stepped
# +21.1 and +10.4 MB after flat bursts (docs/results/fabric-soak.md, "The hour, warmed again").
FLAT_BURSTS = 3
WARM_PAUSE_S = 1.0  # between bursts: the switch drains its buffer


def warm_frame() -> bytes:
    """A minimum-size Ethernet frame, locally administered addresses, WARM_ETHERTYPE."""
    dst, src = bytes.fromhex("02000000f0f0"), bytes.fromhex("02000000f0f1")
    return dst + src + WARM_ETHERTYPE.to_bytes(2, "big") + bytes(46)


def far_ends(links: Iterable[tuple[str, str, str, str]], switch: str) -> list[str]:
    """The interfaces that face `switch` across its links: of each (a, b, a's far end, b's
    far end), the far end of whichever of a and b it is."""
    out = []
    for a, b, a_far, b_far in links:
        if a == switch:
            out.append(a_far)
        elif b == switch:
            out.append(b_far)
    return out


def burst(sock: socket.socket, frames: int) -> None:
    """`frames` warm frames written on `sock` (a full queue refuses some: they are not
    needed, the switch's input buffer is what must fill)."""
    frame = warm_frame()
    for _ in range(frames):
        try:
            sock.send(frame)
        except OSError:  # ENOBUFS, EAGAIN: the queue is full; the burst goes on
            continue


def bursts_until_flat(grown_kb: list[int], flat_kb: int = FLAT_KB,
                      max_bursts: int = MAX_BURSTS) -> bool:
    """Whether to stop after bursts that grew the RSS by `grown_kb` each: the last
    FLAT_BURSTS grew it by less than `flat_kb` each, or there were `max_bursts`."""
    last = grown_kb[-FLAT_BURSTS:]
    flat = len(last) == FLAT_BURSTS and all(g < flat_kb for g in last)
    return len(grown_kb) >= max_bursts or flat


def warm(iface: str, rss_kb: Callable[[], int], frames: int = WARM_FRAMES,
         pause_s: float = WARM_PAUSE_S) -> list[int]:
    """Bursts of `frames` warm frames onto `iface` until the switch's RSS (`rss_kb`) stops
    growing (`bursts_until_flat`); each burst's growth in kB. Needs CAP_NET_RAW."""
    grown: list[int] = []
    with socket.socket(socket.AF_PACKET, socket.SOCK_RAW) as sock:
        sock.bind((iface, 0))
        while not bursts_until_flat(grown):
            before = rss_kb()
            burst(sock, frames)
            time.sleep(pause_s)
            grown.append(rss_kb() - before)
    return grown


def warm_switch(name: str, iface: str, rss_kb: Callable[[], int], frames: int) -> list[int]:
    """`warm` the switch `name` through `iface` and print what it took."""
    t0 = time.monotonic()
    grown = warm(iface, rss_kb, frames)
    print(f"warmed {name}: {len(grown)} bursts of {frames} frames dropped at its ingress, "
          f"its RSS +{sum(grown) / 1024:.1f} MB ({', '.join(f'{g / 1024:+.1f}' for g in grown)})"
          f" in {time.monotonic() - t0:.0f} s", flush=True)
    return grown


__all__ = ["FLAT_BURSTS", "FLAT_KB", "MAX_BURSTS", "WARM_ETHERTYPE", "WARM_FRAMES",
           "bursts_until_flat", "far_ends", "warm", "warm_frame", "warm_switch"]
