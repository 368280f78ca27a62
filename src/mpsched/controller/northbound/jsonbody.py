"""Reading a request's JSON body, strictly, and the HTTP error the REST layer answers.

Bodies are strict JSON: NaN, Infinity and -Infinity (which Python's json accepts),
numbers out of a double's range, integers over `MAX_INT_DIGITS` digits, duplicate
keys and nesting deeper than `MAX_DEPTH` are refused with 400 naming the field
(or ``body``). Accepted Content-Types: none, ``application/json`` (and
``application/*+json``), and, read as JSON all the same, ``text/plain`` and
``application/x-www-form-urlencoded`` (what ``curl -d`` sends); a charset other
than UTF-8 or any other type is 415. What the object must hold is its model's
business (bodies.py).
"""

from __future__ import annotations

import json
import math
from typing import Any

from webob import Request

MAX_BODY = 64 * 1024
MAX_DEPTH = 32  # nested objects/arrays in a body (valid bodies nest 6 at most)
MAX_INT_DIGITS = 30
JSON_MEDIA_TYPES = frozenset(
    {"application/json", "text/plain", "application/x-www-form-urlencoded"}
)


class HttpError(Exception):
    """An answer other than 200: `status`, and the JSON ``{"error": message, "field": field}``
    with `headers` (``Allow``, ``WWW-Authenticate``)."""

    def __init__(
        self,
        status: int,
        message: str,
        field: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.field = field
        self.headers = headers or {}


class _Refused:
    """Stands in for a JSON value the API refuses; `check_tree` names its field."""

    __slots__ = ("reason",)

    def __init__(self, reason: str) -> None:
        self.reason = reason


def _parse_constant(name: str) -> _Refused:
    return _Refused(f"{name} is not a number (JSON has no NaN or infinities)")


def _parse_float(text: str) -> float | _Refused:
    value = float(text)
    return value if math.isfinite(value) else _Refused(f"{text} is out of range")


def _parse_int(text: str) -> int | _Refused:
    if len(text.lstrip("-")) > MAX_INT_DIGITS:
        return _Refused(f"integer of more than {MAX_INT_DIGITS} digits")
    return int(text)


def _object_pairs(pairs: list[tuple[str, Any]]) -> dict:
    out: dict[str, Any] = {}
    for key, value in pairs:
        out[key] = _Refused("duplicate key") if key in out else value
    return out


def _join(where: str, key: str) -> str:
    return f"{where}.{key}" if where else key


def check_tree(data: dict, where: str = "") -> None:
    """400 naming the first refused value (document order), or `body` if nested deeper
    than `MAX_DEPTH`; iterative, so no depth makes it recurse."""
    stack: list[tuple[Any, str, int]] = [(data, where, 1)]
    while stack:
        value, name, depth = stack.pop()
        if isinstance(value, _Refused):
            raise HttpError(400, f"{name!r}: {value.reason}", name)
        if isinstance(value, dict | list) and depth > MAX_DEPTH:
            raise HttpError(400, f"body nested deeper than {MAX_DEPTH} levels", "body")
        if isinstance(value, dict):
            items = [(v, _join(name, k), depth + 1) for k, v in value.items()]
        elif isinstance(value, list):
            items = [(v, f"{name}[{i}]", depth + 1) for i, v in enumerate(value)]
        else:
            continue
        stack.extend(reversed(items))


def check_content_type(request: Request) -> None:
    header = (request.headers.get("Content-Type") or "").strip()
    if not header:
        return
    media, _, rest = header.partition(";")
    media = media.strip().lower()
    if media not in JSON_MEDIA_TYPES and not (
        media.startswith("application/") and media.endswith("+json")
    ):
        raise HttpError(415, f"Content-Type {media!r} is not supported; send application/json")
    for param in rest.split(";"):
        key, _, value = param.partition("=")
        if key.strip().lower() == "charset" and value.strip().strip('"').lower() not in (
            "utf-8",
            "utf8",
        ):
            raise HttpError(415, f"charset {value.strip()!r} is not supported; send UTF-8")


def read_json_object(request: Request, where: str = "") -> dict:
    """The body as a JSON object; `where` prefixes the field names of errors."""
    check_content_type(request)
    if request.content_length is not None and request.content_length > MAX_BODY:
        raise HttpError(413, f"body larger than {MAX_BODY} bytes", "body")
    raw = request.body_file.read(MAX_BODY + 1)
    if len(raw) > MAX_BODY:
        raise HttpError(413, f"body larger than {MAX_BODY} bytes", "body")
    try:
        data = json.loads(
            raw.decode("utf-8"),
            parse_constant=_parse_constant,
            parse_float=_parse_float,
            parse_int=_parse_int,
            object_pairs_hook=_object_pairs,
        )
    except (UnicodeDecodeError, ValueError) as error:  # JSONDecodeError is a ValueError
        raise HttpError(400, f"body is not valid JSON: {error}", "body") from None
    except RecursionError:
        raise HttpError(400, f"body nested deeper than {MAX_DEPTH} levels", "body") from None
    if not isinstance(data, dict):
        raise HttpError(400, "body must be a JSON object", "body")
    check_tree(data, where)
    return data


