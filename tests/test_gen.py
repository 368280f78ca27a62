"""Traffic roles over loopback: wire protocol, FCT, bulk bytes, VBR mix, reports."""

from __future__ import annotations

import json
import random
import subprocess
import sys
import time

import pytest

from mpsched.proc.bmv2 import free_port
from mpsched.traffic.gen import PACKET_MIX, pareto


def gen(*args: str) -> list[str]:
    return [sys.executable, "-m", "mpsched.traffic.gen", *args]


@pytest.fixture
def sink(tmp_path):
    port = free_port()
    out = tmp_path / "sink.json"
    proc = subprocess.Popen(gen("sink", "--port", str(port), "--bind", "127.0.0.1",
                                "--udp-port", str(port), "--out", str(out)))
    time.sleep(0.8)
    yield port, proc, out
    if proc.poll() is None:
        proc.kill()
        proc.wait()


def finish(proc: subprocess.Popen, out) -> dict:
    proc.terminate()
    assert proc.wait(timeout=10) == 0
    return json.loads(out.read_text())


def test_files_give_fct_and_the_sink_counts_bytes(sink, tmp_path):
    port, proc, out = sink
    report = tmp_path / "files.json"
    rc = subprocess.run(gen("files", "--dst", "127.0.0.1", "--port", str(port), "--seconds", "10",
                            "--sizes-kb", "10,200", "--count", "4", "--concurrency", "2",
                            "--interarrival-ms", "10", "--out", str(report)), timeout=30).returncode
    assert rc == 0
    files = json.loads(report.read_text())
    assert sorted(t["size"] for t in files["transfers"]) == [10_000, 10_000, 200_000, 200_000]
    assert all(0 < t["fct_s"] < 5 for t in files["transfers"])
    assert all(t["rtt_ms"] >= 0 for t in files["transfers"])
    got = finish(proc, out)
    assert sum(c["bytes"] for c in got["connections"]) == 420_000
    assert len(got["connections"]) == 4


def test_bulk_runs_for_its_time_and_samples_rtt(sink, tmp_path):
    port, proc, out = sink
    report = tmp_path / "bulk.json"
    t0 = time.monotonic()
    rc = subprocess.run(gen("bulk", "--dst", "127.0.0.1", "--port", str(port), "--seconds", "1.5",
                            "--streams", "2", "--out", str(report)), timeout=30).returncode
    assert rc == 0 and time.monotonic() - t0 < 8
    bulk = json.loads(report.read_text())
    assert len(bulk["streams"]) == 2
    assert all(s["bytes"] > 1_000_000 and s["rtt_ms"] for s in bulk["streams"])
    got = finish(proc, out)
    assert got["total"] and got["total"][-1][1] > 2_000_000


def test_vbr_sends_tcp_and_udp(sink, tmp_path):
    port, proc, out = sink
    report = tmp_path / "vbr.json"
    rc = subprocess.run(gen("vbr", "--dst", "127.0.0.1", "--port", str(port), "--udp-port",
                            str(port), "--seconds", "2", "--rate-mbps", "2", "--on-ms", "100",
                            "--off-ms", "100", "--tcp-pct", "80", "--out", str(report)),
                        timeout=30).returncode
    assert rc == 0
    sent = json.loads(report.read_text())["sent"]
    assert sent["tcp_packets"] > sent["udp_packets"] > 0
    assert sent["on_periods"] >= 2
    got = finish(proc, out)
    assert got["udp"]["packets"] > 0


def test_unreachable_sink_is_an_error_in_the_report(tmp_path):
    report = tmp_path / "bulk.json"
    rc = subprocess.run(gen("bulk", "--dst", "127.0.0.1", "--port", str(free_port()),
                            "--seconds", "1", "--out", str(report)), timeout=30).returncode
    assert rc == 1
    assert "error" in json.loads(report.read_text())


def test_pareto_mean_and_packet_mix():
    rng = random.Random(1)
    samples = [pareto(rng, 2.5, 0.5) for _ in range(200_000)]
    assert sum(samples) / len(samples) == pytest.approx(0.5, rel=0.05)
    assert min(samples) >= 0.5 * 1.5 / 2.5 - 1e-9
    assert sum(w for _, w in PACKET_MIX) == pytest.approx(1.0, abs=0.01)


def test_source_ports_repeat_with_the_seed(tmp_path):
    """Seeded source ports: the same seed gives the same 5-tuples (and so the same hash paths)."""
    ports = []
    for attempt in range(2):
        port = free_port()
        out = tmp_path / f"sink{attempt}.json"
        sink = subprocess.Popen(gen("sink", "--port", str(port), "--bind", "127.0.0.1",
                                    "--out", str(out)))
        try:
            time.sleep(0.8)
            subprocess.run(gen("bulk", "--dst", "127.0.0.1", "--port", str(port), "--seconds",
                               "0.5", "--streams", "3", "--seed", "42",
                               "--out", str(tmp_path / "b.json")), timeout=30, check=True)
            got = finish(sink, out)
        finally:
            if sink.poll() is None:
                sink.kill()
        ports.append(sorted(int(c["peer"].split(":")[1]) for c in got["connections"]))
    assert ports[0] == ports[1] and len(set(ports[0])) == 3
    assert all(20_000 <= p < 60_000 for p in ports[0])


def test_cbr_keeps_its_rate(sink, tmp_path):
    port, proc, out = sink
    report = tmp_path / "cbr.json"
    rc = subprocess.run(gen("cbr", "--dst", "127.0.0.1", "--port", str(port), "--udp-port",
                            str(port), "--seconds", "2", "--rate-mbps", "4", "--size", "972",
                            "--out", str(report)), timeout=30).returncode
    assert rc == 0
    sent = json.loads(report.read_text())["sent"]
    # 4 Mbit/s of 1000-byte IP packets for 2 s = 1000 datagrams
    assert 900 <= sent["udp_packets"] <= 1010
    got = finish(proc, out)
    assert got["udp"]["packets"] == sent["udp_packets"]
