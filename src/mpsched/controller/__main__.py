"""Entry point: ``python -m mpsched.controller --netcfg FILE`` (also ``mpsched controller``)."""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
from collections.abc import Mapping
from pathlib import Path

from mpsched.controller.app.cli import (
    build_parser,
    cpu_budget_pct,
    step_budget_pct,
    telemetry_config,
)
from mpsched.controller.app.core import Controller, ControllerSettings
from mpsched.controller.app.runfiles import RunFileError, RunFiles
from mpsched.controller.app.security import (
    ExposureError,
    RestTls,
    check_rest_exposure,
    rest_tls,
    with_tls_default,
)
from mpsched.controller.northbound.rest import MAX_REST_THREADS
from mpsched.controller.runtime import memarenas, memtrace, memtrim
from mpsched.controller.scheduling.scheduler import MAX_CONTROL_PERIOD_MS, MIN_CONTROL_PERIOD_MS
from mpsched.controller.telemetry.estimators import TelemetryConfig


def command(
    netcfg: object,
    rest_port: int,
    poll_interval: float = 1.0,
    p4info: object = None,
    bmv2_json: object = None,
    token_file: object = None,
    state_file: object = None,
) -> list[str]:
    """The argv that runs the controller as a process of its own (demo, tests). Without
    `state_file` it runs with `--no-state`: these runs start from a clean intent, never
    from what an earlier run on the same port left behind."""
    cmd = [
        sys.executable,
        "-m",
        "mpsched.controller",
        "--netcfg",
        str(netcfg),
        "--rest-port",
        str(rest_port),
        "--poll-interval",
        str(poll_interval),
    ]
    if p4info is not None:
        cmd += ["--p4info", str(p4info)]
    if bmv2_json is not None:
        cmd += ["--bmv2-json", str(bmv2_json)]
    if token_file is not None:
        cmd += ["--token-file", str(token_file)]
    cmd += ["--no-state"] if state_file is None else ["--state", str(state_file)]
    return cmd


class StartError(Exception):
    """The controller cannot start: the message says why (exit status 2)."""


log = logging.getLogger("mpsched.controller")

HUB_ENV = "OSKEN_HUB_TYPE"  # os-ken's choice of hub (os_ken/lib/hub.py), read at its import
NATIVE_HUB = "native"


def check_hub(environ: Mapping[str, str]) -> None:
    """StartError unless os-ken is to run on its native hub (`HUB_ENV` unset or "native"):
    only there is REST served by waitress with the limits of connlimits.py (a request
    deadline, per-client connection limits); os-ken's eventlet hub had a server without
    them, and nothing the project runs needs it."""
    value = environ.get(HUB_ENV, NATIVE_HUB)
    if value != NATIVE_HUB:
        raise StartError(f"{HUB_ENV}={value!r}: the controller runs on os-ken's native hub "
                         "only (its REST server, waitress, has the request deadline and the "
                         "per-client connection limits, docs/rest.md); unset "
                         f"{HUB_ENV} or set it to {NATIVE_HUB}")


def check_args(args: argparse.Namespace) -> TelemetryConfig:
    """StartError naming the first option out of range; the telemetry settings."""
    if args.poll_interval <= 0:
        raise StartError("--poll-interval: must be positive")
    if not args.counter_budget_cps >= 0:
        raise StartError(f"--counter-budget-cps: must be >= 0 (0: no budget), got "
                         f"{args.counter_budget_cps}")
    if not 1 <= args.rest_threads <= MAX_REST_THREADS:
        raise StartError(f"--rest-threads: must be 1..{MAX_REST_THREADS}")
    check_rest_exposure(args)  # ExposureError
    if not 1 <= args.election_id < 2**63:
        raise StartError(f"--election-id: must be 1..2^63-1, got {args.election_id}")
    if not MIN_CONTROL_PERIOD_MS <= args.control_period_ms <= MAX_CONTROL_PERIOD_MS:
        raise StartError(
            f"--control-period-ms: must be {MIN_CONTROL_PERIOD_MS:g}..{MAX_CONTROL_PERIOD_MS:g}"
        )
    if not args.malloc_trim_s >= 0:
        raise StartError(f"--malloc-trim-s: must be >= 0 (0: never), got {args.malloc_trim_s}")
    if args.gc_freeze_min_paths < 0:
        raise StartError("--gc-freeze-min-paths: must be >= 0 (0: never), got "
                         f"{args.gc_freeze_min_paths}")
    if args.malloc_arenas < 0:
        raise StartError(
            f"--malloc-arenas: must be >= 0 (0: glibc's default), got {args.malloc_arenas}")
    try:
        step_budget_pct(args)
        cpu_budget_pct(args)
        return telemetry_config(args)
    except ValueError as error:
        raise StartError(str(error)) from None


def rest_token(files: RunFiles) -> str:
    """The REST write token, read from its file or created there (after every check: the
    run directory and the token file are the first things the controller writes)."""
    try:
        return files.token()
    except RunFileError as error:
        raise StartError(str(error)) from None


def run_files(args: argparse.Namespace) -> RunFiles:
    """The token and state files of the command line, checked without writing anything:
    StartError for a run directory or token file another user could have put there."""
    files = RunFiles.of(args)
    try:
        files.check()
    except RunFileError as error:
        raise StartError(str(error)) from None
    return files


def read_token(args: argparse.Namespace) -> tuple[Path, str] | None:
    """With --read-token (or --read-token-file): the read token's file and the token
    (created there if absent); else None (reads need no token)."""
    from mpsched.controller.northbound.auth import (
        TokenFileError,
        default_read_token_path,
        load_or_create_token,
    )

    if not (args.read_token or args.read_token_file):
        return None
    from mpsched.proc import rundir

    path = (Path(args.read_token_file) if args.read_token_file
            else default_read_token_path(args.rest_port))
    try:
        rundir.check_file(path, "--read-token-file")
        return path, load_or_create_token(path)
    except rundir.UnsafePathError as error:
        raise StartError(str(error)) from None
    except (OSError, TokenFileError) as error:
        raise StartError(f"--read-token-file {path}: {error}") from None


def build_controller(args: argparse.Namespace, telemetry: TelemetryConfig) -> Controller:
    """The controller of the command line, its intent restored from the state file (read
    only: nothing is written here)."""
    from mpsched.controller.intent.state import StateError, StateStore
    from mpsched.netcfg import ConfigError, NetCfg
    from mpsched.p4rt.p4info import P4Info, P4InfoError
    from mpsched.p4rt.pipeline import Pipeline

    state = RunFiles.of(args).state
    store = StateStore(state) if state is not None else None
    settings = ControllerSettings(
        poll_interval=args.poll_interval,
        counter_budget_cps=args.counter_budget_cps or None,
        telemetry=telemetry,
        default_policy=args.policy,
        control_period_ms=args.control_period_ms,
        step_budget_pct=step_budget_pct(args),
        cpu_budget_pct=cpu_budget_pct(args),
        election_id=args.election_id,
        peer=args.peer,
        gc_freeze_min_paths=args.gc_freeze_min_paths,
    )
    try:
        net = with_tls_default(NetCfg.load(args.netcfg), args)
        pipeline = Pipeline(P4Info.from_file(args.p4info))
        open(args.bmv2_json, "rb").close()
        return Controller(net, pipeline, args.bmv2_json, settings, store=store)
    except StateError as error:
        raise StartError(f"{error}; fix or remove the file, or run with --no-state") from None
    except ConfigError as error:  # e.g. a fabric beyond the program's limits: name the file
        raise StartError(str(error if error.source else error.in_source(args.netcfg))) from None
    except (P4InfoError, OSError, ValueError) as error:
        raise StartError(str(error)) from None


def log_start(controller: Controller, token_path: Path, reads: tuple[Path, str] | None
              ) -> None:
    log.info("REST write token in %s", token_path)
    if reads is not None:
        log.info("REST reads need a token: the write token or the read token in %s (the "
                 "dashboard: open /ui/#token=<token>)", reads[0])
    from google.protobuf.internal import api_implementation

    if api_implementation.Type() == "python":
        log.warning(
            "protobuf is the pure-Python implementation: the P4Runtime stream (reports, probes)"
            " costs about 6x the CPU; install Debian's python3-protobuf (make setup)"
        )
    if controller.store is None:
        log.info("intent not persisted (--no-state): a restart forgets REST writes")
    else:
        log.info("intent persisted in %s", controller.store.path)


def serve(args: argparse.Namespace, controller: Controller, token: str,
          tls: RestTls | None = None, reads: tuple[Path, str] | None = None) -> int:
    """Run the os-ken app (REST, over HTTPS with `tls`, reads needing a token with `reads`,
    and the controller) until SIGINT or SIGTERM."""
    from os_ken.base import app_manager
    from os_ken.lib import hub

    from mpsched.controller.app.app import MultipathApp

    stopping = hub.Event()

    def on_signal(signum: int, _frame: object) -> None:
        log.info("signal %d: stopping", signum)
        stopping.set()

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    manager = app_manager.AppManager.get_instance()
    app = manager.instantiate(
        MultipathApp,
        controller=controller,
        rest_host=args.rest_host,
        rest_port=args.rest_port,
        token=token,
        rest_threads=args.rest_threads,
        rest_tls=tls,
        read_token=reads[1] if reads else None,
        rest_host_names=tuple(args.rest_host_name),
    )
    try:
        app.start()
    except OSError as error:
        log.error("cannot serve REST on %s:%d: %s", args.rest_host, args.rest_port, error)
        app.stop()
        return 2
    try:
        while not stopping.is_set():
            stopping.wait(timeout=0.5)
    finally:
        app.stop()
        manager.uninstantiate(app.name)
    return 0


def main(argv: list[str] | None = None) -> int:
    return execute(build_parser().parse_args(argv))


def execute(args: argparse.Namespace) -> int:
    """Run the controller `args` (parsed by `build_parser`) describes until SIGINT/SIGTERM;
    0, or 2 for an option or input file it cannot use (logged, naming it)."""
    logging.basicConfig(
        level=args.log_level, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    # every check first (the hub, the options, the files read, the run directory's owner),
    # then the first write: the token (and the run directory) only once all passed
    try:
        check_hub(os.environ)
        telemetry = check_args(args)
        # after the options' checks (a refused start runs nothing: the limit looks glibc up
        # with ldconfig), before any thread of the controller's starts (memarenas.py)
        memarenas.limit(args.malloc_arenas)
        tls = rest_tls(args)
        files = run_files(args)
        controller = build_controller(args, telemetry)
        token = rest_token(files)
        reads = read_token(args)
    except (StartError, ExposureError) as error:
        log.error("%s", error)
        return 2
    log_start(controller, files.token_path, reads)
    # off unless MPSCHED_MEMTRACE_S is set (src/mpsched/controller/runtime/memtrace.py)
    memtrace.start_from_env()
    memtrim.start(args.malloc_trim_s)
    return serve(args, controller, token, tls, reads)


if __name__ == "__main__":
    sys.exit(main())
