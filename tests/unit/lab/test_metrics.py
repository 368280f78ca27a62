"""Metric definitions against hand-computed values, real sockets, ss output and captures."""

from __future__ import annotations

import io
import math
import random
import shutil
import socket
import struct
import subprocess
import threading

import pytest
from scapy import all as scapy

from mpsched.lab import metrics as m
from mpsched.lab import pcap as pc
from mpsched.lab import tcpstats as ts
from tests.waiting import wait_until

# --------------------------------------------------------------------------------------------
# rates


def test_goodput_mbps():
    assert m.goodput_mbps(1_250_000, 1.0) == 10.0
    assert m.goodput_mbps(0, 2.0) == 0.0
    with pytest.raises(ValueError):
        m.goodput_mbps(1, 0)
    with pytest.raises(ValueError):
        m.goodput_mbps(-1, 1)


def test_rate_series_basic_and_unsorted():
    samples = [(2.0, 250_000), (0.0, 0), (1.0, 125_000)]
    assert m.rate_series(samples) == [(0.5, 1.0), (1.5, 1.0)]
    assert m.rate_series([]) == [] and m.rate_series([(1.0, 5)]) == []


def test_rate_series_duplicate_timestamps_keep_last_reading():
    samples = [(0.0, 0), (1.0, 100_000), (1.0, 125_000), (2.0, 250_000)]
    assert m.rate_series(samples) == [(0.5, 1.0), (1.5, 1.0)]


def test_rate_series_counter_reset_and_wrap():
    # reset between t=1 and t=2: the counter restarted from 0 and reads 125000 at t=2
    samples = [(0.0, 0), (1.0, 1_000_000), (2.0, 125_000)]
    assert m.rate_series(samples) == [(0.5, 8.0), (1.5, 1.0)]
    # a 32-bit counter wrapping: 2**32 - 25000 → 100000 is 125000 bytes
    wrap = [(0.0, 2**32 - 25_000), (1.0, 100_000)]
    assert m.rate_series(wrap, modulus=2**32) == [(0.5, 1.0)]
    assert m.rate_series([(0.0, 0), (1.0, math.nan), (2.0, 250_000)]) == [(1.0, 1.0)]


def test_goodput_fraction():
    assert m.goodput_fraction(12.0, [10, 5]) == pytest.approx(0.8)
    assert m.goodput_fraction(5.0, 10.0) == 0.5
    with pytest.raises(ValueError):
        m.goodput_fraction(1.0, [])


def test_reaction_time():
    series = [(0.5, 15.0), (1.5, 15.0), (2.5, 1.0), (3.5, 6.0), (4.5, 9.5), (5.5, 9.6)]
    assert m.reaction_time(series, 2.0, 9.0) == 2.5
    # a short spike above target does not count with a hold time
    spiky = [(2.5, 10.0), (3.5, 2.0), (4.5, 10.0), (5.5, 10.0), (6.5, 10.0)]
    assert m.reaction_time(spiky, 2.0, 9.0, hold_s=2.0) == 2.5
    assert m.reaction_time(spiky, 2.0, 9.0, hold_s=0.5) == 0.5
    assert math.isnan(m.reaction_time(series, 2.0, 20.0))


# --------------------------------------------------------------------------------------------
# fairness (sample statistics: tests/unit/test_stats.py)


def test_jain_index():
    assert m.jain_index([1, 1]) == 1.0
    assert m.jain_index([1, 0]) == 0.5
    assert m.jain_index([1, 2, 3]) == pytest.approx(36 / 42)
    assert m.jain_index([5]) == 1.0
    assert m.jain_index([0, 0]) == 1.0
    assert math.isnan(m.jain_index([]))
    with pytest.raises(ValueError):
        m.jain_index([1, -1])


def test_fct_summary():
    out = m.fct_summary([(1000, 1.0), (2000, 5.0), (1000, 3.0)])
    assert list(out) == [1000, 2000]
    assert out[1000] == m.FctStats(n=2, mean=2.0, p50=2.0, p99=pytest.approx(2.98))
    assert out[2000] == m.FctStats(1, 5.0, 5.0, 5.0)
    assert m.fct_summary([]) == {}


# --------------------------------------------------------------------------------------------
# ss -tin (iproute2 6.1) and struct tcp_info

# Captured with `ss -tin` (iproute2 6.1.0) during an iperf3 transfer through a 10 Mbit/s HTB
# bottleneck with a 5-packet queue: sender sockets with retransmissions, a receiver socket.
SS_SAMPLE = (
    "State Recv-Q Send-Q Local Address:Port  Peer Address:Port Process           \n"
    "ESTAB 0      288160    10.212.1.1:47844   10.212.2.1:15203\n"
    "\t cubic wscale:9,9 rto:228 rtt:25.54/5.222 mss:1448 pmtu:1500 rcvmss:536 advmss:1448 "
    "cwnd:2 ssthresh:2 bytes_sent:689269 bytes_retrans:102800 bytes_acked:582126 segs_out:479 "
    "segs_in:176 data_segs_out:477 send 907126bps lastsnd:8 lastrcv:2500 lastack:12 "
    "pacing_rate 1632808bps delivery_rate 676040bps delivered:405 busy:2500ms "
    "rwnd_limited:40ms(1.6%) unacked:3 retrans:1/71 lost:1 sacked:1 rcv_space:14480 "
    "rcv_ssthresh:42242 notsent:283816 minrtt:0.005 snd_wnd:1014784\n"
    "ESTAB 0      0         10.212.1.1:47828   10.212.2.1:15203\n"
    "\t bbr wscale:9,9 rto:204 rtt:0.05/0.03 ato:40 mss:1448 pmtu:1500 rcvmss:536 advmss:1448 "
    "cwnd:13 bytes_sent:185 bytes_acked:186 bytes_received:4 segs_out:7 segs_in:7 "
    "data_segs_out:3 data_segs_in:4 bbr:(bw:1053090592bps,mrtt:0.011,pacing_gain:2.88672,"
    "cwnd_gain:2.88672) send 3011840000bps lastsnd:2500 lastrcv:2500 lastack:2500 "
    "pacing_rate 5517557432bps delivery_rate 1053090904bps delivered:4 app_limited "
    "rcv_space:14480 rcv_ssthresh:42242 minrtt:0.011 snd_wnd:43520  \n"
    "ESTAB 0      0      [::ffff:10.212.2.1]:15203 [::ffff:10.212.1.1]:47856\n"
    "\t cubic wscale:9,9 rto:204 rtt:0.017/0.008 ato:40 mss:1448 pmtu:1500 rcvmss:1448 "
    "advmss:1448 cwnd:10 bytes_received:2416749 segs_out:225 segs_in:1672 data_segs_in:1670 "
    "send 6814117647bps lastsnd:2508 lastrcv:4 lastack:4 pacing_rate 19473735600bps "
    "delivered:1 app_limited rcv_rtt:11.125 rcv_space:66608 rcv_ssthresh:169415 "
    "minrtt:0.017 rcv_ooopack:125 snd_wnd:42496\n"
)


def test_parse_ss_sample():
    socks = ts.parse_ss(SS_SAMPLE)
    assert [s.peer for s in socks] == [
        "10.212.2.1:15203",
        "10.212.2.1:15203",
        "[::ffff:10.212.1.1]:47856",
    ]
    a = socks[0]
    assert (a.state, a.recv_q, a.send_q, a.local, a.cong) == (
        "ESTAB",
        0,
        288160,
        "10.212.1.1:47844",
        "cubic",
    )
    assert a.stats == ts.TcpStats(
        rtt_ms=25.54,
        rttvar_ms=5.222,
        min_rtt_ms=0.005,
        rto_ms=228.0,
        cwnd=2,
        ssthresh=2,
        mss=1448,
        retrans=1,
        retrans_total=71,
        lost=1,
        bytes_sent=689269,
        bytes_retrans=102800,
        bytes_acked=582126,
        bytes_received=0,
        segs_out=479,
        segs_in=176,
        data_segs_out=477,
        data_segs_in=0,
        delivery_rate_bps=676040.0,
        pacing_rate_bps=1632808.0,
    )
    assert a.raw["rwnd_limited"] == "40ms(1.6%)" and a.raw["busy"] == "2500ms"
    b = socks[1]
    assert b.cong == "bbr" and "app_limited" in b.raw and b.stats.ssthresh is None
    assert b.stats.retrans_total == 0 and b.stats.bytes_received == 4
    c = socks[2].stats
    assert (c.rcv_ooopack, c.rcv_rtt_ms, c.bytes_received, c.delivery_rate_bps) == (
        125,
        11.125,
        2416749,
        0.0,
    )


def test_parse_ss_oneline_and_human_rates():
    text = (
        'ESTAB 0 0 127.0.0.1:1 127.0.0.1:2 users:(("x",pid=1,fd=3)) cubic rtt:1.5/0.5 '
        "send 48.7Mbps delivery_rate 1.5Gbps pacing_rate 20.2Kbps/30.0Kbps retrans:0/3\n"
    )
    (s,) = ts.parse_ss(text)
    assert s.stats.rtt_ms == 1.5 and s.stats.retrans_total == 3
    assert s.stats.delivery_rate_bps == 1.5e9 and s.stats.pacing_rate_bps == pytest.approx(20.2e3)
    assert ts.parse_ss("garbage\n\tmore garbage\n") == []


def _pack_tcp_info(**vals: int) -> bytes:
    buf = bytearray(ts.TCP_INFO_LEN_6_1)
    buf[0] = 1  # TCP_ESTABLISHED
    buf[6] = (7 << 4) | 9  # snd_wscale 9, rcv_wscale 7
    for name, code, off in ts._TCPI_FIELDS:
        if name in vals:
            struct.pack_into("=" + code, buf, off, vals[name])
    return bytes(buf)


def test_parse_tcp_info_layout():
    buf = _pack_tcp_info(
        rtt=25540, rttvar=5222, total_retrans=71, bytes_acked=582126, bytes_received=9,
        snd_cwnd=2, snd_ssthresh=0x7FFFFFFF, delivery_rate=84505, snd_wnd=1014784,
        rcv_ooopack=125, bytes_retrans=102800, min_rtt=5,
    )  # fmt: skip
    ti = ts.parse_tcp_info(buf)
    assert (ti.state, ti.snd_wscale, ti.rcv_wscale) == (1, 9, 7)
    assert (ti.rtt, ti.total_retrans, ti.bytes_acked, ti.snd_wnd) == (25540, 71, 582126, 1014784)
    st = ti.stats()
    assert (st.rtt_ms, st.rttvar_ms, st.min_rtt_ms) == (25.54, 5.222, 0.005)
    assert st.ssthresh is None and st.cwnd == 2 and st.delivery_rate_bps == 676040.0
    assert (st.bytes_retrans, st.rcv_ooopack, st.bytes_received) == (102800, 125, 9)
    # newer kernels append fields: ignored; older ones return less: missing fields are None
    assert ts.parse_tcp_info(buf + bytes(48)).snd_wnd == 1014784
    old = ts.parse_tcp_info(buf[: ts.TCP_INFO_MIN_LEN])
    assert old.total_retrans == 71 and old.bytes_acked is None and old.stats().bytes_acked == 0
    with pytest.raises(ValueError):
        ts.parse_tcp_info(buf[:50])


@pytest.fixture
def loopback_transfer():
    """A finished 1 MB loopback TCP transfer; yields (client socket, server-side socket)."""
    srv = socket.create_server(("127.0.0.1", 0))
    cli = socket.create_connection(srv.getsockname())
    acc, _ = srv.accept()
    size = 1_000_000
    got = bytearray()

    def read() -> None:
        while len(got) < size:
            got.extend(acc.recv(1 << 20))

    reader = threading.Thread(target=read)
    reader.start()
    cli.sendall(b"x" * size)
    reader.join(10)
    # the last ACK arrives after the data (+ 1: the SYN)
    wait_until(lambda: ts.tcp_info(cli).bytes_acked == size + 1, timeout=10,
               what="every byte acknowledged")
    yield cli, acc, size
    for s in (cli, acc, srv):
        s.close()


def test_tcp_info_of_a_real_socket(loopback_transfer):
    cli, acc, size = loopback_transfer
    sender, receiver = ts.tcp_info(cli), ts.tcp_info(acc)
    assert sender.state == receiver.state == 1  # TCP_ESTABLISHED
    assert sender.bytes_sent == size and sender.bytes_acked == size + 1  # + the SYN
    assert receiver.bytes_received == size
    assert sender.rtt > 0 and sender.snd_mss > 0 and sender.snd_cwnd > 0
    assert sender.data_segs_out >= 1 and receiver.data_segs_in == sender.data_segs_out


@pytest.mark.skipif(shutil.which("ss") is None, reason="missing: ss (iproute2)")
def test_ss_and_tcp_info_agree(loopback_transfer):
    cli, _, _ = loopback_transfer
    (lhost, lport), (rhost, rport) = cli.getsockname(), cli.getpeername()
    out = subprocess.run(
        ["ss", "-tinH", "src", f"{lhost}:{lport}", "dst", f"{rhost}:{rport}"],
        capture_output=True, text=True, check=True, timeout=10,
    ).stdout  # fmt: skip
    (sock,) = ts.parse_ss(out)
    from_ss, from_info = sock.stats, ts.tcp_info(cli).stats()
    for name in ("bytes_sent", "bytes_acked", "bytes_received", "segs_out", "segs_in",
                 "data_segs_out", "retrans_total", "cwnd", "mss", "ssthresh", "min_rtt_ms",
                 "rto_ms"):  # fmt: skip
        assert getattr(from_ss, name) == getattr(from_info, name), name
    assert from_ss.rtt_ms == pytest.approx(from_info.rtt_ms, abs=0.5)


# --------------------------------------------------------------------------------------------
# pcap


def _tcp(src, dst, sport, dport, ip_id, seq, payload=b"", **ip):
    return (
        scapy.Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")
        / scapy.IP(src=src, dst=dst, id=ip_id, **ip)
        / scapy.TCP(sport=sport, dport=dport, seq=seq, flags="PA" if payload else "A")
        / payload
    )


def _sample_packets():
    pkts = [
        _tcp("10.0.0.1", "10.0.0.2", 40000, 5201, 100, 1000, b"a" * 100),
        _tcp("10.0.0.2", "10.0.0.1", 5201, 40000, 7, 1, b""),  # pure ACK
        _tcp("10.0.0.1", "10.0.0.2", 40000, 5201, 102, 1200, b"c" * 100,
             options=[scapy.IPOption_Router_Alert()]),
        _tcp("10.0.0.1", "10.0.0.2", 40000, 5201, 101, 1100, b"b" * 100),
        scapy.Ether() / scapy.Dot1Q(vlan=5) / scapy.IP(src="10.0.0.3", dst="10.0.0.4", id=9)
        / scapy.UDP(sport=1, dport=2) / (b"u" * 33),
        scapy.Ether() / scapy.ARP(),
        scapy.Ether() / scapy.IPv6() / scapy.UDP(),
        scapy.Ether() / scapy.IP(src="10.0.0.5", dst="10.0.0.6", id=11, frag=10, proto=17)
        / (b"f" * 40),
    ]  # fmt: skip
    for i, p in enumerate(pkts):
        p.time = 1_700_000_000 + i * 0.25
    return pkts


EXPECTED = [  # ..., payload length, IP length (20 + TCP 20 + options / UDP 8 + payload)
    pc.PcapPacket(1_700_000_000.0, "10.0.0.1", "10.0.0.2", 6, 40000, 5201, 100, 1000, 100, 140),
    pc.PcapPacket(1_700_000_000.25, "10.0.0.2", "10.0.0.1", 6, 5201, 40000, 7, 1, 0, 40),
    pc.PcapPacket(1_700_000_000.5, "10.0.0.1", "10.0.0.2", 6, 40000, 5201, 102, 1200, 100, 144),
    pc.PcapPacket(1_700_000_000.75, "10.0.0.1", "10.0.0.2", 6, 40000, 5201, 101, 1100, 100, 140),
    pc.PcapPacket(1_700_000_001.0, "10.0.0.3", "10.0.0.4", 17, 1, 2, 9, None, 33, 61),
    pc.PcapPacket(1_700_000_001.75, "10.0.0.5", "10.0.0.6", 17, None, None, 11, None, 40, 60),
]


@pytest.mark.parametrize(
    ("endianness", "nano"), [("<", False), (">", False), ("<", True), (">", True)]
)
def test_pcap_written_by_scapy(tmp_path, endianness, nano):
    path = tmp_path / "s.pcap"
    with scapy.PcapWriter(str(path), linktype=1, endianness=endianness, nano=nano) as w:
        for p in _sample_packets():
            w.write(p)
    packets, stats = pc.read_pcap(path)
    assert [p._replace(ts=round(p.ts, 6)) for p in packets] == EXPECTED
    assert (stats.records, stats.packets, stats.non_ip, stats.malformed) == (8, 6, 2, 0)
    flows = pc.pcap_reordering(packets)
    data_flow = pc.Flow("10.0.0.1", 40000, "10.0.0.2", 5201, 6)
    assert list(flows) == [data_flow]  # the pure ACK carries no data
    assert (flows[data_flow].reordered, flows[data_flow].extents) == (1, [1])
    assert pc.ip_id_sequences(packets, proto=17) == {
        pc.Flow("10.0.0.3", 1, "10.0.0.4", 2, 17): [9],
        pc.Flow("10.0.0.5", None, "10.0.0.6", None, 17): [11],
    }


def _pcap(records: list[tuple[bytes, int]], linktype: int = 1, endian: str = "<") -> bytes:
    """A classic pcap from (captured bytes, original length) records."""
    out = struct.pack(endian + "IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, linktype)
    for i, (data, orig) in enumerate(records):
        out += struct.pack(endian + "IIII", 1000 + i, 500, len(data), orig) + data
    return out


def test_pcap_snaplen_truncated_frames_keep_ip_lengths():
    frame = bytes(_tcp("10.0.0.1", "10.0.0.2", 1, 2, 65535, 9, b"p" * 1000))
    packets, stats = pc.read_pcap(io.BytesIO(_pcap([(frame[:54], len(frame))])))
    assert packets[0].payload_len == 1000 and packets[0].ip_id == 65535
    assert packets[0].ts == pytest.approx(1000.0005)
    # cut inside the TCP header: skipped and counted
    packets, stats = pc.read_pcap(io.BytesIO(_pcap([(frame[:40], len(frame))])))
    assert packets == [] and stats.malformed == 1


def test_pcap_raw_and_cooked_link_types():
    ip = bytes(scapy.IP(src="1.2.3.4", dst="5.6.7.8", id=3) / scapy.UDP(sport=7, dport=9) / b"xy")
    sll = b"\x00\x00\x00\x01\x00\x06" + bytes(8) + b"\x08\x00" + ip
    sll2 = b"\x08\x00" + bytes(18) + ip
    for linktype, frame in ((101, ip), (113, sll), (276, sll2)):
        packets, _ = pc.read_pcap(io.BytesIO(_pcap([(frame, len(frame))], linktype)))
        assert packets == [pc.PcapPacket(1000.0005, "1.2.3.4", "5.6.7.8", 17, 7, 9, 3, None, 2,
                                         30)]


def test_pcap_garbage_is_skipped_and_counted():
    good = bytes(_tcp("10.0.0.1", "10.0.0.2", 1, 2, 1, 9, b"p" * 10))
    ip6_in_v4 = good[:14] + bytes([0x65]) + good[15:]
    bad_ihl = good[:14] + bytes([0x43]) + good[15:]
    bad_doff = good[:46] + bytes([0x20]) + good[47:]
    records = [(b"\x00" * 10, 10), (ip6_in_v4, 64), (bad_ihl, 64), (bad_doff, 64), (good, 64)]
    data = _pcap(records) + struct.pack("<IIII", 1, 2, 100, 100) + b"short"
    packets, stats = pc.read_pcap(io.BytesIO(data))
    assert [p.ip_id for p in packets] == [1]
    assert (stats.malformed, stats.truncated_file, stats.records) == (4, 1, 6)
    # an implausible record length stops reading
    data = _pcap([(good, 64)]) + struct.pack("<IIII", 1, 2, 1 << 30, 1 << 30) + good
    packets, stats = pc.read_pcap(io.BytesIO(data))
    assert len(packets) == 1 and stats.truncated_file == 1


def test_pcap_random_bytes_never_raise():
    good = bytes(_tcp("10.0.0.1", "10.0.0.2", 1, 2, 1, 9, b"p" * 10))
    rng = random.Random(7)
    base = bytearray(_pcap([(good, len(good))] * 20))
    for _ in range(300):
        blob = bytearray(base)
        for _ in range(rng.randint(1, 30)):
            blob[rng.randrange(24, len(blob))] = rng.randrange(256)
        cut = rng.randrange(24, len(blob) + 1)
        packets, stats = pc.read_pcap(io.BytesIO(bytes(blob[:cut])))
        assert stats.packets == len(packets) <= stats.records


@pytest.mark.parametrize(
    ("blob", "message"),
    [
        (b"\x0a\x0d\x0d\x0a" + bytes(40), "pcapng"),
        (b"GIF89a" + bytes(40), "not a pcap"),
        (b"\xd4\xc3\xb2\xa1", "truncated"),
        (_pcap([], linktype=147), "link type 147"),
    ],
)
def test_pcap_bad_global_header(blob, message):
    with pytest.raises(pc.PcapError, match=message):
        pc.read_pcap(io.BytesIO(blob))


def test_bucket_stats_counts_censored_flows_but_not_as_completed():
    """A flow still running at the end counts with the time it had run (a lower bound), so
    leaving the slowest flows unfinished does not make the mean smaller."""
    stats = m.bucket_stats(
        [(50_000, 0.1), (50_000, 0.3), (50_000, 5.0, True), (50_000, None)], lambda s: 0.1
    )["lt100k"]
    assert stats.started == 4 and stats.completed == 2
    assert stats.completed_frac == 0.5
    assert stats.fct_mean == pytest.approx((0.1 + 0.3 + 5.0) / 3)
    assert stats.slowdown_mean == pytest.approx((1 + 3 + 50) / 3)
