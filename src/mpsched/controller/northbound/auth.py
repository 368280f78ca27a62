"""The REST API's tokens, sent as ``Authorization: Bearer <token>``.

The write token: one shared secret the controller creates at start in a file only its user can
read (`default_token_path`); `mpsched ctl` reads the same file. Every write needs it. GETs need
no token unless the controller runs with ``--read-token``: then they need the write token or
the read token (`default_read_token_path`, created the same way), which allows reads only
(docs/security.md).
"""

from __future__ import annotations

import hmac
import logging
import os
import secrets
from pathlib import Path

from mpsched import safeload
from mpsched.proc.rundir import DEFAULT_RUN_DIR, RUN_DIR_ENV

log = logging.getLogger(__name__)


class AuthError(Exception):
    """A write without the right token: 401 (no or malformed credentials) or 403 (wrong token)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = {"WWW-Authenticate": "Bearer"} if status == 401 else {}


class TokenFileError(RuntimeError):
    """The token file exists but holds no token."""


def default_token_path(rest_port: int) -> Path:
    """``$MPSCHED_RUN_DIR/token-<port>``, by default under /run/mpsched."""
    return Path(os.environ.get(RUN_DIR_ENV) or DEFAULT_RUN_DIR) / f"token-{rest_port}"


def default_read_token_path(rest_port: int) -> Path:
    """``$MPSCHED_RUN_DIR/read-token-<port>``, beside the write token."""
    return default_token_path(rest_port).with_name(f"read-token-{rest_port}")


def load_or_create_token(path: Path) -> str:
    """The token in `path`; if there is no such file, a new random one written there (mode
    0600, its directory created with mode 0700)."""
    try:
        return _read(path)
    except FileNotFoundError:
        pass
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    token = secrets.token_urlsafe(24)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:  # created by another process meanwhile
        return _read(path)
    with os.fdopen(fd, "w") as out:
        out.write(token + "\n")
    log.info("REST write token created in %s", path)
    return token


def _read(path: Path) -> str:
    try:
        token = safeload.read_small_text(path).strip()
    except safeload.RefusedError as error:
        raise TokenFileError(f"token file {path}: {error.text()}") from None
    if not token:
        raise TokenFileError(f"token file {path} is empty")
    if path.stat().st_mode & 0o077:
        log.warning("token file %s is readable by other users", path)
    return token


def check(header: str | None, token: str, *others: str) -> str:
    """The token `header` (the Authorization header) gives, if it is ``Bearer <token>`` with
    `token` or one of `others`; else AuthError."""
    if header is None:
        raise AuthError(401, "this request needs 'Authorization: Bearer <token>'")
    scheme, _, credentials = header.strip().partition(" ")
    credentials = credentials.strip()
    if scheme.lower() != "bearer" or not credentials:
        raise AuthError(401, "the Authorization header must be 'Bearer <token>'")
    # every token compared, each in constant time: which one matched is not timed either
    matches = [hmac.compare_digest(credentials.encode(), t.encode()) for t in (token, *others)]
    if not any(matches):
        raise AuthError(403, "wrong token")
    return credentials
