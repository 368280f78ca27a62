"""Metric definitions against hand-computed values, real sockets, ss output and captures."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import threading

import pytest

from mpsched.lab import pcap as pc
from mpsched.proc.prereqs import is_root
from tests.waiting import wait_until

# --------------------------------------------------------------------------------------------
# rates


@pytest.mark.integration
def test_tcpdump_loopback_capture(tmp_path):
    """A real `tcpdump -w` capture of a loopback transfer: the data flow's bytes add up and its
    IP IDs show no reordering. The transfer runs on one CPU: with two, a segment sent from the
    softirq of an incoming ACK on the other CPU can reach the capture ahead of one the sending
    thread numbered earlier, which is reordering at the capture point, not on the wire."""
    if not is_root() or shutil.which("tcpdump") is None:
        pytest.skip("missing: root and tcpdump (capturing on lo)")
    affinity = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {min(affinity)})
    try:
        _loopback_capture(tmp_path)
    finally:
        os.sched_setaffinity(0, affinity)


def _loopback_capture(tmp_path) -> None:
    srv = socket.create_server(("127.0.0.1", 0))
    port = srv.getsockname()[1]
    path = tmp_path / "lo.pcap"
    # --immediate-mode: without it packets wait in the kernel ring for a 1 s block timeout and
    # are lost when tcpdump is stopped earlier.
    cmd = ["tcpdump", "-i", "lo", "-n", "--immediate-mode", "-U", "-s", "128", "-w", str(path)]
    dump = subprocess.Popen(
        [*cmd, f"tcp port {port}"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    try:
        assert dump.stderr is not None
        line = dump.stderr.readline()  # "listening on lo, ..." once the capture runs
        assert "listening" in line, line
        size = 3_000_000
        cli = socket.create_connection(("127.0.0.1", port))
        acc, _ = srv.accept()
        got = 0

        def read() -> None:
            nonlocal got
            while got < size:
                got += len(acc.recv(1 << 20))

        reader = threading.Thread(target=read)
        reader.start()
        cli.sendall(b"z" * size)
        reader.join(60)
        assert not reader.is_alive(), f"{got} of {size} bytes read"
        client_port = cli.getsockname()[1]
        cli.close()
        acc.close()
        flow = pc.Flow("127.0.0.1", client_port, "127.0.0.1", port, 6)

        def captured() -> int:  # -U: tcpdump writes each packet out as it comes
            packets, _ = pc.read_pcap(path)
            return sum(p.payload_len for p in packets
                       if pc.Flow(p.src, p.sport, p.dst, p.dport, 6) == flow)

        wait_until(lambda: captured() >= size, timeout=30, what=f"{size} bytes in the capture")
    finally:
        dump.terminate()
        dump.wait(10)
        srv.close()
    packets, stats = pc.read_pcap(path)
    assert stats.malformed == 0 and stats.truncated_file == 0
    assert sum(p.payload_len for p in packets if pc.Flow(p.src, p.sport, p.dst, p.dport, 6)
               == flow) == size  # fmt: skip
    reo = pc.pcap_reordering(packets)[flow]
    assert reo.reordered == 0 and reo.duplicates == 0 and reo.packets >= 1
