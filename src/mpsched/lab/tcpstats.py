"""TCP sender/receiver state from ``ss -tin`` text and from Linux ``struct tcp_info`` bytes.

The raw inputs of the RTT and retransmission metrics (``metrics.py`` defines the metrics).
"""

from __future__ import annotations

import logging
import re
import socket
import struct
from dataclasses import dataclass, field

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class TcpStats:
    """What we sample of a TCP connection, from ``ss -tin`` or ``getsockopt(TCP_INFO)``.

    RTTs are the kernel's smoothed RTT and its variation (SRTT and RTTVAR of RFC 6298), the
    windowed minimum RTT and the receiver-side RTT estimate (``rcv_rtt``), in ms;
    ``retrans_total`` counts retransmitted segments over the connection's life and ``bytes_*``
    are the RFC 4898 (TCP ESTATS) octet counters named in linux/tcp.h; rates are in bit/s.
    ss omits zero/unset fields, so counters absent from ss text are 0, while an absent RTT
    (no sample yet) or pacing rate (unlimited) is None.
    """

    rtt_ms: float | None = None
    rttvar_ms: float | None = None
    min_rtt_ms: float | None = None
    rto_ms: float | None = None
    cwnd: int = 0
    ssthresh: int | None = None
    mss: int = 0
    retrans: int = 0
    retrans_total: int = 0
    lost: int = 0
    bytes_sent: int = 0
    bytes_retrans: int = 0
    bytes_acked: int = 0
    bytes_received: int = 0
    segs_out: int = 0
    segs_in: int = 0
    data_segs_out: int = 0
    data_segs_in: int = 0
    delivery_rate_bps: float = 0.0
    pacing_rate_bps: float | None = None
    reord_seen: int = 0
    rcv_ooopack: int = 0
    rcv_rtt_ms: float | None = None


@dataclass(frozen=True)
class SsSocket:
    """One socket of ``ss -tin`` output: the socket line plus its parsed info."""

    state: str
    recv_q: int
    send_q: int
    local: str
    peer: str
    stats: TcpStats
    cong: str | None = None
    raw: dict[str, str] = field(default_factory=dict)


_SS_STATES = frozenset(
    "ESTAB SYN-SENT SYN-RECV FIN-WAIT-1 FIN-WAIT-2 TIME-WAIT UNCONN CLOSE-WAIT LAST-ACK "
    "LISTEN CLOSING UNKNOWN".split()
)
_SS_FLAGS = frozenset("ts sack ecn ecnseen fastopen app_limited bidir".split())
_SS_SPACED = frozenset("send pacing_rate delivery_rate".split())  # "key value" tokens
_BW_RE = re.compile(r"^([0-9.]+)([KMG]?)bps$")


def _bw(text: str) -> float | None:
    """ss bandwidth: ``"123bps"`` with -n, ``"12.3Mbps"`` (K/M/G) without."""
    m = _BW_RE.match(text.split("/")[0])
    if not m:
        return None
    return float(m.group(1)) * {"": 1, "K": 1e3, "M": 1e6, "G": 1e9}[m.group(2)]


def parse_ss_info(text: str) -> tuple[dict[str, str], str | None]:
    """Tokens of one ``ss -i`` info line → ({key: value}, congestion control name).

    Keys as printed by iproute2 6.1 ``tcp_stats_print`` (``rtt:0.047/0.024``,
    ``retrans:1/71``, ``send 48716255319bps``, ``bbr:(bw:…)``); flags such as ``sack`` or
    ``app_limited`` map to ``""``; the bare congestion control name (``cubic``) is returned
    separately.
    """
    fields: dict[str, str] = {}
    cong: str | None = None
    tokens = text.split()
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if tok in _SS_SPACED and i + 1 < len(tokens):
            fields[tok] = tokens[i + 1]
            i += 2
            continue
        if ":" in tok:
            key, _, value = tok.partition(":")
            fields[key] = value
        elif tok in _SS_FLAGS:
            fields[tok] = ""
        elif cong is None and re.fullmatch(r"[a-z][a-z0-9_]*", tok):
            cong = tok
        i += 1
    return fields, cong


def _num(fields: dict[str, str], key: str) -> float | None:
    try:
        return float(fields[key].split("(")[0].removesuffix("ms"))
    except (KeyError, ValueError):
        return None


def tcp_stats_from_ss(fields: dict[str, str]) -> TcpStats:
    """``TcpStats`` from the fields of ``parse_ss_info`` (ms for times, bit/s for rates)."""

    def count(key: str) -> int:
        v = _num(fields, key)
        return int(v) if v is not None else 0

    rtt = fields.get("rtt", "").split("/")
    retrans = fields.get("retrans", "0/0").split("/")
    return TcpStats(
        rtt_ms=float(rtt[0]) if rtt[0] else None,
        rttvar_ms=float(rtt[1]) if len(rtt) > 1 else None,
        min_rtt_ms=_num(fields, "minrtt"),
        rto_ms=_num(fields, "rto"),
        cwnd=count("cwnd"),
        ssthresh=int(v) if (v := _num(fields, "ssthresh")) is not None else None,
        mss=count("mss"),
        retrans=int(retrans[0]),
        retrans_total=int(retrans[-1]),
        lost=count("lost"),
        bytes_sent=count("bytes_sent"),
        bytes_retrans=count("bytes_retrans"),
        bytes_acked=count("bytes_acked"),
        bytes_received=count("bytes_received"),
        segs_out=count("segs_out"),
        segs_in=count("segs_in"),
        data_segs_out=count("data_segs_out"),
        data_segs_in=count("data_segs_in"),
        delivery_rate_bps=_bw(fields.get("delivery_rate", "0bps")) or 0.0,
        pacing_rate_bps=_bw(fields["pacing_rate"]) if "pacing_rate" in fields else None,
        reord_seen=count("reord_seen"),
        rcv_ooopack=count("rcv_ooopack"),
        rcv_rtt_ms=_num(fields, "rcv_rtt"),
    )


def parse_ss(text: str) -> list[SsSocket]:
    """Sockets of ``ss -tin`` (or ``-tinH``, ``-tinO``) output, as printed by iproute2 6.1.

    A socket line ``ESTAB 0 0 127.0.0.1:46160 127.0.0.1:15201`` is followed by its info on the
    next, tab-indented line (or on the same line with ``-O``). The header line and lines that
    cannot be parsed are skipped. Addresses keep ss's spelling (``[::ffff:10.0.0.1]:5201``).
    """
    out: list[SsSocket] = []
    head: list[str] | None = None
    info: list[str] = []

    def flush() -> None:
        if head is None:
            return
        try:
            state, rq, sq, local, peer = head[:5]
            fields, cong = parse_ss_info(" ".join(head[5:] + info))
            out.append(
                SsSocket(
                    state, int(rq), int(sq), local, peer, tcp_stats_from_ss(fields), cong, fields
                )
            )
        except (ValueError, IndexError) as exc:
            log.debug("skipping unparsable ss socket %r: %s", head, exc)

    for line in text.splitlines():
        if not line.strip():
            continue
        if line[0] in " \t":
            info.append(line)
            continue
        tokens = line.split()
        if tokens[0] in ("tcp", "mptcp"):  # Netid column (ss -a / several protocols)
            tokens = tokens[1:]
        if tokens and tokens[0] in _SS_STATES:
            flush()
            head, info = tokens, []
    flush()
    return out


@dataclass(frozen=True)
class TcpInfo:
    """Linux ``struct tcp_info`` (linux/tcp.h of kernel 6.1), raw units of the kernel.

    Times are µs except ``last_*`` (ms); rates are bytes/s. Fields beyond the bytes the kernel
    returned (older kernels return shorter structs) are None.
    """

    state: int
    ca_state: int
    retransmits: int
    probes: int
    backoff: int
    options: int
    snd_wscale: int
    rcv_wscale: int
    delivery_rate_app_limited: int
    fastopen_client_fail: int
    rto: int
    ato: int
    snd_mss: int
    rcv_mss: int
    unacked: int
    sacked: int
    lost: int
    retrans: int
    fackets: int
    last_data_sent: int
    last_ack_sent: int
    last_data_recv: int
    last_ack_recv: int
    pmtu: int
    rcv_ssthresh: int
    rtt: int
    rttvar: int
    snd_ssthresh: int
    snd_cwnd: int
    advmss: int
    reordering: int
    rcv_rtt: int
    rcv_space: int
    total_retrans: int
    pacing_rate: int | None = None
    max_pacing_rate: int | None = None
    bytes_acked: int | None = None
    bytes_received: int | None = None
    segs_out: int | None = None
    segs_in: int | None = None
    notsent_bytes: int | None = None
    min_rtt: int | None = None
    data_segs_in: int | None = None
    data_segs_out: int | None = None
    delivery_rate: int | None = None
    busy_time: int | None = None
    rwnd_limited: int | None = None
    sndbuf_limited: int | None = None
    delivered: int | None = None
    delivered_ce: int | None = None
    bytes_sent: int | None = None
    bytes_retrans: int | None = None
    dsack_dups: int | None = None
    reord_seen: int | None = None
    rcv_ooopack: int | None = None
    snd_wnd: int | None = None

    def stats(self) -> TcpStats:
        """The same quantities as ``ss -tin`` shows, in its units (ms, bit/s)."""

        def rate(v: int | None) -> float | None:
            return None if v is None or v == (1 << 64) - 1 else 8.0 * v

        return TcpStats(
            rtt_ms=self.rtt / 1000.0,
            rttvar_ms=self.rttvar / 1000.0,
            min_rtt_ms=None if self.min_rtt in (None, 0xFFFFFFFF) else self.min_rtt / 1000.0,
            rto_ms=self.rto / 1000.0,
            cwnd=self.snd_cwnd,
            ssthresh=self.snd_ssthresh if self.snd_ssthresh < 0xFFFF else None,
            mss=self.snd_mss,
            retrans=self.retrans,
            retrans_total=self.total_retrans,
            lost=self.lost,
            bytes_sent=self.bytes_sent or 0,
            bytes_retrans=self.bytes_retrans or 0,
            bytes_acked=self.bytes_acked or 0,
            bytes_received=self.bytes_received or 0,
            segs_out=self.segs_out or 0,
            segs_in=self.segs_in or 0,
            data_segs_out=self.data_segs_out or 0,
            data_segs_in=self.data_segs_in or 0,
            delivery_rate_bps=rate(self.delivery_rate) or 0.0,
            pacing_rate_bps=rate(self.pacing_rate),
            reord_seen=self.reord_seen or 0,
            rcv_ooopack=self.rcv_ooopack or 0,
            rcv_rtt_ms=self.rcv_rtt / 1000.0 if self.rcv_rtt else None,
        )


# (name, struct code, offset) after the 8 leading u8s, in linux/tcp.h (6.1) order.
_TCPI_FIELDS: tuple[tuple[str, str, int], ...] = (
    *((n, "I", 8 + 4 * k) for k, n in enumerate(
        "rto ato snd_mss rcv_mss unacked sacked lost retrans fackets last_data_sent "
        "last_ack_sent last_data_recv last_ack_recv pmtu rcv_ssthresh rtt rttvar snd_ssthresh "
        "snd_cwnd advmss reordering rcv_rtt rcv_space total_retrans".split())),
    ("pacing_rate", "Q", 104), ("max_pacing_rate", "Q", 112), ("bytes_acked", "Q", 120),
    ("bytes_received", "Q", 128), ("segs_out", "I", 136), ("segs_in", "I", 140),
    ("notsent_bytes", "I", 144), ("min_rtt", "I", 148), ("data_segs_in", "I", 152),
    ("data_segs_out", "I", 156), ("delivery_rate", "Q", 160), ("busy_time", "Q", 168),
    ("rwnd_limited", "Q", 176), ("sndbuf_limited", "Q", 184), ("delivered", "I", 192),
    ("delivered_ce", "I", 196), ("bytes_sent", "Q", 200), ("bytes_retrans", "Q", 208),
    ("dsack_dups", "I", 216), ("reord_seen", "I", 220), ("rcv_ooopack", "I", 224),
    ("snd_wnd", "I", 228),
)  # fmt: skip
TCP_INFO_MIN_LEN = 104  # up to tcpi_total_retrans (Linux 2.6)
TCP_INFO_LEN_6_1 = 232  # sizeof(struct tcp_info) in linux/tcp.h of kernel 6.1


def parse_tcp_info(buf: bytes) -> TcpInfo:
    """Decode ``getsockopt(IPPROTO_TCP, TCP_INFO)`` bytes (native byte order, kernel layout).

    Accepts what any kernel since 2.6 returns: fields past the end of a short buffer are None,
    bytes past the 6.1 struct (newer kernels append fields) are ignored.
    """
    if len(buf) < TCP_INFO_MIN_LEN:
        raise ValueError(f"tcp_info needs >= {TCP_INFO_MIN_LEN} bytes, got {len(buf)}")
    b = struct.unpack_from("=8B", buf)
    vals: dict[str, int | None] = {}
    for name, code, off in _TCPI_FIELDS:
        size = struct.calcsize("=" + code)
        vals[name] = struct.unpack_from("=" + code, buf, off)[0] if off + size <= len(buf) else None
    return TcpInfo(
        state=b[0],
        ca_state=b[1],
        retransmits=b[2],
        probes=b[3],
        backoff=b[4],
        options=b[5],
        snd_wscale=b[6] & 0x0F,  # bit-fields: first declared = low bits (x86, arm64)
        rcv_wscale=b[6] >> 4,
        delivery_rate_app_limited=b[7] & 0x01,
        fastopen_client_fail=(b[7] >> 1) & 0x03,
        **vals,  # type: ignore[arg-type]
    )


def tcp_info(sock: socket.socket) -> TcpInfo:
    """``TcpInfo`` of a connected TCP socket (Linux only)."""
    return parse_tcp_info(sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 512))
