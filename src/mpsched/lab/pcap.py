"""A minimal classic-pcap reader for receiver-side captures, and per-flow reordering from it.

Reordering itself (RFC 4737) is defined in ``reorder.reordering``; this module only extracts
the per-flow IPv4 ID sequences from a capture.
"""

from __future__ import annotations

import logging
import socket
import struct
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, NamedTuple

from .reorder import ReorderStats, reordering

log = logging.getLogger(__name__)


class PcapError(ValueError):
    """The file is not a classic pcap file we can read (bad global header)."""


class PcapPacket(NamedTuple):
    """One IPv4 packet of a capture. Ports and ``tcp_seq`` are None when absent (other
    protocols, non-first fragments); ``payload_len`` is the transport payload length from the
    IP header (so it is right for snaplen-truncated frames), ``ip_len`` the IP packet's."""

    ts: float
    src: str
    dst: str
    proto: int
    sport: int | None
    dport: int | None
    ip_id: int
    tcp_seq: int | None
    payload_len: int
    ip_len: int = 0


@dataclass
class PcapStats:
    """What the reader did with the records: ``packets`` yielded, ``non_ip`` skipped (ARP,
    IPv6…), ``malformed`` skipped (truncated or garbage headers), ``truncated_file``: 1 if the
    file ended inside a record or a record header was implausible (reading stops there)."""

    records: int = 0
    packets: int = 0
    non_ip: int = 0
    malformed: int = 0
    truncated_file: int = 0


LINKTYPE_ETHERNET = 1
LINKTYPE_RAW = 101
LINKTYPE_LINUX_SLL = 113
LINKTYPE_LINUX_SLL2 = 276
_LINKTYPES = (LINKTYPE_ETHERNET, LINKTYPE_RAW, LINKTYPE_LINUX_SLL, LINKTYPE_LINUX_SLL2)
_MAX_RECORD = 0x40000  # tcpdump's MAXIMUM_SNAPLEN: larger records are garbage
_MAGIC = {
    b"\xd4\xc3\xb2\xa1": ("<", 1e-6),
    b"\xa1\xb2\xc3\xd4": (">", 1e-6),
    b"\x4d\x3c\xb2\xa1": ("<", 1e-9),
    b"\xa1\xb2\x3c\x4d": (">", 1e-9),
}


class _MalformedError(Exception):
    pass


class PcapReader:
    """Iterate over the IPv4 packets of a classic libpcap file (``tcpdump -w``).

    Both byte orders, micro- and nanosecond timestamps; link types Ethernet (with 802.1Q/802.1ad
    tags), Linux cooked v1/v2 (``tcpdump -i any``) and raw IP. Records that cannot be decoded
    are skipped and counted in ``stats`` instead of raising; only an unreadable global header
    raises ``PcapError``. pcapng is not read (``tcpdump -w`` writes classic pcap).
    """

    def __init__(self, source: str | Path | BinaryIO):
        if isinstance(source, str | Path):
            self._file: BinaryIO = open(source, "rb")  # noqa: SIM115 - closed in close()
            self._owned = True
        else:
            self._file, self._owned = source, False
        self.stats = PcapStats()
        header = self._file.read(24)
        if len(header) < 24:
            self.close()
            raise PcapError(f"pcap global header truncated ({len(header)} of 24 bytes)")
        if header[:4] == b"\x0a\x0d\x0d\x0a":
            self.close()
            raise PcapError("pcapng is not supported; write classic pcap (tcpdump -w)")
        if header[:4] not in _MAGIC:
            self.close()
            raise PcapError(f"not a pcap file (magic {header[:4].hex()})")
        self._endian, self._tick = _MAGIC[header[:4]]
        _, _, _, _, self.snaplen, network = struct.unpack(self._endian + "HHiIII", header[4:])
        self.linktype = network & 0xFFFF
        self.nanosecond = self._tick < 1e-6
        if self.linktype not in _LINKTYPES:
            self.close()
            raise PcapError(f"unsupported link type {self.linktype}")

    def close(self) -> None:
        if self._owned:
            self._file.close()

    def __enter__(self) -> PcapReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __iter__(self) -> Iterator[PcapPacket]:
        rec = struct.Struct(self._endian + "IIII")
        while True:
            hdr = self._file.read(16)
            if not hdr:
                return
            if len(hdr) < 16:
                self._truncated("record header")
                return
            sec, frac, incl, orig = rec.unpack(hdr)
            if incl > _MAX_RECORD:
                self._truncated(f"implausible record length {incl}")
                return
            data = self._file.read(incl)
            self.stats.records += 1
            if len(data) < incl:
                self._truncated("record data")
                return
            try:
                pkt = self._decode(sec + frac * self._tick, data, orig)
            except (_MalformedError, struct.error, ValueError) as exc:
                self.stats.malformed += 1
                log.debug("pcap record %d skipped: %s", self.stats.records, exc)
                continue
            if pkt is None:
                self.stats.non_ip += 1
                continue
            self.stats.packets += 1
            yield pkt

    def _truncated(self, what: str) -> None:
        self.stats.truncated_file += 1
        log.warning("pcap ends inside a record (%s) after %d records", what, self.stats.records)

    def _link(self, data: bytes) -> int | None:
        """Offset of the IPv4 header in the frame, None if the frame is not IPv4."""
        if self.linktype == LINKTYPE_ETHERNET:
            off, etype = 14, _u16(data, 12)
            for _ in range(2):  # 802.1Q / 802.1ad tags
                if etype not in (0x8100, 0x88A8):
                    break
                etype, off = _u16(data, off + 2), off + 4
            return off if etype == 0x0800 else None
        if self.linktype == LINKTYPE_LINUX_SLL:
            return 16 if _u16(data, 14) == 0x0800 else None
        if self.linktype == LINKTYPE_LINUX_SLL2:
            return 20 if _u16(data, 0) == 0x0800 else None
        if not data:  # LINKTYPE_RAW
            raise _MalformedError("empty frame")
        return 0 if data[0] >> 4 == 4 else None

    def _decode(self, ts: float, data: bytes, orig_len: int) -> PcapPacket | None:
        off = self._link(data)
        if off is None:
            return None
        if len(data) < off + 20:
            raise _MalformedError("IPv4 header truncated")
        vihl = data[off]
        if vihl >> 4 != 4:
            raise _MalformedError(f"IP version {vihl >> 4} behind an IPv4 link type")
        ihl = (vihl & 0x0F) * 4
        total = _u16(data, off + 2)
        if total == 0:  # GSO packets > 64 KiB (BIG TCP) carry length 0; use the frame length
            total = orig_len - off
        if ihl < 20 or total < ihl:
            raise _MalformedError(f"bad IPv4 header length {ihl} / total length {total}")
        ip_id = _u16(data, off + 4)
        frag_off = _u16(data, off + 6) & 0x1FFF
        proto = data[off + 9]
        src = socket.inet_ntoa(data[off + 12 : off + 16])
        dst = socket.inet_ntoa(data[off + 16 : off + 20])
        l4 = off + ihl
        sport = dport = seq = None
        payload = total - ihl
        if frag_off == 0 and proto in (6, 17):
            need = 14 if proto == 6 else 4
            if len(data) < l4 + need:
                raise _MalformedError("transport header truncated")
            sport, dport = _u16(data, l4), _u16(data, l4 + 2)
            if proto == 6:
                seq = struct.unpack_from(">I", data, l4 + 4)[0]
                doff = (data[l4 + 12] >> 4) * 4
                if doff < 20:
                    raise _MalformedError(f"bad TCP data offset {doff}")
                payload -= doff
            else:
                payload -= 8
            if payload < 0:
                raise _MalformedError("transport header longer than the IP packet")
        return PcapPacket(ts, src, dst, proto, sport, dport, ip_id, seq, payload, total)


def _u16(data: bytes, off: int) -> int:
    if off + 2 > len(data):
        raise _MalformedError("frame truncated")
    return (data[off] << 8) | data[off + 1]


def read_pcap(source: str | Path | BinaryIO) -> tuple[list[PcapPacket], PcapStats]:
    """All IPv4 packets of a classic pcap file and the reader's counters."""
    with PcapReader(source) as reader:
        packets = list(reader)
    return packets, reader.stats


class Flow(NamedTuple):
    """A unidirectional transport flow."""

    src: str
    sport: int | None
    dst: str
    dport: int | None
    proto: int


def ip_id_sequences(
    packets: Iterable[PcapPacket], *, proto: int = 6, data_only: bool = True
) -> dict[Flow, list[int]]:
    """Per flow, the IPv4 IDs of its packets in capture (arrival) order.

    Linux gives each connected TCP socket its own IP ID counter, incremented per segment sent
    (GSO segments included), and a retransmission goes out with a new, higher ID. So at the
    receiver an ID lower than one already seen in the same flow means the network reordered the
    segment — unlike TCP sequence numbers, where loss recovery looks like reordering. With
    ``data_only`` only packets with payload count (pure ACKs share the counter but are not the
    data being measured). Capture at the receiver with GRO off (``ethtool -K <if> gro off``)
    to see every segment; with GRO on, in-order runs arrive merged under their first ID.
    """
    flows: dict[Flow, list[int]] = {}
    for p in packets:
        if p.proto != proto or (data_only and p.payload_len <= 0):
            continue
        flows.setdefault(Flow(p.src, p.sport, p.dst, p.dport, p.proto), []).append(p.ip_id)
    return flows


def pcap_reordering(
    packets: Iterable[PcapPacket], *, proto: int = 6, data_only: bool = True
) -> dict[Flow, ReorderStats]:
    """RFC 4737 reordering per flow of a receiver-side capture, by IPv4 ID (16-bit wrap)."""
    return {
        flow: reordering(ids, modulus=1 << 16)
        for flow, ids in ip_id_sequences(packets, proto=proto, data_only=data_only).items()
    }
