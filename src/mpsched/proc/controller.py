"""The controller as a process of its own: start it on a free port, wait until every switch
is programmed, stop it again (the demo, the experiment runner, the benchmarks, the tests)."""

from __future__ import annotations

import secrets
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path

import requests

from mpsched.client.rest import ControllerError, RestClient
from mpsched.controller.__main__ import command as controller_command
from mpsched.proc.bmv2 import free_port
from mpsched.proc.cleanup import Registry, kill_pid


def wait_controller(
    rest: RestClient, proc: subprocess.Popen, timeout: float, state: str = "ready"
) -> None:
    """Until every switch's P4Runtime session is in `state` ("ready": programmed as the
    primary; "backup": another controller is primary), or the controller exits."""
    deadline = time.monotonic() + timeout
    last = "no answer"
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise ControllerError(f"the controller exited with code {proc.returncode}")
        try:
            switches = rest.get("/switches")
            if all(s["state"] == state for s in switches):
                return
            last = ", ".join(f"{s['name']}={s['state']}" for s in switches)
        except requests.RequestException as error:
            last = str(error)
        time.sleep(0.2)
    raise ControllerError(f"switches not {state} after {timeout}s ({last})")


def start_controller(
    netcfg: Path,
    log_path: Path,
    registry: Registry | None = None,
    poll: float = 0.5,
    p4info: Path | None = None,
    bmv2_json: Path | None = None,
    timeout: float = 30.0,
    extra_args: Sequence[str] = (),
    port: int | None = None,
    wait_for: str = "ready",
    state_file: Path | None = None,
) -> tuple[subprocess.Popen, RestClient]:
    """Start the controller on REST port `port` (default: a free one), its output appended
    to `log_path`, its PID in `registry`, its write token in `log_path` with suffix .token
    (kept if the file exists, so a restarted controller has the same token), known to the
    returned client; its intent in `state_file` (default: none kept, `--no-state`);
    `extra_args` go to its command line. Waits until every switch is in
    `wait_for` ("ready", or "backup" for a backup controller); on failure it is stopped."""
    port = free_port() if port is None else port
    token_file = log_path.with_suffix(".token")
    if token_file.is_file() and token_file.read_text().strip():
        token = token_file.read_text().strip()
    else:
        token = secrets.token_urlsafe(24)
        token_file.touch(mode=0o600)
        token_file.write_text(token + "\n")
    with log_path.open("ab") as out:
        proc = subprocess.Popen(
            [
                *controller_command(
                    netcfg, port, poll, p4info, bmv2_json, token_file, state_file=state_file
                ),
                *extra_args,
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # Ctrl-C goes to the owner, which stops it
        )
    if registry is not None:
        registry.add_process(proc.pid, " ".join(proc.args))
    rest = RestClient(f"http://127.0.0.1:{port}", token=token)
    try:
        wait_controller(rest, proc, timeout, wait_for)
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
