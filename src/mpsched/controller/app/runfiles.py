"""The controller's files: the REST write token and the state file, by default in the run
directory ($MPSCHED_RUN_DIR, else /run/mpsched; docs/security.md).

`RunFiles.check` reads only: the run directory (if a file is in it) must be the user's own
or root's and writable by nobody else, and an existing token file must be a regular file of
the user's or root's (src/mpsched/proc/rundir.py; the state file is checked so where it is read,
src/mpsched/controller/intent/state.py), else the start is refused. It runs with
the other checks of the command line, so that nothing is written before they all pass.
`RunFiles.token` then makes the run directory private (created 0700, or tightened to it) and
reads the token, or creates it there (mode 0600).
"""

from __future__ import annotations

import argparse
import os
from dataclasses import dataclass
from pathlib import Path

from mpsched.controller.intent.state import default_state_path
from mpsched.controller.northbound.auth import (
    TokenFileError,
    default_token_path,
    load_or_create_token,
)
from mpsched.proc import rundir
from mpsched.proc.rundir import DEFAULT_RUN_DIR, RUN_DIR_ENV


class RunFileError(ValueError):
    """A token or state file (or the run directory) the controller will not use; the message
    names it and says why."""


def run_dir() -> Path:
    """The run directory: $MPSCHED_RUN_DIR, else /run/mpsched."""
    return Path(os.environ.get(RUN_DIR_ENV) or DEFAULT_RUN_DIR)


@dataclass(frozen=True)
class RunFiles:
    """Where the controller keeps its token and its intent (`state` None: not kept)."""

    token_path: Path
    state: Path | None

    @classmethod
    def of(cls, args: argparse.Namespace) -> RunFiles:
        """The files of the command line (`--token-file`, `--state`, `--no-state`) or their
        defaults in the run directory."""
        token = Path(args.token_file) if args.token_file else default_token_path(args.rest_port)
        state = None
        if not args.no_state and args.state != "":
            state = Path(args.state) if args.state else default_state_path(args.rest_port)
        return cls(token, state)

    def in_run_dir(self) -> bool:
        """Whether either file lies in the run directory (which is then kept private)."""
        where = run_dir().absolute()
        return any(p is not None and p.absolute().parent == where
                   for p in (self.token_path, self.state))

    def check(self) -> None:
        """RunFileError naming the run directory or the file another user could have put
        there (or that is no regular file); changes nothing."""
        try:
            if self.in_run_dir():
                rundir.check_dir(run_dir())
            rundir.check_file(self.token_path, "--token-file")
        except rundir.UnsafePathError as error:
            raise RunFileError(str(error)) from None

    def token(self) -> str:
        """The token (created if absent, mode 0600), the run directory made private first;
        a token file of the user's open to others is tightened. RunFileError naming the file
        if it cannot be used."""
        path = self.token_path
        try:
            if self.in_run_dir():
                rundir.prepare_dir(run_dir())
            if rundir.check_file(path, "--token-file"):
                rundir.tighten_file(path, "--token-file")
            return load_or_create_token(path)
        except rundir.UnsafePathError as error:
            raise RunFileError(str(error)) from None
        except (OSError, TokenFileError) as error:
            raise RunFileError(f"--token-file {path}: {error}") from None
