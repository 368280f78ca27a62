"""Traffic roles over loopback: wire protocol, FCT, bulk bytes, VBR mix, reports."""

from __future__ import annotations

import itertools
import json
import math
import random
import subprocess
import sys

import pytest

from mpsched.proc.bmv2 import free_port
from mpsched.traffic import flowsizes
from mpsched.traffic.gen.udp import PACKET_MIX, pareto
from tests.sockets import tcp_listeners, udp_bound, wait_listening
from tests.waiting import wait_until


def gen(*args: str) -> list[str]:
    return [sys.executable, "-m", "mpsched.traffic.gen", *args]


@pytest.fixture
def sink(tmp_path):
    port = free_port()
    out = tmp_path / "sink.json"
    proc = subprocess.Popen(gen("sink", "--port", str(port), "--bind", "127.0.0.1",
                                "--udp-port", str(port), "--out", str(out)))
    wait_listening(proc, port, udp=True)
    yield port, proc, out
    if proc.poll() is None:
        proc.kill()
        proc.wait()


def finish(proc: subprocess.Popen, out) -> dict:
    proc.terminate()
    assert proc.wait(timeout=10) == 0
    return json.loads(out.read_text())


def test_the_sink_says_it_listens_once_its_ports_are_open(tmp_path):
    port = free_port()
    proc = subprocess.Popen(gen("sink", "--port", str(port), "--bind", "127.0.0.1",
                                "--udp-port", str(port), "--out", str(tmp_path / "s.json")),
                            stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline() == f"listening on port {port}\n"
        # said only once both are open: the runner's senders start then (src/mpsched/lab/ready.py)
        assert tcp_listeners(port, proc.pid) == {"127.0.0.1"}
        assert [r.address for r in udp_bound(port, proc.pid)] == ["127.0.0.1"]
    finally:
        proc.terminate()
        proc.wait(timeout=10)


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
    assert "peers" not in got  # only asked for (`--peers`)


def test_bulk_runs_for_its_time_and_samples_rtt(sink, tmp_path):
    port, proc, out = sink
    report = tmp_path / "bulk.json"
    rc = subprocess.run(gen("bulk", "--dst", "127.0.0.1", "--port", str(port), "--seconds", "1.5",
                            "--streams", "2", "--out", str(report)), timeout=30).returncode
    assert rc == 0  # and it ended by itself (the timeout would have raised)
    bulk = json.loads(report.read_text())
    assert len(bulk["streams"]) == 2
    # its time by its own clock, not cut short: 1.5 s from its start less the connect time
    assert all(s["end"] - s["start"] >= 1.0 for s in bulk["streams"]), bulk["streams"]
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
            wait_listening(sink, port)
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
    # every datagram sent was either read by the sink or dropped by the kernel for a full
    # receive buffer (a busy machine): wait until the sink has read what is queued
    (sock,) = wait_until(lambda: [r for r in udp_bound(port) if r.rx_queue == 0], timeout=30,
                         what="the sink to read its queued datagrams")
    got = finish(proc, out)
    assert got["udp"]["packets"] + sock.drops == sent["udp_packets"], (got["udp"], sock)
    assert got["udp"]["packets"] >= sent["udp_packets"] // 2, (got["udp"], sock)


# -- open-loop Poisson workload: size CDFs, arrivals, the role --------------------------------


def test_cdf_quantiles_follow_the_published_points():
    ws = flowsizes.distribution("websearch", max_bytes=math.inf)
    assert ws.quantile(0.0) == ws.quantile(0.15) == 6 * 1460
    assert ws.quantile(0.65) == 400 * 1460  # halfway between 133 (0.6) and 667 (0.7) packets
    assert ws.quantile(1.0) == 20000 * 1460
    capped = flowsizes.distribution("websearch")
    assert capped.quantile(1.0) == 3_000_000 and capped.quantile(0.65) == 400 * 1460
    dm = flowsizes.distribution("datamining", scale=2)
    assert dm.quantile(0.3) == 2 * 1460  # half the data-mining flows are one packet, scaled


def test_cdf_mean_is_exact_and_cap_keeps_bucket_shares():
    d = flowsizes.SizeDist(((1000, 0.0), (3000, 1.0)), max_bytes=math.inf)
    assert d.mean() == pytest.approx(2000)
    # censored at 2500: 3/4 uniform on 1000..2500 (mean 1750), 1/4 at 2500
    assert flowsizes.SizeDist(d.points, max_bytes=2500).mean() == pytest.approx(1937.5)
    full = flowsizes.distribution("websearch", max_bytes=math.inf)
    capped = flowsizes.distribution("websearch")
    assert full.mean() == pytest.approx(1.67e6, rel=0.01)
    assert capped.mean() == pytest.approx(0.811e6, rel=0.01)
    for low, high in ((0, 100_000), (100_000, 1_000_001), (1_000_001, math.inf)):
        assert capped.share(low, high) == pytest.approx(full.share(low, high))
    assert full.share(0, 100_000) == pytest.approx(0.544, abs=0.002)


def test_sampling_reproduces_the_cdf():
    d = flowsizes.distribution("datamining")
    rng = random.Random(3)
    xs = [d.sample(rng) for _ in range(100_000)]
    assert sum(xs) / len(xs) == pytest.approx(d.mean(), rel=0.03)
    for low, high in ((0, 100_000), (100_000, 1_000_001), (1_000_001, math.inf)):
        got = sum(low <= x < high for x in xs) / len(xs)
        assert got == pytest.approx(d.share(low, high), abs=0.005)
    assert max(xs) == 3_000_000 and min(xs) == 1460


@pytest.mark.parametrize(
    "points",
    [((100, 0.0),), ((100, 0.1), (200, 1.0)), ((100, 0.0), (50, 1.0)), ((0, 0.0), (5, 1.0))],
)
def test_bad_cdfs_are_refused(points):
    with pytest.raises(ValueError):
        flowsizes.SizeDist(points)


def test_poisson_arrivals_offer_the_load_and_repeat_with_the_seed():
    d = flowsizes.distribution("websearch")
    plan = flowsizes.poisson_plan(random.Random(5), d, 16.8, 2000)
    assert plan == flowsizes.poisson_plan(random.Random(5), d, 16.8, 2000)
    lam = flowsizes.arrival_rate(d, 16.8)
    assert lam == pytest.approx(16.8e6 / 8 / d.mean())
    assert len(plan) == pytest.approx(lam * 2000, rel=0.05)
    assert flowsizes.offered_mbps(plan, 2000) == pytest.approx(16.8, rel=0.08)
    gaps = [b[0] - a[0] for a, b in itertools.pairwise(plan)]
    mean = sum(gaps) / len(gaps)
    std = math.sqrt(sum((g - mean) ** 2 for g in gaps) / len(gaps))
    assert mean == pytest.approx(1 / lam, rel=0.05) and std / mean == pytest.approx(1, abs=0.05)
    assert all(t < 2000 for t, _ in plan)
    with pytest.raises(ValueError):
        flowsizes.arrival_rate(d, 0)


def test_poisson_role_starts_flows_at_their_arrival(sink, tmp_path):
    port, proc, out = sink
    report = tmp_path / "poisson.json"
    rc = subprocess.run(gen("poisson", "--dst", "127.0.0.1", "--port", str(port), "--seconds", "6",
                            "--sizes", "websearch", "--rate-mbps", "8", "--max-kb", "300",
                            "--arrivals-s", "3", "--seed", "4", "--out", str(report)),
                        timeout=30).returncode
    assert rc == 0
    got = json.loads(report.read_text())
    flows = got["transfers"]
    d = flowsizes.distribution("websearch", max_bytes=300_000)
    plan = flowsizes.poisson_plan(random.Random(4), d, 8, 3)
    assert [f["size"] for f in flows] == [s for _, s in plan]  # the seeded plan, in order
    arrivals = [f["arrival"] - got["started"] for f in flows]
    assert arrivals == pytest.approx([t for t, _ in plan], abs=0.3)
    assert all("fct_s" in f and f["fct_s"] >= f["wait_s"] >= 0 for f in flows)
    sink_report = finish(proc, out)
    assert sum(c["bytes"] for c in sink_report["connections"]) == sum(s for _, s in plan)


def test_max_concurrent_makes_later_flows_wait_inside_their_fct(sink, tmp_path):
    port, proc, out = sink
    report = tmp_path / "files.json"
    # eight 20 MB flows arriving within a millisecond, one at a time: they queue for the slot
    rc = subprocess.run(gen("files", "--dst", "127.0.0.1", "--port", str(port), "--seconds", "20",
                            "--sizes-kb", "20000", "--count", "8", "--concurrency", "1",
                            "--interarrival-ms", "0.01", "--out", str(report)),
                        timeout=40).returncode
    assert rc == 0
    flows = json.loads(report.read_text())["transfers"]
    assert len(flows) == 8 and all("fct_s" in f for f in flows)
    assert all(f["fct_s"] >= f["wait_s"] >= 0 for f in flows)
    assert sorted(f["wait_s"] for f in flows)[-1] > 0
    # served one after another, all arrived at about 0: the last to finish waited for the others,
    # and its FCT (from its arrival) covers every flow's service time
    service = sum(f["fct_s"] - f["wait_s"] for f in flows)
    assert max(f["fct_s"] for f in flows) >= 0.9 * service - 0.01
    finish(proc, out)


def test_plan_role_sends_each_flow_to_its_destination(tmp_path):
    """One process, flows to two sinks (127.0.0.1 and 127.0.0.2, one port): each flow goes to
    its own destination at its time; each sink counts its bytes per peer address."""
    port = free_port()
    sinks = []
    for k in (1, 2):
        out = tmp_path / f"sink{k}.json"
        proc = subprocess.Popen(gen("sink", "--port", str(port), "--bind", f"127.0.0.{k}",
                                    "--peers", "--out", str(out)))
        sinks.append((proc, out))
    try:
        for proc, _ in sinks:
            wait_listening(proc, port)
        schedule = [[0.0, "127.0.0.1", 10_000], [0.2, "127.0.0.2", 30_000],
                    [0.4, "127.0.0.2", 50_000], [0.5, "127.0.0.1", 70_000]]
        flows = tmp_path / "flows.json"
        flows.write_text(json.dumps({"flows": schedule}))
        report = tmp_path / "plan.json"
        rc = subprocess.run(gen("plan", "--dst", "127.0.0.1", "--port", str(port), "--seconds",
                                "5", "--flows", str(flows), "--seed", "3", "--out", str(report)),
                            timeout=30).returncode
        assert rc == 0
        got = json.loads(report.read_text())
        assert got["planned"] == 4
        assert [(t["dst"], t["size"]) for t in got["transfers"]] == [(d, s) for _, d, s in schedule]
        assert all("fct_s" in t for t in got["transfers"])
        arrivals = [t["arrival"] - got["started"] for t in got["transfers"]]
        assert arrivals == pytest.approx([a for a, _, _ in schedule], abs=0.3)
        received = [finish(proc, out) for proc, out in sinks]
    finally:
        for proc, _ in sinks:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    assert [sum(c["bytes"] for c in r["connections"]) for r in received] == [80_000, 80_000]
    for r, want in zip(received, (80_000, 80_000), strict=True):
        assert sum(series[-1][1] for series in r["peers"].values()) == want
