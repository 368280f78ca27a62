"""The controller as a process of its own, and a small client for its REST API.

Used by the demo, the experiment runner, the benchmarks, `mpsched ctl` and the
tests: one way to start the controller on a free port, wait until every switch
is programmed, and stop it again; one way to call its REST API.
"""

from __future__ import annotations

import secrets
import subprocess
import time
from pathlib import Path
from typing import Any

import requests

from mpsched.bmv2 import free_port
from mpsched.cleanup import Registry, kill_pid
from mpsched.controller.__main__ import command as controller_command


class ControllerError(RuntimeError):
    """The controller did not start, or refused a request: then `status` is the HTTP
    status and `message`/`field` come from its JSON error body."""

    def __init__(self, message: str, status: int | None = None, field: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.field = field

    def __str__(self) -> str:
        text = self.message if self.status is None else f"{self.status} {self.message}"
        return text + (f" (field: {self.field})" if self.field else "")


class ControllerHTTPError(ControllerError, requests.HTTPError):
    """An error answer; also a `requests.HTTPError`, so callers that catch
    `requests.RequestException` around the REST calls keep working."""

    def __init__(self, response: requests.Response) -> None:
        try:
            body = response.json()
        except ValueError:
            body = None
        if isinstance(body, dict) and isinstance(body.get("error"), str):
            message, field = body["error"], body.get("field")
        else:
            message, field = response.text.strip() or response.reason or "error", None
        super().__init__(message, response.status_code, field)
        self.response = response
        self.request = response.request

    def __str__(self) -> str:
        where = f"{self.request.method} {self.request.path_url}: "
        return where + ControllerError.__str__(self)


class RestClient:
    """JSON over HTTP to the controller; `token` goes out as ``Authorization: Bearer``.
    Error answers raise ControllerHTTPError; unreachable controllers raise
    `requests.RequestException` (e.g. ConnectionError)."""

    def __init__(self, base: str, token: str | None = None, timeout: float = 10.0) -> None:
        self.base = base.rstrip("/")
        self.token = token
        self.timeout = timeout

    def request(
        self, method: str, path: str, body: Any = None, params: dict[str, Any] | None = None
    ) -> Any:
        headers = {"Accept": "application/json"}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        r = requests.request(
            method,
            self.base + path,
            json=body,
            params=params,
            headers=headers,
            timeout=self.timeout,
        )
        if not 200 <= r.status_code < 300:
            raise ControllerHTTPError(r)
        return r.json()

    def get(self, path: str, params: dict[str, Any] | None = None) -> Any:
        return self.request("GET", path, params=params)

    def put(self, path: str, body: Any) -> Any:
        return self.request("PUT", path, body)

    def set_weight(self, path_id: int, weight: int) -> dict:
        return self.put(f"/paths/{path_id}/weight", {"weight": weight})


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
