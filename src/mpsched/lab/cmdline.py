"""The command line of `mpsched run` and `mpsched compare` (src/mpsched/lab/experiment.py runs
it)."""

from __future__ import annotations

import argparse
import textwrap
from pathlib import Path

from mpsched.lab.programs import FULL, PLAIN_ECMP, PROGRAMS
from mpsched.lab.scenario import POLICIES
from mpsched.proc import cpulimit, labtls

EPILOG = """\
Run k of a scenario uses seed `seed + k` (link emulators, workloads), a fresh
testbed, and the policy's path weights. Output (OUT = --out):
  OUT/<scenario>/<policy>/run<k>/   raw reports, logs, the run's JSON result
  OUT/<scenario>/runs.csv           one row per run, one column per metric
  OUT/<scenario>/<policy>/run<k>/cpu.csv  machine CPU idle and per-process
                                    CPU shares over the run; a run whose idle
                                    stayed low is marked cpu_bound (a dagger in
                                    the tables, a warning at the end)
                                    (--cpu-limit P: the testbed gets P % of
                                    the cores, a cgroup quota; idle and the
                                    mark are against it, the tables say so)
  OUT/<scenario>/series.csv         time series (goodput, per-path rates)
  OUT/<scenario>/summary.md         mean +- 95 % CI per metric and policy
  OUT/<scenario>/plots/*.png        throughput over time, FCT by size, RTT and
                                    reordering CDFs
  OUT/summary.md                    every scenario of this call
  OUT/plots/fct_load_<s>_<bucket>.png  with --load-pct at several loads: FCT
                                    of each size bucket against the load
OUT/<scenario>/runs.csv is rewritten after every run. Ctrl-C stops the run
and tears everything down (exit code 130); the same command with --resume
then runs only what is missing (with more --runs or --policy, only the new
runs), and --resume --rerun-cpu-bound runs again the runs marked cpu_bound,
with their seeds. --resume also keeps the rows of OUT/<scenario>/runs.csv
whose run directory is gone, so a table committed elsewhere (docs/results/
<name>-runs.csv copied to OUT/<scenario>/runs.csv) is continued on a fresh
machine; those runs have their metrics only (no time series for the plots),
and rows this call does not run again stay in the table. A fabric scenario
(`fabric:`, docs/fabric.md) runs on the fabric testbed (a BMv2 switch per
fabric switch, one emulated link per fabric link; cpu.csv by switch and link
name, links.json by link name) with its own workload kinds (docs/fabric-lab.md,
"Workloads"); results per pair of edges in summary.md. With --program
plain-ecmp a fabric scenario runs on plain ECMP forwarding instead (policy
column plain-ecmp, OUT/<scenario>/plain-ecmp/run<k>/, drops.json per run): the
same command with --resume and the same OUT adds its rows to a table of the
policies' runs. Scenario file reference: scenarios/README.md.
"""


def build_parser(compare: bool = False) -> argparse.ArgumentParser:
    """`mpsched run`'s options, or with `compare` `mpsched compare`'s (`args.compare` tells)."""
    prog = "mpsched compare" if compare else "mpsched run"
    if compare:
        description = (
            "Run every given scenario under several policies (default: each scenario's "
            "`compare` list, by default every policy but `static`) and write one comparison table."
        )
    else:
        description = "Run a scenario N times with fixed seeds under one or more policies."
    p = argparse.ArgumentParser(
        prog=prog,
        description=textwrap.fill(description, 78),
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("scenarios", nargs="+", type=Path, help="scenario YAML file(s)")
    p.add_argument(
        "--policy",
        action="append",
        choices=POLICIES,
        help="policy to run (repeatable; default: "
        + ("the scenario's compare list" if compare else "the scenario's policy")
        + ")",
    )
    p.add_argument(
        "--program",
        choices=PROGRAMS,
        default=FULL,
        help=f"the switches' P4 program (default: %(default)s, the scheduler's, under the "
        f"controller); {PLAIN_ECMP}: a fabric scenario's switches run plain ECMP "
        f"(p4src/bench/plain_ecmp.p4, entries written once, no controller), the forwarding "
        f"reference of docs/fabric-lab.md; its runs' policy is {PLAIN_ECMP} (no --policy)",
    )
    p.add_argument("--runs", type=int, default=3, help="runs per policy (default: %(default)s)")
    p.add_argument("--seed", type=int, default=None, help="base seed (default: the scenario's)")
    p.add_argument("--duration", type=float, default=None, help="override duration_s (seconds)")
    p.add_argument(
        "--load-pct",
        type=float,
        action="append",
        default=None,
        help="run each scenario at this offered load (%% of the summed capacity) instead of its "
        "poisson workloads' load_pct (repeatable: a load sweep; the runs of load L are the "
        "scenario <name>-load<L>, plotted against each other in OUT/plots/fct_load_*.png)",
    )
    p.add_argument(
        "--backend",
        choices=("auto", "linkem", "netem"),
        default=None,
        help="link emulator (default: the scenario's, else auto = netem if the kernel has it)",
    )
    p.add_argument(
        "--out",
        type=Path,
        default=None,
        help="output directory (default: build/results/<time>)",
    )
    p.add_argument("--keep-captures", action="store_true", help="keep the pcap of every run")
    p.add_argument(
        "--resume",
        action="store_true",
        help="keep the runs OUT already holds with the same scenario name, policy, run number, "
        "seed and duration (a comparison cut short, or extended by more runs; their JSON, or "
        "a row of OUT/<scenario>/runs.csv) and run only the others; only meaningful with the "
        "same scenario files as before",
    )
    p.add_argument(
        "--rerun-cpu-bound",
        action="store_true",
        help="with --resume: run again, with the same seed, the kept runs marked cpu_bound",
    )
    cpulimit.add_option(p)
    labtls.add_option(p)
    p.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    p.set_defaults(compare=compare)
    return p
