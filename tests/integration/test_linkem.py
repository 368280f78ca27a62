"""linkem, the userspace link emulator (csrc/linkem.c), and its Python wrapper.

Pure parts first (the control line, the probe analysis); then the emulator on
real veths between two network namespaces (mpsched.testing.linkbed): each
impairment is measured end to end with ping or UDP probes whose one-way delay
comes from payload and kernel receive timestamps. The assertions hold on a
saturated machine and fail on a broken emulator: a delay is never shorter than
the one set (scheduling only adds), and the upper bounds are wide bands that an
ignored, doubled or misplaced setting falls outside. The accuracy itself (error
of the median, spread) is `make bench-links`'s (src/mpsched/bench/links.py).
"""

from __future__ import annotations

import os
import signal
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from mpsched.emu.linkem import Linkem
from mpsched.emu.params import GilbertElliott, LinkParams
from mpsched.proc.layout import linkem_binary
from mpsched.stats import iqr, percentile
from mpsched.testing import udpprobe as up
from mpsched.testing.linkbed import LinkBed
from tests.conftest import require
from tests.waiting import wait_until

# ------------------------------------------------------------------ pure: control line


@pytest.fixture(scope="module")
def bed():
    require("root", "ethtool", "linkem")
    with LinkBed(seed=42) as b:
        yield b


@pytest.fixture
def link(bed):
    """The bed with both directions reset to an ideal link and nothing queued."""
    if not bed.em.alive():
        bed.restart()
    bed.set_both(LinkParams())
    bed.wait_idle()
    return bed


def _accounted(c):
    return c["tx"] + c["drop_loss"] + c["drop_queue"] + c["drop_down"] + c["drop_oversize"] + \
        c["tx_err"] + c["queued"]


@pytest.mark.integration
def test_delay_doubles_in_the_round_trip(link):
    base = link.ping(count=5)
    assert len(base) == 5 and statistics.median(base) < 10.0, base
    link.set_both(LinkParams(delay_ms=15))
    rtts = link.ping(count=10, interval=0.05)
    assert len(rtts) == 10, rtts
    # 15 ms each way: never under 30; one direction only (15) or 15 ms counted twice
    # per direction (60) fall outside
    assert min(rtts) >= 30.0 and statistics.median(rtts) < 45.0, rtts


@pytest.mark.integration
def test_jitter_spreads_delay_without_reordering(link):
    link.em.set("ab", LinkParams(delay_ms=20))
    steady = up.one_way_delays_ms(link.probe(pps=500, count=300, size=200).records)
    link.em.set("ab", LinkParams(delay_ms=20, jitter_ms=4))
    res = link.probe(pps=500, count=300, size=200)
    jittery = up.one_way_delays_ms(res.records)
    assert len(jittery) == 300
    assert min(steady) >= 20.0 and statistics.median(steady) < 30.0, statistics.median(steady)
    # The steady spread is the host's scheduling noise, measured under the same load: the
    # jitter (sigma 4 ms, an IQR of about 5 ms before the FIFO clamp) adds a clear margin
    # to it; an ignored jitter adds none.
    assert iqr(jittery) > iqr(steady) + 1.5, (iqr(steady), iqr(jittery))
    assert 15.0 <= statistics.median(jittery) < 35.0, statistics.median(jittery)
    assert up.reordered(res.records) == 0


@pytest.mark.integration
def test_bernoulli_loss(link):
    link.em.set("ab", LinkParams(loss=0.2))
    before = link.em.stats()["ab"]
    res = link.probe(pps=10_000, count=5000, size=64)
    after = link.em.stats()["ab"]
    lost = 5000 - len(res.records)
    assert 0.17 <= up.loss_fraction(5000, res.records) <= 0.23, lost
    assert abs((after["drop_loss"] - before["drop_loss"]) - lost) <= 25
    runs = up.loss_runs(5000, res.records)
    assert sum(runs) / len(runs) < 1.5  # independent losses: mean run 1/(1-0.2) = 1.25
    assert link.em.stats()["ba"]["drop_loss"] == 0


@pytest.mark.integration
def test_gilbert_elliott_losses_come_in_bursts(link):
    ge = GilbertElliott(p=0.05, r=0.25, loss_good=0.0, loss_bad=1.0)  # mean 1/6, runs of 4
    link.em.set("ab", LinkParams(gilbert=ge))
    res = link.probe(pps=10_000, count=10_000, size=64)
    assert 0.12 <= up.loss_fraction(10_000, res.records) <= 0.22
    runs = up.loss_runs(10_000, res.records)
    assert sum(runs) / len(runs) >= 2.5, sum(runs) / len(runs)


@pytest.mark.integration
def test_same_seed_same_losses(link):
    def lost_with_seed(seed):
        link.restart(seed)
        link.em.set("ab", LinkParams(loss=0.3))
        res = link.probe(pps=5000, count=500, size=64)
        return set(range(500)) - set(res.records.seq)

    first, again, other = lost_with_seed(5), lost_with_seed(5), lost_with_seed(6)
    assert first == again
    assert first != other


@pytest.mark.integration
def test_rate_and_bounded_queue(link):
    link.em.set("ab", LinkParams(rate_mbps=8, queue_packets=30))
    before = link.em.stats()["ab"]
    pps = up.pps_for_mbps(12, 1000)  # 50 % above the rate
    res = link.probe(pps=pps, count=int(pps * 2), size=1000, drain_s=0.3)
    after = link.em.stats()["ab"]
    rate = up.frame_rate_bps(res.records, skip_s=0.2)
    assert rate == pytest.approx(8e6, rel=0.05)
    assert after["drop_queue"] > before["drop_queue"]
    owd = up.one_way_delays_ms(res.records)
    frame_ms = up.frame_bits(1000) / 8e3
    assert percentile(owd, 90) > 15 * frame_ms  # the queue did fill up ...
    assert max(owd) < 32 * frame_ms + 8.0  # ... and never held more than 30 (+1 in service)
    assert after["rx"] == _accounted(after)


@pytest.mark.integration
def test_tiny_queue_tail_drops(link):
    link.em.set("ab", LinkParams(rate_mbps=1, queue_packets=2))
    before = link.em.stats()["ab"]
    res = link.probe(pps=2000, count=50, size=1000, burst=50, drain_s=0.2)
    after = link.em.stats()["ab"]
    assert after["drop_queue"] - before["drop_queue"] >= 35
    assert len(res.records) <= 15
    assert after["rx"] == _accounted(after)


HOLD_MS = 1000  # linkem's longest delay: no frame of a burst is due while the test polls


def _received(link, before: dict, frames: int) -> dict | None:
    """linkem's counters of direction ab once it has received `frames` more than `before`."""
    now = link.em.stats()["ab"]
    return now if now["rx"] - before["rx"] >= frames else None


@pytest.mark.integration
def test_frames_read_lazily_while_queued_keep_counts_and_times(link):
    """While a direction holds frames, linkem reads its port only at the next delivery;
    a control line still sees every frame that arrived before it, and each frame is
    timed from its own (kernel) arrival, not from when it was read."""
    link.em.set("ab", LinkParams(delay_ms=HOLD_MS))
    before = link.em.stats()["ab"]
    # one burst, sent within milliseconds whatever the machine's load
    sent = link.probe(pps=20_000, count=200, size=200, burst=200, drain_s=0.0).sent["sent"]
    assert sent == 200
    # on a busy machine the kernel may pass the last frames on to linkem's socket a while
    # after the sender has ended: poll the control line (which reads them) until it has
    # seen all 200, before the first of them is due
    now = wait_until(lambda: _received(link, before, 200), timeout=HOLD_MS / 1000,
                     interval=0.01, what="linkem counting the 200 frames sent")
    # counted and held, none delivered yet: the control line read them, no delivery did
    got = (now["rx"] - before["rx"], now["queued"], now["tx"] - before["tx"])
    assert got == (200, 200, 0), now
    link.wait_idle(timeout=HOLD_MS / 1000 + 10)
    link.em.set("ab", LinkParams(delay_ms=200))
    # the last frame is due 200 ms after it arrives: the drain leaves a busy machine more
    res = link.probe(pps=2000, count=400, size=200, drain_s=1.5)
    owd = up.one_way_delays_ms(res.records)
    assert len(owd) == 400
    assert min(owd) >= 200.0, min(owd)
    # timed from when they were read (the first delivery, 200 ms in), the 400 frames sent
    # over 200 ms would wait 200..400 ms (median 300): far outside these bounds
    assert percentile(owd, 50) < 230.0 and percentile(owd, 95) < 270.0, owd


@pytest.mark.integration
def test_down_drops_everything_and_flushes_then_up(link):
    link.em.set("ab", LinkParams(delay_ms=500))
    link.probe(pps=1000, count=40, size=100, drain_s=0.0)
    held = link.em.stats()["ab"]
    assert held["queued"] >= 30, held
    link.em.set("ab", LinkParams(delay_ms=500, up=False))
    flushed = link.em.stats()["ab"]
    assert flushed["queued"] == 0
    assert flushed["drop_down"] - held["drop_down"] == held["queued"]
    assert link.ping(count=3, interval=0.1, wait_s=0.5) == []
    time.sleep(0.3)
    after = link.em.stats()["ab"]
    assert after["tx"] == flushed["tx"]  # nothing flushed came out later
    assert after["drop_down"] >= flushed["drop_down"] + 3
    link.em.set("ab", LinkParams(up=True))
    assert len(link.ping(count=3, interval=0.1)) == 3


@pytest.mark.integration
def test_parameters_change_while_traffic_flows(link):
    """The delay goes from 5 to 40 ms once 400 datagrams have passed; other threads
    read the counters meanwhile (one request/reply at a time through the lock). Frames
    are split by what linkem had received when the change was acknowledged, not by a
    guess of when that was."""
    link.em.set("ab", LinkParams(delay_ms=5))
    rx0 = link.em.stats()["ab"]["rx"]
    errors: list[BaseException] = []
    changed_at: list[int] = []  # frames received when the change was acknowledged

    def change() -> None:
        try:
            wait_until(lambda: link.em.stats()["ab"]["rx"] - rx0 >= 400, timeout=60,
                       interval=0.002, what="400 frames through linkem")
            link.em.set("ab", LinkParams(delay_ms=40))
            changed_at.append(link.em.stats()["ab"]["rx"] - rx0)
        except BaseException as e:  # reported by the main thread
            errors.append(e)

    def read() -> None:
        try:
            for _ in range(100):
                assert set(link.em.stats()) == {"ab", "ba"}
                time.sleep(0.005)
        except BaseException as e:  # reported by the main thread
            errors.append(e)

    threads = [threading.Thread(target=change)] + [threading.Thread(target=read) for _ in range(3)]
    for t in threads:
        t.start()
    res = link.probe(pps=1000, count=1500, size=200, drain_s=0.2)
    for t in threads:
        t.join()
    assert not errors
    owd = up.one_way_delays_ms(res.records)
    # seq < 300 arrived before the 400th frame; seq >= changed_at after the change (rx also
    # counts any other frame, so the split is conservative)
    early = [d for d, s in zip(owd, res.records.seq, strict=True) if s < 300]
    late = [d for d, s in zip(owd, res.records.seq, strict=True) if s >= changed_at[0]]
    assert len(late) >= 100, f"the change came only after {changed_at[0]} of 1500 frames"
    assert min(early) >= 5.0 and statistics.median(early) < 20.0, statistics.median(early)
    assert min(late) >= 40.0 and statistics.median(late) < 60.0, statistics.median(late)
    assert up.reordered(res.records) == 0


@pytest.mark.integration
def test_invalid_lines_change_nothing(link):
    em = link.em
    em.set("ab", LinkParams(delay_ms=7, loss=0.1, rate_mbps=3, queue_packets=20))
    before = em.get("ab")
    bad = {
        "set ab loss=0.5 delay_us=abc": "delay_us",
        "set ab delay_us=1000 loss=1.5": "loss",
        "set ab queue=0": "queue",
        "set ab foo=1": "foo",
        "set ab up=2": "up",
        "set ab rate_bps=12": "rate_bps",
        "set ab loss=nan": "loss",
        "set ab jitter_us=-1": "jitter_us",
        "set ab loss": "loss",
        "set xx loss=0": "direction",
        "set": "direction",
        "frobnicate": "command",
        "stats now": "command",
        "x" * 5000: "line",
    }
    for line, key in bad.items():
        reply = em.request(line)
        assert reply.startswith(f"err {key}"), (line[:40], reply)
        assert em.get("ab") == before, line[:40]
    assert em.request("set ab loss=0.25") == "ok"
    assert em.get("ab") == {**before, "loss": 0.25}
    assert em.get("ba")["delay_us"] == 0
    assert em.alive()


def _gone(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return True
    return state in ("Z", "X")


@pytest.mark.integration
def test_exits_on_stdin_eof_and_on_sigterm(link):
    argv = [str(linkem_binary()), "--a", link.names.a, "--b", link.names.b]
    for stop in ("eof", "term"):
        proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        try:
            assert proc.stdout.readline() == b"ready\n"
            if stop == "eof":
                proc.stdin.close()
            else:
                proc.send_signal(signal.SIGTERM)
            assert proc.wait(timeout=3) == 0
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()


@pytest.mark.integration
def test_dies_with_its_parent(link):
    code = (
        "import sys, time\n"
        "from mpsched.emu.linkem import Linkem\n"
        "em = Linkem.start(sys.argv[1], sys.argv[2])\n"
        "print(em.pid, flush=True)\n"
        "time.sleep(60)\n"
    )
    parent = subprocess.Popen([sys.executable, "-c", code, link.names.a, link.names.b],
                              stdout=subprocess.PIPE, text=True)
    pid = 0
    try:
        pid = int(parent.stdout.readline())
        assert not _gone(pid)
        parent.kill()
        parent.wait()
        wait_until(lambda: _gone(pid), timeout=30, what=f"linkem {pid} to die with its parent")
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait()
        if pid and not _gone(pid):
            os.kill(pid, signal.SIGKILL)


_RAW_SENDER = """
import os, socket, sys
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind((sys.argv[1], 0))
frames = [b"\\xff" * 6 + os.urandom(8)]                    # header only, random ethertype
frames += [os.urandom(n) for n in (14, 60, 61, 333, 1514)]  # random bytes, any addresses
frames += [b"\\x01\\x00\\x5e" + os.urandom(1000)]            # multicast destination
for f in frames:
    s.send(f)
print(len(frames))
"""


@pytest.mark.integration
def test_odd_and_oversized_frames(link):
    """Random bytes are copied as they are; frames over 9216 bytes are dropped and counted."""
    n = link.names
    ends = [(n.ns1, n.x), (None, n.a), (None, n.b), (n.ns2, n.y)]

    def mtu(value: int) -> None:
        for ns, iface in ends:
            argv = ["ip", "link", "set", iface, "mtu", str(value)]
            subprocess.run(["ip", "netns", "exec", ns, *argv] if ns else argv, check=True)

    before = link.em.stats()["ab"]
    out = subprocess.run(["ip", "netns", "exec", n.ns1, sys.executable, "-c", _RAW_SENDER, n.x],
                         capture_output=True, text=True, check=True).stdout

    def forwarded() -> dict | None:
        now = link.em.stats()["ab"]
        return now if now["tx"] - before["tx"] >= int(out) else None

    after = wait_until(forwarded, timeout=30, what=f"{out.strip()} raw frames through linkem")
    assert after["tx"] - before["tx"] == int(out) == after["rx"] - before["rx"]
    assert link.em.alive()
    mtu(9500)
    try:
        before = after
        res = link.probe(pps=100, count=2, size=9300)  # 9342-byte frames: too big
        small = link.probe(pps=100, count=2, size=9000)  # 9042-byte frames: fine
        after = link.em.stats()["ab"]
    finally:
        mtu(1500)
    assert len(res.records) == 0
    assert after["drop_oversize"] - before["drop_oversize"] == 2
    assert len(small.records) == 2 and max(small.records.size) == 9000


@pytest.mark.integration
def test_started_from_a_thread_outlives_the_thread(link):
    """PR_SET_PDEATHSIG fires when the forking *thread* exits: the wrapper does not ask
    for it outside the main thread (stdin EOF still ties linkem to its owner)."""
    started: list[Linkem] = []
    t = threading.Thread(target=lambda: started.append(Linkem.start(link.names.a,
                                                                     link.names.b)))
    t.start()
    t.join()
    em = started[0]
    try:
        assert "--no-pdeathsig" in em.argv
        time.sleep(0.3)
        assert em.alive() and em.request("stats").startswith("{")
    finally:
        em.close()
    assert em.proc.returncode == 0


@pytest.mark.integration
def test_registry_holds_the_command_line_proc_shows(link):
    """A sweep kills a recorded PID only if /proc shows exactly the recorded command."""
    pid = link.em.pid
    shown = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode().strip()
    assert link.registry.processes[pid] == shown
