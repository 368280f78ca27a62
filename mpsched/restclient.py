"""The controller as a process of its own, and a small client for its REST API.

Used by the demo, the experiment runner, the benchmarks and the tests: one
way to start the controller on a free port, wait until every switch is
programmed, and stop it again.
"""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import requests

from mpsched.bmv2 import free_port
from mpsched.cleanup import Registry, kill_pid
from mpsched.controller.__main__ import command as controller_command


class ControllerError(RuntimeError):
    """The controller did not start, or refused a request."""


class RestClient:
    def __init__(self, base: str) -> None:
        self.base = base

    def get(self, path: str):
        r = requests.get(self.base + path, timeout=10)
        r.raise_for_status()
        return r.json()

    def set_weight(self, path_id: int, weight: int) -> None:
        r = requests.put(f"{self.base}/paths/{path_id}/weight", json={"weight": weight}, timeout=10)
        if r.status_code != 200:
            raise ControllerError(f"PUT /paths/{path_id}/weight: {r.status_code} {r.text}")


def wait_controller(rest: RestClient, proc: subprocess.Popen, timeout: float) -> None:
    """Until every switch's P4Runtime session is ready (or the controller exits)."""
    deadline = time.monotonic() + timeout
    last = "no answer"
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise ControllerError(f"the controller exited with code {proc.returncode}")
        try:
            switches = rest.get("/switches")
            if all(s["state"] == "ready" for s in switches):
                return
            last = ", ".join(f"{s['name']}={s['state']}" for s in switches)
        except requests.RequestException as error:
            last = str(error)
        time.sleep(0.2)
    raise ControllerError(f"switches not ready after {timeout}s ({last})")


def start_controller(
    netcfg: Path,
    log_path: Path,
    registry: Registry | None = None,
    poll: float = 0.5,
    p4info: Path | None = None,
    bmv2_json: Path | None = None,
    timeout: float = 30.0,
) -> tuple[subprocess.Popen, RestClient]:
    """Start the controller on a free REST port (its output to `log_path`, its PID in
    `registry`) and wait until the switches are ready; on failure it is stopped again."""
    port = free_port()
    with log_path.open("wb") as out:
        proc = subprocess.Popen(
            controller_command(netcfg, port, poll, p4info, bmv2_json),
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # Ctrl-C goes to the owner, which stops it
        )
    if registry is not None:
        registry.add_process(proc.pid, " ".join(proc.args))
    rest = RestClient(f"http://127.0.0.1:{port}")
    try:
        wait_controller(rest, proc, timeout)
    except BaseException:
        stop_controller(proc, registry)
        raise
    return proc, rest


def stop_controller(proc: subprocess.Popen, registry: Registry | None = None) -> None:
    if proc.poll() is None:
        kill_pid(proc.pid, " ".join(proc.args), grace=10.0)
    proc.wait()
    if registry is not None:
        registry.forget_process(proc.pid)
