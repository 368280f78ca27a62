"""The operator's intent, kept on disk: what was written over REST survives a restart.

`Intent` holds everything an operator can write: the traffic classes with their policies (name,
params, lm3, flowlet_gap_us), the global parameters (control_period_ms, step_budget_pct,
cpu_budget_pct, lm3, policies, mptcp) and, per path, the static weight and the admin state, and
in a fabric the links the operator took down. Telemetry, placements, MPTCP connections and the
decision log are measured or derived, not intent, and are not kept. What a learning policy
learned (the `adaptive` policy's tables, `Scheduler.learned`) is kept beside the intent under
"learned": it is not intent (`intent_matches` ignores it), but a restart should not forget it.

The file is JSON (version 2; version 1, without "learned", is still read), written whole and
atomically (`save_atomic`)::

    {"version": 2,
     "classes": [{"id": 0, "name": "default", "priority": 0, "match": {},
                  "policy": {"name": "ecmp", "params": {}, "lm3": false, "flowlet_gap_us": 0}},
                 ...],
     "params": {"control_period_ms": 100.0, "step_budget_pct": 25.0, "cpu_budget_pct": 50.0,
                "lm3": {...}, "policies": {...}, "mptcp": {...}},
     "paths": {"1": {"weight": 1, "admin": "up"}, ...},
     "learned": {"<class id>": {"<switch>": {...}}},
     "links": {"leaf1-spine2": {"admin": "down"}}}   (a fabric's, only when some link is down)

`Intent.from_json` checks it against its model, `IntentFile`
(src/mpsched/controller/intent/intent_file.py: classes as for ``PUT /classes``, every class's policy
and params against the policy registry, params as for ``PUT /params``) and raises `StateError`
naming the field, e.g. ``classes[1].policy.name`` or ``paths.2.weight``; `load` reads a file (None
if there is none) and never changes it. `StateStore` is the running controller's side: where
the file is, what it last saved, when, and the last error.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import tempfile
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from mpsched import safeload
from mpsched.controller.intent.intent_file import (  # noqa: F401 (re-exported)
    MAX_PATH_ID,
    READ_VERSIONS,
    VERSION,
    IntentFile,
)
from mpsched.controller.model.errors import adapter
from mpsched.controller.scheduling.classes import TrafficClass, class_to_dict
from mpsched.controller.scheduling.scheduler import GlobalParams
from mpsched.proc import rundir
from mpsched.proc.rundir import DEFAULT_RUN_DIR, RUN_DIR_ENV
from mpsched.validation import input_error

log = logging.getLogger(__name__)

FILE_MODE = 0o600
DIR_MODE = 0o700


class StateError(ValueError):
    """A state that cannot be used. `field` names the offending field (None: the file as a
    whole), `path` the file it came from (None: not from a file)."""

    def __init__(self, message: str, field: str | None = None, path: Path | None = None) -> None:
        where = f"state file {path}: " if path is not None else ""
        super().__init__(where + (f"{field}: {message}" if field else message))
        self.message = message
        self.field = field
        self.path = path

    def in_file(self, path: Path) -> StateError:
        """The same error, naming the file."""
        return StateError(self.message, self.field, path)


@dataclass(frozen=True)
class PathIntent:
    """What an operator set for one path."""

    weight: int = 1  # the static weight (PUT /paths/{id}/weight)
    up: bool = True  # the admin state (PUT /paths/{id}/admin)


@dataclass(frozen=True)
class Intent:
    """Everything an operator can write over REST."""

    classes: tuple[TrafficClass, ...]
    params: GlobalParams = field(default_factory=GlobalParams)
    paths: Mapping[int, PathIntent] = field(default_factory=dict)
    version: int = VERSION
    # what learning policies learned, by class id and switch (Scheduler.learned); not intent
    learned: Mapping[str, Any] = field(default_factory=dict)
    links_down: frozenset[str] = frozenset()  # a fabric's links the operator took down

    def to_json(self) -> dict[str, Any]:
        """Plain JSON types; classes by id, paths by id; always the current VERSION. "links"
        only when a link is down (a two-edge network's file is as it always was)."""
        out = {
            "version": VERSION,
            "classes": [class_to_dict(c) for c in sorted(self.classes, key=lambda c: c.id)],
            "params": self.params.to_dict(),
            "paths": {
                str(pid): {"weight": p.weight, "admin": "up" if p.up else "down"}
                for pid, p in sorted(self.paths.items())
            },
            "learned": dict(self.learned),
        }
        if self.links_down:
            out["links"] = {name: {"admin": "down"} for name in sorted(self.links_down)}
        return out

    @classmethod
    def from_json(cls, data: Any) -> Intent:
        """A checked intent (the document as `IntentFile`); StateError names the first bad
        field (None: the document as a whole)."""
        try:
            doc = adapter(IntentFile).validate_python(data)
        except ValidationError as exc:
            first = input_error(exc)
            raise StateError(first.message, first.field or None) from None
        paths = {int(key): PathIntent(p.weight, p.admin == "up") for key, p in doc.paths.items()}
        down = frozenset(name for name, link in doc.links.items() if link.admin == "down")
        return cls(tuple(doc.classes), doc.params, paths, doc.version, doc.learned, down)


def intent_matches(a: Intent, b: Intent) -> list[str]:
    """The differences between two intents, one line each (``params.lm3.sigma: 0.3 != 0.5``);
    empty when they are the same."""
    out: list[str] = []
    _diff(_keyed(a.to_json()), _keyed(b.to_json()), "", out)
    return out


def _keyed(data: dict[str, Any]) -> dict[str, Any]:
    """Classes by id, so that a difference names the class rather than a list position;
    without "learned" (not intent)."""
    rest = {k: v for k, v in data.items() if k != "learned"}
    return {**rest, "classes": {str(c["id"]): c for c in data["classes"]}}


def _diff(a: Any, b: Any, where: str, out: list[str]) -> None:
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b)):
            sub = f"{where}.{key}" if where else str(key)
            if key not in b:
                out.append(f"{sub}: only in the first")
            elif key not in a:
                out.append(f"{sub}: only in the second")
            else:
                _diff(a[key], b[key], sub, out)
    elif a != b or type(a) is not type(b):
        out.append(f"{where}: {json.dumps(a)} != {json.dumps(b)}")


# -- the file ------------------------------------------------------------------


def default_state_path(rest_port: int) -> Path:
    """``$MPSCHED_RUN_DIR/state-<port>.json``, by default under /run/mpsched (as the token)."""
    return Path(os.environ.get(RUN_DIR_ENV) or DEFAULT_RUN_DIR) / f"state-{rest_port}.json"


def save_atomic(path: Path, intent: Intent) -> None:
    """Write `intent` to `path` so that a crash at any moment leaves either the old file or
    the new one: a temporary file in the same directory (mode 0600), written and fsynced,
    renamed over `path`, then the directory fsynced. The directory is created (mode 0700)
    if missing. On failure the temporary file is removed and the error raised."""
    path = Path(path)
    data = (json.dumps(intent.to_json(), indent=2) + "\n").encode()
    path.parent.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as out:
            os.fchmod(out.fileno(), FILE_MODE)
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    dir_fd = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


def load(path: Path) -> Intent | None:
    """The intent saved in `path`; None if there is no such file. A file that cannot be
    read, is not JSON (read and parsed within `safeload.DESCRIPTION`'s bounds) or holds an
    invalid intent raises StateError naming the file (and the field), and so does one that is no
    regular file or is owned by neither the user nor root (another user could have planted it,
    src/mpsched/proc/rundir.py); the file is never
    changed."""
    path = Path(path)
    limits = safeload.DESCRIPTION
    try:
        if not rundir.check_file(path, "state file"):
            return None
        raw = safeload.read_bytes(path, limits.max_bytes)
    except rundir.UnsafePathError as error:
        raise StateError(str(error)) from None
    except FileNotFoundError:
        return None
    except OSError as error:
        raise StateError(f"cannot read it: {error.strerror or error}", path=path) from None
    except safeload.RefusedError as error:
        raise StateError(error.text(), path=path) from None
    try:
        data = safeload.parse_json(safeload.decode(raw), limits)
    except safeload.RefusedError as error:
        raise StateError(f"not valid JSON ({error.text()})", path=path) from None
    try:
        return Intent.from_json(data)
    except StateError as error:
        raise error.in_file(path) from None


class StateStore:
    """A running controller's state file: loads it once at start, saves every change the
    switches acknowledged, and remembers what it saved last, when, and the last error.
    `save` never raises: a failure is logged and shown by `view` (GET /state)."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self.saved: dict[str, Any] | None = None  # the intent in the file, as JSON
        self.saved_at: float | None = None
        self.restored = False  # the controller started from the file
        self.saves = 0
        self.failures = 0
        self.error: str | None = None  # of the latest save; None once one succeeds
        self.error_at: float | None = None

    def load(self) -> Intent | None:
        """The file's intent (None: no file yet); StateError if it cannot be used."""
        intent = load(self.path)
        if intent is not None:
            with self._lock:
                self.saved = intent.to_json()
                self.saved_at = self.path.stat().st_mtime
                self.restored = True
        return intent

    def save(self, intent: Intent) -> bool:
        """Write `intent` atomically; False (logged, kept for `view`) if that failed."""
        with self._lock:
            try:
                save_atomic(self.path, intent)
            except OSError as error:
                self._failed(f"cannot write {self.path}: {error.strerror or error}")
                return False
            except Exception as error:  # never let a save break the operator's request
                log.exception("state: saving %s failed", self.path)
                self._failed(f"cannot write {self.path}: {error}")
                return False
            self.saved = intent.to_json()
            self.saved_at = time.time()
            self.saves += 1
            self.error = self.error_at = None
            return True

    def _failed(self, message: str) -> None:
        log.error("state NOT saved, a restart would lose the last change: %s", message)
        self.failures += 1
        self.error = message
        self.error_at = time.time()

    def view(self) -> dict[str, Any]:
        with self._lock:
            return {
                "path": str(self.path),
                "persistent": True,
                "restored": self.restored,
                "intent": self.saved,
                "saved_at": None if self.saved_at is None else round(self.saved_at, 3),
                "saves": self.saves,
                "failures": self.failures,
                "error": self.error,
                "error_at": None if self.error_at is None else round(self.error_at, 3),
            }


def no_state_view() -> dict[str, Any]:
    """GET /state of a controller run without a state file (--no-state)."""
    return {
        "path": None,
        "persistent": False,
        "restored": False,
        "intent": None,
        "saved_at": None,
        "saves": 0,
        "failures": 0,
        "error": None,
        "error_at": None,
    }


def copy_params(params: GlobalParams) -> GlobalParams:
    """A copy whose policies dict is the copy's own (the Params values are frozen)."""
    return replace(params, policies=dict(params.policies))
