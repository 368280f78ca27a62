"""A small client for the controller's REST API, and its errors.

Used by `mpsched ctl`, the demo, the experiment runner, the benchmarks and the tests: one way
to call the REST API (`mpsched.proc.controller` starts and stops the controller process).
"""

from __future__ import annotations

from typing import Any

import requests

START_HINT = "start one with `mpsched controller --netcfg FILE` (docs/operator.md)"


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

    def __init__(self, base: str, token: str | None = None, timeout: float = 10.0,
                 ca: str | None = None) -> None:
        self.base = base.rstrip("/")
        self.token = token
        self.timeout = timeout
        # https: the CA file the server's certificate must be signed by (None: the system's)
        self.verify: str | bool = ca if ca else True

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
            verify=self.verify,
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


def unreachable_text(url: str, error: requests.RequestException, timeout: float) -> str:
    """One line saying why no answer came from the controller at `url`, and what to do:
    nothing listens (connection refused, unknown host, no route: how to start one), TLS
    failed, or a controller took the connection but did not answer within `timeout` s.
    urllib3's retry text ("Max retries exceeded ... NewConnectionError(...)") is left out."""
    if isinstance(error, requests.ReadTimeout):
        return f"the controller at {url} did not answer within {timeout:g} s (--timeout)"
    if isinstance(error, requests.exceptions.SSLError):
        return f"TLS with {url} failed: {_os_reason(error) or 'certificate or protocol'}"
    if isinstance(error, requests.ConnectionError):
        reason = _os_reason(error) or ("timed out" if isinstance(error, requests.Timeout)
                                       else "cannot connect")
        return f"no controller answers at {url} ({reason}); {START_HINT}, or give its URL " \
            "with --url"
    return f"cannot reach the controller at {url}: {type(error).__name__}"


def _os_reason(error: BaseException) -> str | None:
    """The operating system's words for the innermost socket error under a requests error
    (requests -> urllib3's MaxRetryError -> its reason -> the OSError it was caused by)."""
    seen: set[int] = set()
    todo: list[object] = [error]
    while todo:
        item = todo.pop(0)
        if not isinstance(item, BaseException) or id(item) in seen:
            continue
        seen.add(id(item))
        if type(item).__module__ in ("builtins", "socket", "ssl") and isinstance(item, OSError):
            text = item.strerror or (str(item.args[-1]) if item.args else "")
            if text:
                return text[0].lower() + text[1:]
        todo.extend([*item.args, getattr(item, "reason", None), item.__cause__, item.__context__])
    return None
