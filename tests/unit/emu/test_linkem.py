"""linkem, the userspace link emulator (csrc/linkem.c), and its Python wrapper.

Pure parts first (the control line, the probe analysis); then the emulator on
real veths between two network namespaces (mpsched.testing.linkbed): each
impairment is measured end to end with ping or UDP probes whose one-way delay
comes from payload and kernel receive timestamps. Tolerances are loose enough
for a busy 2-core machine and tight enough to fail on a broken emulator.
"""

from __future__ import annotations

import os
from array import array
from pathlib import Path

import pytest

from mpsched.emu.linkem import Linkem, LinkemError, command_line, set_command
from mpsched.emu.params import GilbertElliott, LinkParams
from mpsched.proc.cleanup import Registry
from mpsched.testing import udpprobe as up
from mpsched.testing.udpprobe import Records
from tests.conftest import require

# ------------------------------------------------------------------ pure: control line


def test_set_command_defaults():
    assert set_command("ab", LinkParams()) == (
        "set ab delay_us=0 jitter_us=0 loss=0.0 ge=0 ge_p=0.0 ge_r=0.0 ge_loss_good=0.0 "
        "ge_loss_bad=1.0 rate_bps=0 queue=100 up=1"
    )


def test_set_command_converts_units():
    line = set_command("ba", LinkParams(delay_ms=12.5, jitter_ms=0.25, loss=0.015,
                                        rate_mbps=0.1, queue_packets=7, up=False))
    kv = dict(item.split("=") for item in line.split()[2:])
    assert line.split()[:2] == ["set", "ba"]
    assert kv["delay_us"] == "12500" and kv["jitter_us"] == "250"
    assert kv["rate_bps"] == "100000" and kv["queue"] == "7" and kv["up"] == "0"
    assert float(kv["loss"]) == 0.015 and kv["ge"] == "0"


def test_set_command_gilbert_elliott():
    ge = GilbertElliott(p=0.01, r=0.3, loss_good=0.001, loss_bad=0.8)
    kv = dict(item.split("=") for item in set_command("ab", LinkParams(gilbert=ge)).split()[2:])
    assert kv["ge"] == "1"
    assert [float(kv[k]) for k in ("ge_p", "ge_r", "ge_loss_good", "ge_loss_bad")] == [
        0.01, 0.3, 0.001, 0.8]


def test_set_command_rejects_bad_direction():
    with pytest.raises(ValueError, match="direction"):
        set_command("ac", LinkParams())


def test_command_line():
    argv = command_line("a0", "b0", seed=3, binary=Path("/x/linkem"), pdeathsig=False)
    assert argv == ["/x/linkem", "--a", "a0", "--b", "b0", "--seed", "3", "--no-pdeathsig"]


# ------------------------------------------------------------------ pure: probe analysis


def _records(seq, tx_ms=None, rx_ms=None, size=100):
    n = len(seq)
    tx = tx_ms or [0.0] * n
    rx = rx_ms or [0.0] * n
    return Records(array("I", seq), array("q", [int(t * 1e6) for t in tx]),
                   array("q", [int(t * 1e6) for t in rx]), array("I", [size] * n))


def test_loss_runs_and_fraction():
    rec = _records([0, 3, 4, 8])  # of 0..9: lost 1-2, 5-7, 9
    assert up.loss_runs(10, rec) == [2, 3, 1]
    assert up.loss_fraction(10, rec) == pytest.approx(0.6)
    assert up.loss_runs(3, _records([0, 1, 2])) == []


def test_reordered_and_delays():
    rec = _records([0, 2, 1, 3], tx_ms=[0, 1, 2, 3], rx_ms=[5, 7, 8, 8.5])
    assert up.reordered(rec) == 1
    assert up.one_way_delays_ms(rec) == pytest.approx([5, 6, 6, 5.5])


def test_frame_rate_counts_ethernet_bytes(tmp_path):
    # 11 datagrams of 958 payload bytes (1000-byte frames), one per ms: 10 frames in 10 ms
    rec = _records(list(range(11)), rx_ms=[float(i) for i in range(11)], size=958)
    assert up.frame_rate_bps(rec) == pytest.approx(8e6)
    assert up.pps_for_mbps(8, 958) == pytest.approx(1000)
    rec.write(tmp_path / "r.bin")
    back = up.Records.read(tmp_path / "r.bin")
    assert back.seq == rec.seq and back.rx_ns == rec.rx_ns and back.size == rec.size


def test_start_without_binary_says_how_to_build(tmp_path):
    with pytest.raises(LinkemError, match="make linkem"):
        Linkem.start("a", "b", binary=tmp_path / "linkem")


def test_start_error_names_interface_and_is_unregistered(tmp_path):
    require("linkem")
    registry = Registry(owner=os.getpid(), state_dir=tmp_path)
    with pytest.raises(LinkemError, match="nosuch0lk") as err:
        Linkem.start("nosuch0lk", "nosuch1lk", registry=registry)
    assert "exit status 2" in str(err.value)
    assert registry.processes == {}


# ------------------------------------------------------------------ integration
