"""The wait for a run's receivers: every log says it is ready, or the error names the one
that exited or is still not ready, with its log."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from mpsched.lab import ready


def receiver(tmp_path: Path, name: str, code: str) -> tuple[subprocess.Popen, Path]:
    """A process running `code`, its output in `<name>.log` as the runner's `_popen` does."""
    log = tmp_path / f"{name}.log"
    with log.open("wb") as out:
        proc = subprocess.Popen([sys.executable, "-c", code], stdout=out,
                                stderr=subprocess.STDOUT, stdin=subprocess.PIPE)
    return proc, log


def stop(*procs: subprocess.Popen) -> None:
    for proc in procs:
        proc.kill()
        proc.wait()


def test_the_log_says_when_its_process_is_ready(tmp_path):
    log = tmp_path / "sink0.log"
    assert not ready.is_ready(log)  # not written yet
    log.write_text("starting\n")
    assert not ready.is_ready(log)
    log.write_text("starting\nlistening on port 5000\n")
    assert ready.is_ready(log)


def test_the_wait_ends_once_every_receiver_is_ready(tmp_path):
    # the sink says so once told on stdin (a start of any length), the capture at once
    sink = receiver(tmp_path, "sink0", "import sys, time; sys.stdin.readline(); "
                    "print('listening on port 5000', flush=True); time.sleep(30)")
    capture = receiver(tmp_path, "tcpdump", "import sys, time; "
                       "print('tcpdump: listening on h2-eth0', file=sys.stderr, flush=True); "
                       "time.sleep(30)")
    try:
        with pytest.raises(ready.NotReadyError, match=r"not ready after 0.3 s: sink0: ''$"):
            ready.wait_ready({"sink0": sink, "tcpdump": capture}, timeout=0.3)
        assert sink[0].stdin is not None
        sink[0].stdin.write(b"go\n")
        sink[0].stdin.close()
        ready.wait_ready({"sink0": sink, "tcpdump": capture}, timeout=30)
    finally:
        stop(sink[0], capture[0])


def test_a_receiver_that_exits_first_is_named_with_its_log(tmp_path):
    sink = receiver(tmp_path, "sink1_h2_1", "import sys; print('bind: address in use'); "
                    "sys.exit(1)")
    sink[0].wait()
    said = r"sink1_h2_1 exited \(1\) before it was ready: 'bind: address in use'"
    with pytest.raises(ready.NotReadyError, match=said):
        ready.wait_ready({"sink1_h2_1": sink}, timeout=30)
