"""The controller as a process of its own in the integration tests.

`start_controller` runs `python -m mpsched.controller` (the argv of
src/mpsched/controller/__main__.py
`command`) on a network description, with its own REST port, write token and log, and waits
until GET /switches shows what the test needs. The process is ended (SIGTERM, then SIGKILL
after 10 s) when that wait fails, and by `stop`, or on leaving a `with` block, when the test
fails later: no controller outlives its test.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import requests

from mpsched.controller.__main__ import command
from mpsched.proc.bmv2 import free_port
from tests.conftest import token_file

States = list[dict[str, Any]]


def all_ready(states: States) -> bool:
    """Every switch of the answer is ready."""
    return bool(states) and all(s["state"] == "ready" for s in states)


def first_in(state: str) -> Callable[[States], bool]:
    """The first switch of the answer (the only one, or the local one) is in `state`."""
    return lambda states: bool(states) and states[0]["state"] == state


@dataclass
class ControllerProcess:
    """A running controller: its process, REST port and log."""

    proc: subprocess.Popen
    port: int
    log_path: Path
    last: States | None = None  # the last GET /switches answer a wait saw

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def switches(self) -> States | None:
        """GET /switches, or None while the REST server does not answer."""
        try:
            return requests.get(self.base + "/switches", timeout=2).json()
        except requests.RequestException:
            return None

    def wait(self, ready: Callable[[States], bool], timeout: float = 20.0,
             interval: float = 0.2, what: str = "the switches") -> float:
        """Seconds until GET /switches satisfies `ready`. Fails the test, with the last answer
        and the log, when the process exits first or after `timeout` seconds."""
        start = time.monotonic()
        while True:
            if self.proc.poll() is not None:
                pytest.fail(f"the controller exited ({self.proc.returncode}) while waiting for "
                            f"{what}; last answer: {self.last}\n{self.log()}")
            states = self.switches()
            if states is not None:
                self.last = states
                if ready(states):
                    return time.monotonic() - start
            if time.monotonic() - start >= timeout:
                pytest.fail(f"{what}: not there after {timeout:g}s; last answer: {self.last}\n"
                            f"{self.log()}")
            time.sleep(interval)

    def kill(self) -> None:
        """SIGKILL, as a crash: the controller saves and closes nothing."""
        self.proc.kill()
        self.proc.wait()

    def stop(self) -> None:
        """SIGTERM, SIGKILL if it has not ended 10 s later; nothing if it has ended already."""
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        self.proc.wait()

    def __enter__(self) -> ControllerProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def start_controller(
    directory: Path,
    artifacts: Any,
    netcfg: Mapping[str, Any] | Path,
    *,
    name: str = "controller",
    port: int | None = None,
    token: Path | None = None,
    state: Path | None = None,
    extra: Sequence[str] = (),
    env: Mapping[str, str] | None = None,
    ready: Callable[[States], bool] | None = all_ready,
    timeout: float = 20.0,
    interval: float = 0.2,
) -> ControllerProcess:
    """A controller on `netcfg` (a file, or a description written to `directory`/netcfg.json)
    with the compiled program `artifacts` (p4info, bmv2_json), polling every 0.2 s; its log is
    `directory`/`name`.log (appended to), its token `token` (default: tests.conftest's
    token_file), `state` its state file (default: --no-state), `extra` more arguments, `env`
    more environment variables. With `ready`, waits (`ControllerProcess.wait`) until the
    GET /switches answer satisfies it; if that fails the process is stopped first."""
    if not isinstance(netcfg, Path):
        path = directory / "netcfg.json"
        path.write_text(json.dumps(netcfg))
        netcfg = path
    port = port or free_port()
    argv = command(netcfg, port, 0.2, artifacts.p4info, artifacts.bmv2_json,
                   token or token_file(directory), state)
    log_path = directory / f"{name}.log"
    with log_path.open("ab") as log:
        proc = subprocess.Popen([*argv, *extra], stdout=log, stderr=subprocess.STDOUT,
                                env={**os.environ, **(env or {})})
    ctl = ControllerProcess(proc, port, log_path)
    if ready is not None:
        try:
            ctl.wait(ready, timeout, interval, f"{name}'s switches")
        except BaseException:
            ctl.stop()
            raise
    return ctl
