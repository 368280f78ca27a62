"""The controller as a process of its own: start it on a free port, wait until every switch
is programmed, stop it again (the demo, the experiment runner, the benchmarks, the tests)."""

from __future__ import annotations

import secrets
import subprocess
import time
from pathlib import Path

import requests

from mpsched.client.rest import ControllerError, RestClient
from mpsched.controller.__main__ import command as controller_command
from mpsched.proc.bmv2 import free_port
from mpsched.proc.cleanup import Registry, kill_pid


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
    `registry`, its write token in `log_path` with suffix .token, known to the returned
    client) and wait until the switches are ready; on failure it is stopped again."""
    port = free_port()
    token_file = log_path.with_suffix(".token")
    token = secrets.token_urlsafe(24)
    token_file.touch(mode=0o600)
    token_file.write_text(token + "\n")
    with log_path.open("wb") as out:
        proc = subprocess.Popen(
            controller_command(netcfg, port, poll, p4info, bmv2_json, token_file),
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # Ctrl-C goes to the owner, which stops it
        )
    if registry is not None:
        registry.add_process(proc.pid, " ".join(proc.args))
    rest = RestClient(f"http://127.0.0.1:{port}", token=token)
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
