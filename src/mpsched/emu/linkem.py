"""Driving csrc/linkem.c, the userspace link emulator, from Python.

One `Linkem` process bridges two interfaces (`ab`: frames received on the
first leave through the second; `ba`: the reverse) and emulates each
direction with its own `LinkParams`. It is controlled by text lines on its
stdin, one reply line each on its stdout (see the header of csrc/linkem.c).

    with Linkem.start("lkA1", "lkB1", seed=7, registry=reg) as em:
        em.set("ab", LinkParams(delay_ms=10, loss=0.01, rate_mbps=10))
        em.stats()["ab"]["drop_loss"]

The process exits when its stdin closes, so it never outlives its owner; the
PID is also recorded in the owner's cleanup `Registry`.
"""

from __future__ import annotations

import json
import logging
import os
import select
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import IO, Any

from mpsched.proc.cleanup import Registry
from mpsched.proc.layout import linkem_binary

from .params import LinkParams

log = logging.getLogger(__name__)

DIRECTIONS = ("ab", "ba")
START_TIMEOUT_S = 5.0
REPLY_TIMEOUT_S = 5.0
STOP_TIMEOUT_S = 3.0


class LinkemError(RuntimeError):
    """linkem failed to start, rejected a command, or stopped answering."""


def _prob(x: float) -> str:
    return repr(float(x))


def set_command(direction: str, params: LinkParams) -> str:
    """The complete `set` line (without newline) that gives `direction` these parameters."""
    if direction not in DIRECTIONS:
        raise ValueError(f"direction: one of {', '.join(DIRECTIONS)}, got {direction!r}")
    ge = params.gilbert
    fields = {
        "delay_us": str(round(params.delay_ms * 1000)),
        "jitter_us": str(round(params.jitter_ms * 1000)),
        "loss": _prob(params.loss),
        "ge": "1" if ge else "0",
        "ge_p": _prob(ge.p if ge else 0.0),
        "ge_r": _prob(ge.r if ge else 0.0),
        "ge_loss_good": _prob(ge.loss_good if ge else 0.0),
        "ge_loss_bad": _prob(ge.loss_bad if ge else 1.0),
        "rate_bps": str(round(params.rate_mbps * 1e6)) if params.rate_mbps else "0",
        "queue": str(params.queue_packets),
        "up": "1" if params.up else "0",
    }
    return " ".join(["set", direction, *(f"{k}={v}" for k, v in fields.items())])


def command_line(
    iface_a: str, iface_b: str, seed: int = 0, binary: Path | None = None,
    pdeathsig: bool = True,
) -> list[str]:
    """argv of a linkem process between the two interfaces."""
    argv = [str(binary or linkem_binary()), "--a", iface_a, "--b", iface_b, "--seed", str(seed)]
    if not pdeathsig:
        argv.append("--no-pdeathsig")
    return argv


class _LineReader:
    """Lines from a pipe with a timeout (no buffered readline behind select's back)."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.buf = b""

    def readline(self, timeout: float) -> str | None:
        """One line without its newline; None at EOF; LinkemError on timeout."""
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buf:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise LinkemError(f"linkem: no reply within {timeout:g} s")
            ready, _, _ = select.select([self.fd], [], [], remaining)
            if not ready:
                continue
            chunk = os.read(self.fd, 65536)
            if not chunk:
                return None
            self.buf += chunk
        line, _, self.buf = self.buf.partition(b"\n")
        return line.decode(errors="replace")


class Linkem:
    """One running linkem process; thread-safe, a context manager."""

    def __init__(
        self, proc: subprocess.Popen, argv: list[str], stderr: IO[bytes],
        registry: Registry | None,
    ) -> None:
        self.proc = proc
        self.argv = argv
        self.cmdline = " ".join(argv)
        self._stderr = stderr
        self._registry = registry
        self._lock = threading.Lock()
        self._closed = False
        self._broken = ""  # why the reply stream cannot be trusted any more
        self._reader = _LineReader(proc.stdout.fileno())  # type: ignore[union-attr]

    @property
    def pid(self) -> int:
        return self.proc.pid

    @classmethod
    def start(
        cls, iface_a: str, iface_b: str, seed: int = 0, registry: Registry | None = None,
        binary: Path | None = None, timeout: float = START_TIMEOUT_S,
    ) -> Linkem:
        """Start linkem between two existing interfaces and wait until it is ready.

        PR_SET_PDEATHSIG follows the thread that forks, so it is only asked for
        from the main thread; stdin EOF ends linkem with its owner in any case.
        """
        pdeathsig = threading.current_thread() is threading.main_thread()
        argv = command_line(iface_a, iface_b, seed, binary, pdeathsig)
        if not os.access(argv[0], os.X_OK):
            raise LinkemError(f"{argv[0]}: not built; run `make linkem` (needs gcc)")
        stderr = tempfile.TemporaryFile()
        proc = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr, bufsize=0,
            start_new_session=True,  # a terminal's Ctrl-C goes to the owner, which tears down
        )
        em = cls.attach(proc, stderr, registry, timeout)
        log.debug("linkem %d between %s and %s (seed %d)", proc.pid, iface_a, iface_b, seed)
        return em

    @classmethod
    def attach(
        cls, proc: subprocess.Popen, stderr: IO[bytes], registry: Registry | None = None,
        timeout: float = START_TIMEOUT_S,
    ) -> Linkem:
        """A linkem process `proc` just started with pipes on its stdin and stdout (unbuffered)
        and `stderr` on a file, here or through ssh on another server
        (src/mpsched/topo/cluster_nodes.py:
        then `proc` is the ssh client, whose end closes linkem's stdin); wait until it is
        ready. `proc.args` is what runs here: the registry records it."""
        argv = [str(a) for a in proc.args] if isinstance(proc.args, list) else [str(proc.args)]
        em = cls(proc, argv, stderr, registry)
        if registry is not None:
            registry.add_process(proc.pid, em.cmdline)
        try:
            em._wait_ready(timeout)
        except BaseException:
            em.close()
            raise
        return em

    def _stderr_text(self) -> str:
        if self._stderr.closed:
            return ""
        self._stderr.seek(0)
        return self._stderr.read().decode(errors="replace").strip()

    def _wait_ready(self, timeout: float) -> None:
        try:
            line = self._reader.readline(timeout)
        except LinkemError:
            line = "(timeout)"
        if line != "ready":
            if self.proc.poll() is None:
                self.proc.kill()
            rc = self.proc.wait()
            raise LinkemError(
                f"linkem did not start (exit status {rc}, said {line!r}): {self._stderr_text()}"
            )

    def request(self, line: str, timeout: float = REPLY_TIMEOUT_S) -> str:
        """Send one control line, return linkem's reply line."""
        if "\n" in line:
            raise ValueError("one control line at a time")
        with self._lock:
            if self._broken:
                raise LinkemError(self._broken)
            if self.proc.poll() is not None:
                raise LinkemError(
                    f"linkem {self.pid} has exited ({self.proc.returncode}): "
                    f"{self._stderr_text()}"
                )
            try:
                self.proc.stdin.write(line.encode() + b"\n")  # type: ignore[union-attr]
            except BrokenPipeError as e:
                raise LinkemError(f"linkem {self.pid} has exited: {self._stderr_text()}") from e
            try:
                reply = self._reader.readline(timeout)
            except LinkemError as e:
                # a late reply would be taken for the next request's: stop talking
                self._broken = f"linkem {self.pid} stopped answering ({e})"
                raise LinkemError(self._broken) from e
        if reply is None:
            raise LinkemError(f"linkem {self.pid} closed its output: {self._stderr_text()}")
        return reply

    def _ok(self, line: str) -> None:
        reply = self.request(line)
        if reply != "ok":
            raise LinkemError(f"linkem rejected {line!r}: {reply}")

    def set(self, direction: str, params: LinkParams) -> None:
        """Give one direction (`ab` or `ba`) new parameters (all fields at once)."""
        self._ok(set_command(direction, params))

    def get(self, direction: str) -> dict[str, Any]:
        """The parameters linkem holds for a direction, in its own units (µs, bit/s)."""
        if direction not in DIRECTIONS:
            raise ValueError(f"direction: one of {', '.join(DIRECTIONS)}, got {direction!r}")
        return self._json(f"get {direction}")

    def stats(self) -> dict[str, dict[str, int]]:
        """Counters per direction: rx, rx_bytes, tx, tx_bytes, drop_loss, drop_queue,
        drop_down, drop_oversize, tx_err, queued."""
        return self._json("stats")

    def _json(self, line: str) -> dict:
        reply = self.request(line)
        if reply.startswith("err"):
            raise LinkemError(f"linkem rejected {line!r}: {reply}")
        return json.loads(reply)

    def alive(self) -> bool:
        return self.proc.poll() is None

    def close(self) -> None:
        """Stop the process (EOF on its stdin, else SIGKILL to its PID); forget it in the
        registry. Idempotent."""
        if self._closed:
            return
        self._closed = True
        if self.proc.poll() is None:
            try:
                with self._lock:
                    self.proc.stdin.close()  # type: ignore[union-attr]  # EOF: linkem exits
            except OSError:
                pass
            try:
                self.proc.wait(STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                log.warning("linkem %d did not stop on EOF; killing it", self.pid)
                self.proc.kill()
                self.proc.wait()
        if self.proc.stdout is not None:
            self.proc.stdout.close()
        if self.proc.returncode not in (0, None):
            log.warning("linkem %d exited with %s: %s", self.pid, self.proc.returncode,
                        self._stderr_text())
        self._stderr.close()
        if self._registry is not None:
            self._registry.forget_process(self.pid)
            self._registry = None

    def __enter__(self) -> Linkem:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
