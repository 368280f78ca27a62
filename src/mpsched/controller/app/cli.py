"""The controller's command line (``python -m mpsched.controller``,
src/mpsched/controller/__main__.py):
its options by group (switches, telemetry, liveness, state, control; security's in
src/mpsched/controller/app/security.py) and the telemetry settings they give (`telemetry_config`,
whose errors
name the option)."""

from __future__ import annotations

import argparse

from mpsched.controller.app.core import DEFAULT_POLICY
from mpsched.controller.app.security import add_security_options
from mpsched.controller.northbound.rest import MAX_REST_THREADS, REST_THREADS
from mpsched.controller.runtime import gcfreeze, memarenas, memtrim
from mpsched.controller.runtime.governor import CPU_BUDGET_PCT, MAX_CPU_BUDGET_PCT, MIN_STEP_SHARE
from mpsched.controller.scheduling.scheduler import (
    CONTROL_PERIOD_MS,
    MAX_CONTROL_PERIOD_MS,
    MAX_STEP_BUDGET_PCT,
    MIN_CONTROL_PERIOD_MS,
    REGISTRY,
    STEP_BUDGET,
)
from mpsched.controller.southbound.counters import COUNTER_BUDGET_CPS
from mpsched.controller.telemetry.config import (
    IDLE_PROBE_INTERVAL_S,
    PROBE_BUDGET_PPS,
    REPORT_BUDGET_PPS,
)
from mpsched.controller.telemetry.estimators import (
    DEAD_AFTER_US,
    PROBE_INTERVAL_S,
    REPORT_BATCH_US,
    REPORT_INTERVAL_US,
    REPORT_MAX_PPS,
    RTT_REPORT_INTERVAL_US,
    TelemetryConfig,
)
from mpsched.proc.layout import P4Artifacts, p4_artifacts


def build_parser() -> argparse.ArgumentParser:
    art = p4_artifacts()
    parser = argparse.ArgumentParser(
        prog="mpsched controller",
        description="Run the multipath scheduler controller (os-ken app): bring every switch "
        "of the network description to the controller's state over P4Runtime (push the P4 "
        "program and every entry, or, where a switch already runs it, write only the "
        "difference), run the control loop, poll per-path counters, take the switches' path "
        "and RTT reports (batched, --report-batch-ms), probe every path (through a switch's "
        "probe port where the network description names the controller's end of it, "
        "probe_iface; else as PacketOuts), keep the operator's intent in a state file, and "
        "serve the REST API; as primary, or as backup of another controller (--election-id). "
        "Switches are reached over TLS where the network description (or --tls-ca) says so; "
        "REST off loopback needs HTTPS (docs/security.md). Runs on os-ken's native hub "
        "only: OSKEN_HUB_TYPE unset or native (eventlet is refused, exit status 2).",
    )
    add_switch_options(parser, art)
    add_measurement_options(parser)
    add_state_options(parser)
    add_control_options(parser)
    add_security_options(parser)
    return parser


def add_switch_options(parser: argparse.ArgumentParser, art: P4Artifacts) -> None:
    """The network description, the P4 program, and where REST is served."""
    parser.add_argument(
        "--netcfg", required=True, help="network description JSON (written by `mpsched topo`)"
    )
    parser.add_argument(
        "--p4info", default=str(art.p4info), help="P4Info text file (default: %(default)s)"
    )
    parser.add_argument(
        "--bmv2-json", default=str(art.bmv2_json), help="BMv2 JSON (default: %(default)s)"
    )
    parser.add_argument(
        "--rest-host",
        default="127.0.0.1",
        help="REST listen address; the default is loopback only, any other address serves "
        "the API to that network and needs --rest-cert/--rest-key, or --insecure "
        "(default: %(default)s)",
    )
    parser.add_argument(
        "--rest-port", type=int, default=8080, help="REST listen port (default: %(default)s)"
    )
    parser.add_argument(
        "--rest-threads",
        type=int,
        default=REST_THREADS,
        help="REST worker threads: requests served at once; more connections wait their "
        f"turn (1..{MAX_REST_THREADS}; default: %(default)s)",
    )


def add_measurement_options(parser: argparse.ArgumentParser) -> None:
    """The telemetry, budget and liveness options: what a scenario's `telemetry:` section and
    bench-scale take from the controller (src/mpsched/lab/scenario_telemetry.py)."""
    add_telemetry_options(parser)
    add_budget_options(parser)
    add_liveness_options(parser)


def add_telemetry_options(parser: argparse.ArgumentParser) -> None:
    """How often counters are read and the switches report and probe."""
    parser.add_argument(
        "--poll-interval",
        type=float,
        default=1.0,
        help="seconds between counter reads (default: %(default)s)",
    )
    parser.add_argument(
        "--report-interval-ms",
        type=float,
        default=REPORT_INTERVAL_US / 1000,
        help="at most one path report per path and interval from each egress edge; on a "
        "fabric a pair's paths report at its own rate instead, an active pair's every 250 ms, "
        "an idle pair's every second, never more often than this (docs/fabric.md, 'Report "
        "intervals'; default: %(default)s)",
    )
    parser.add_argument(
        "--rtt-interval-ms",
        type=float,
        default=RTT_REPORT_INTERVAL_US / 1000,
        help="at most one RTT report per path and interval from each ingress edge; on a "
        "fabric the pair's rate as for --report-interval-ms (default: %(default)s)",
    )
    parser.add_argument(
        "--probe-interval-ms",
        type=float,
        default=PROBE_INTERVAL_S * 1000,
        help="interval of the probes per path and switch (through the probe port, else as "
        "PacketOuts); 0 = no probes (default: %(default)s)",
    )
    parser.add_argument(
        "--idle-probe-interval-ms",
        type=float,
        default=IDLE_PROBE_INTERVAL_S * 1000,
        help="on a fabric, the probe interval of an idle pair of edges (no traffic beyond "
        "probes either way for 2 s; GET /pairs shows `probing`): its paths are probed this "
        "often, and their dead-after interval is as many of these intervals as "
        "--dead-after-ms is of --probe-interval-ms (1 s at the defaults), so a failed path "
        "of an idle pair is found within about a second, one of an active pair within "
        "--dead-after-ms as before; never shorter than --probe-interval-ms. 0 = every pair "
        "probed every --probe-interval-ms, as two edges always are (default: %(default)s)",
    )
    parser.add_argument(
        "--probe-max-pps",
        type=float,
        default=0,
        help="at most this many probes per second from one switch: where a switch has more "
        "(destination edge, path) pairs than the cap allows at --probe-interval-ms, its probe "
        "interval and --dead-after-ms stretch in proportion; 0 = no cap (default: "
        "%(default)s)",
    )
    parser.add_argument(
        "--report-max-pps",
        type=float,
        default=REPORT_MAX_PPS,
        help="at most this many path and RTT reports per second from one switch together: "
        "where a switch has more (peer edge, path) cells than the cap allows at "
        "--report-interval-ms and --rtt-interval-ms, both stretch in proportion (a fabric of "
        "many edges; docs/fabric-controller.md); 0 = no cap (default: %(default)s)",
    )
    parser.add_argument(
        "--report-batch-ms",
        type=float,
        default=REPORT_BATCH_US / 1000,
        help="the switches send the path and RTT reports of this long together, in one "
        "P4Runtime DigestList (BMv2 counts whole ms); 0 = each report at once, on its own "
        "(default: %(default)s)",
    )


def add_budget_options(parser: argparse.ArgumentParser) -> None:
    """What all the switches together may send or return the controller per second (a large
    fabric's edges each get their share)."""
    parser.add_argument(
        "--report-budget-pps",
        type=float,
        default=REPORT_BUDGET_PPS,
        help="at most this many path and RTT reports per second from all the edge switches "
        "together: each edge's --report-max-pps falls to its share where that is lower (16 "
        "000 keeps 2000 for up to 8 edges, gives 250 to each of 64); 0 = no budget (default: "
        "%(default)s)",
    )
    parser.add_argument(
        "--probe-budget-pps",
        type=float,
        default=PROBE_BUDGET_PPS,
        help="at most this many probes per second from all the edge switches together: each "
        "edge's --probe-max-pps falls to its share where that is lower (8000 leaves 4 leaves "
        "and two edges at --probe-interval-ms, gives 125 to each of 64); 0 = no budget "
        "(default: %(default)s)",
    )
    parser.add_argument(
        "--counter-budget-cps",
        type=float,
        default=COUNTER_BUDGET_CPS,
        help="cells of the per-(peer edge, path) counters all the switches' reads may return "
        "per second together: each read returns every cell, (edges + 1) x (paths + 1) per "
        "counter, so on a large fabric the edges read them less often than --poll-interval "
        "(drops and port counters keep it); 0 = no budget (default: %(default)s)",
    )


def add_liveness_options(parser: argparse.ArgumentParser) -> None:
    """Which probes are sent, and when a silent path is dead."""
    parser.add_argument(
        "--probe-every-path",
        action="store_true",
        help="send a probe onto every path every interval; by default the controller pauses "
        "a switch's probes onto a path while its own traffic there keeps the far edge "
        "measured (and only where the path's RTT leaves the far edge no chance to go silent "
        "for --dead-after-ms). Either way the switch drops a probe onto a path it placed "
        "traffic on since its previous probe there (probe_gate.p4)",
    )
    parser.add_argument(
        "--dead-after-ms",
        type=float,
        default=DEAD_AFTER_US / 1000,
        help="a path silent this long is dead and its flows fail over (default: %(default)s)",
    )


def add_state_options(parser: argparse.ArgumentParser) -> None:
    """The REST write token and the operator's intent on disk."""
    parser.add_argument(
        "--token-file",
        default=None,
        help="REST write token: read from this file, or created there (mode 0600) with a "
        "random token; every PUT needs 'Authorization: Bearer <token>'; a file owned by "
        "another user than this one or root is refused, the run directory kept mode 0700 "
        "(default: $MPSCHED_RUN_DIR or /run/mpsched, file token-<rest port>)",
    )
    state = parser.add_mutually_exclusive_group()
    state.add_argument(
        "--state",
        default=None,
        metavar="FILE",
        help="the operator's intent (classes, policies, params, admin states, weights): "
        "restored from FILE at start, before the switches are programmed, and saved there "
        "atomically after every acknowledged REST write; a file that cannot be used stops "
        "the controller (exit 2) and is left as it is, as does one owned by another user than "
        "this one or root; '' = --no-state "
        "(default: $MPSCHED_RUN_DIR or /run/mpsched, file state-<rest port>.json)",
    )
    state.add_argument(
        "--no-state",
        action="store_true",
        help="keep the intent in memory only: a restart starts from the command line's values",
    )


def add_control_options(parser: argparse.ArgumentParser) -> None:
    """The default policy, the control loop, mastership and logging."""
    parser.add_argument(
        "--policy",
        default=DEFAULT_POLICY,
        choices=sorted(REGISTRY),
        help="the default class's policy at start (default: %(default)s)",
    )
    parser.add_argument(
        "--control-period-ms",
        type=float,
        default=CONTROL_PERIOD_MS,
        help="control loop period: telemetry -> policy -> table writes "
        f"({MIN_CONTROL_PERIOD_MS:g}..{MAX_CONTROL_PERIOD_MS:g}; default: %(default)s)",
    )
    add_step_budget_option(parser)
    parser.add_argument(
        "--election-id",
        type=int,
        default=1,
        help="P4Runtime election id (1..2^63): of two controllers on the same switches the "
        "higher one is primary and writes, the other a backup that serves REST reads and takes "
        "over when the primary goes away (default: %(default)s)",
    )
    parser.add_argument(
        "--peer",
        default=None,
        help="the other controller's REST URL, named in the 409 answer to a write sent to "
        "the backup (optional)",
    )
    parser.add_argument(
        "--malloc-trim-s",
        type=float,
        default=memtrim.MALLOC_TRIM_S,
        help="every this many seconds give the memory malloc keeps free back to the system "
        "(glibc's malloc_trim, src/mpsched/controller/runtime/memtrim.py); "
        "0: never (default: %(default)s)",
    )
    parser.add_argument(
        "--malloc-arenas",
        type=int,
        default=memarenas.MALLOC_ARENAS,
        help="at most this many malloc arenas for the controller's threads (glibc's "
        "M_ARENA_MAX, src/mpsched/controller/runtime/memarenas.py: fewer arenas keep less free "
        "memory resident); "
        "0: glibc's default, 8 per core (default: %(default)s)",
    )
    parser.add_argument(
        "--gc-freeze-min-paths",
        type=int,
        default=gcfreeze.FREEZE_MIN_PATHS,
        help="once this many paths have estimates, freeze the long-lived state out of the "
        "garbage collector's full collections, and again each time they grew by half, "
        "and from then on collect in full ten times less often "
        "(src/mpsched/controller/runtime/gcfreeze.py: "
        "short and rare pauses on a large fabric); 0: never (default: "
        "%(default)s)",
    )
    parser.add_argument(
        "--log-level", default="INFO", choices=["DEBUG", "INFO", "WARNING", "ERROR"]
    )

def add_step_budget_option(parser: argparse.ArgumentParser) -> None:
    """How much of each control period a fabric's pair steps may take at start, and the CPU
    budget that lowers it (the controller's and bench-scale's): the start values of the
    parameters `step_budget_pct` and `cpu_budget_pct`."""
    parser.add_argument(
        "--step-budget-pct",
        type=float,
        default=STEP_BUDGET * 100,
        help="the initial value of the parameter step_budget_pct, which PUT /params "
        '{"step_budget_pct": N} changes at run time (a saved intent replaces it at start): '
        "a control step steps a fabric's pairs whose inputs changed, most overdue first, "
        "until this share of the control period is spent; the rest wait for the next step. "
        "Once a fabric has more active pairs than fit, the loop uses this share of a core and "
        "a pair's refresh time grows: the trade-off between the controller's CPU and the "
        "freshness of the pairs' weights (docs/results/scale.md; 0 < pct <= 100, default: "
        "%(default)s)",
    )


    parser.add_argument(
        "--cpu-budget-pct",
        type=float,
        default=CPU_BUDGET_PCT,
        help="the initial value of the parameter cpu_budget_pct, which PUT /params changes "
        "at run time (a saved intent replaces it at start): the controller process's CPU, in "
        "%% of one core, that its control steps keep within, by spending less than "
        "--step-budget-pct of a period on a fabric's pairs while the process is over it, "
        f"down to {MIN_STEP_SHARE * 100:g} %%, at the price of the pairs' refresh time "
        "(src/mpsched/controller/runtime/governor.py, "
        "docs/results/scale.md; 0: no budget; default: %(default)s)",
    )


def cpu_budget_pct(args: argparse.Namespace) -> float | None:
    """`--cpu-budget-pct`, checked (0: None, no budget); ValueError naming the option."""
    pct: float = args.cpu_budget_pct
    if pct == 0:
        return None
    if not 0 < pct <= MAX_CPU_BUDGET_PCT:
        raise ValueError(
            f"--cpu-budget-pct: must be 0 (no budget) or > 0 and <= {MAX_CPU_BUDGET_PCT:g}, "
            f"got {pct}")
    return pct


def step_budget_pct(args: argparse.Namespace) -> float:
    """`--step-budget-pct`, checked (0 < pct <= 100, as PUT /params); ValueError naming the
    option."""
    pct: float = args.step_budget_pct
    if not 0 < pct <= MAX_STEP_BUDGET_PCT:
        raise ValueError(
            f"--step-budget-pct: must be > 0 and <= {MAX_STEP_BUDGET_PCT:g}, got {pct}")
    return pct


def telemetry_config(args: argparse.Namespace) -> TelemetryConfig:
    """The data plane's telemetry settings from the command line; errors name the option."""
    for option in ("report_interval_ms", "rtt_interval_ms", "dead_after_ms"):
        value = getattr(args, option)
        if not value > 0 or round(value * 1000) < 1:
            raise ValueError(f"--{option.replace('_', '-')}: must be >= 0.001, got {value}")
    for option in ("probe_interval_ms", "report_batch_ms", "probe_max_pps", "report_max_pps",
                   "report_budget_pps", "probe_budget_pps", "idle_probe_interval_ms"):
        value = getattr(args, option)
        if not value >= 0:
            raise ValueError(f"--{option.replace('_', '-')}: must be >= 0, got {value}")
    return TelemetryConfig(
        report_interval_us=round(args.report_interval_ms * 1000),
        rtt_interval_us=round(args.rtt_interval_ms * 1000),
        probe_interval_s=args.probe_interval_ms / 1000 if args.probe_interval_ms else None,
        dead_after_us=round(args.dead_after_ms * 1000),
        report_batch_us=round(args.report_batch_ms * 1000),
        probe_idle_only=not args.probe_every_path,
        probe_max_pps=args.probe_max_pps or None,
        report_max_pps=args.report_max_pps or None,
        report_budget_pps=args.report_budget_pps or None,
        probe_budget_pps=args.probe_budget_pps or None,
        idle_probe_interval_s=(args.idle_probe_interval_ms / 1000
                               if args.idle_probe_interval_ms else None),
    )
