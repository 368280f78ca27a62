"""`mpsched run` and `mpsched compare`: scenarios x policies x seeded runs → tables and plots.

Each run gets a fresh testbed and seed `scenario.seed + run`; raw reports go to
OUT/<scenario>/<policy>/run<k>/, per-run results to OUT/<scenario>/results.json
and .csv, and OUT/<scenario>/summary.md plus OUT/<scenario>/plots/*.png sum
them up (mean ± 95 % CI over the runs). With several policies the summary is a
side-by-side comparison; OUT/summary.md collects every scenario of the call. What --resume
keeps of an earlier call is src/mpsched/lab/resume.py's.
"""

from __future__ import annotations

import argparse
import dataclasses
import logging
import shutil
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from mpsched.lab.cmdline import build_parser
from mpsched.lab.programs import FULL, PLAIN_ECMP
from mpsched.lab.resume import ResumeError, carried_runs, kept_run, not_replaced, table_rows
from mpsched.lab.scenario import Scenario, ScenarioError, load
from mpsched.proc import cpulimit, prereqs
from mpsched.proc.cleanup import interrupt_on_signals
from mpsched.proc.layout import build_dir, p4_artifacts, plain_ecmp_artifacts
from mpsched.validation import cli_error

if TYPE_CHECKING:
    from mpsched.lab.report import RunResult

log = logging.getLogger("mpsched.lab.experiment")


def load_variants(sc: Scenario, loads: list[float] | None) -> list[Scenario]:
    """The scenario at each offered load: every `poisson` workload's `load_pct` (two edges'
    or a fabric's) set to it, the name `<name>-load<pct>`; the scenario itself without
    `loads`."""
    if not loads:
        return [sc]
    if not any(w.kind == "poisson" for w in (*sc.workload, *sc.fabric_workload)):
        raise ScenarioError("--load-pct", f"scenario {sc.name} has no poisson workload")
    out = []
    for pct in loads:
        if not 0.1 <= pct <= 100:
            raise ScenarioError("--load-pct", f"must be in 0.1..100, got {pct:g}")
        workload = tuple(
            dataclasses.replace(w, load_pct=pct) if w.kind == "poisson" else w for w in sc.workload
        )
        fabric_workload = tuple(
            dataclasses.replace(w, load_pct=pct) if w.kind == "poisson" else w
            for w in sc.fabric_workload
        )
        out.append(dataclasses.replace(sc, name=f"{sc.name}-load{pct:g}", workload=workload,
                                       fabric_workload=fabric_workload))
    return out


def _prerequisites(backend: str | None, program: str = FULL) -> list[str]:
    problems = prereqs.missing("root", "simple_switch_grpc", "mininet", "ethtool", "tcpdump")
    if backend != "netem":
        from mpsched.emu.netem import netem_available

        if backend == "linkem" or not netem_available():
            problems += prereqs.missing("linkem")
    art = plain_ecmp_artifacts() if program == PLAIN_ECMP else p4_artifacts()
    problems += [f"{p}: missing; run `make p4`" for p in art.missing()]
    return problems


def _progress(prefix: str, started: float, done: int, total: int):
    def report(message: str) -> None:
        elapsed = time.monotonic() - started
        eta = f", ETA {elapsed / done * (total - done):.0f}s" if done else ""
        print(f"{prefix} {message} (elapsed {elapsed:.0f}s{eta})", file=sys.stderr, flush=True)

    return report


def run_experiments(
    scenarios: list[Scenario],
    policies_for: dict[str, tuple[str, ...]],
    runs: int,
    out: Path,
    keep_captures: bool,
    resume: bool = False,
    rerun_cpu_bound: bool = False,
    p4rt_plaintext: bool = False,
) -> tuple[list, int]:
    """Run everything; returns (results, failed runs). Ctrl-C propagates after clean-up.
    With `resume`, a run OUT already holds (`kept_run`: its JSON, or a row of the scenario's
    runs.csv) is kept instead of run again, and the rows of that runs.csv this call does not
    replace stay in the results (`table_rows`). OUT/<scenario>/runs.csv is rewritten after
    every run, so a call cut short (Ctrl-C, the end of a session) leaves its table. With
    `p4rt_plaintext` the testbeds' switches serve P4Runtime without TLS
    (src/mpsched/topo/bed.py)."""
    from mpsched.lab import analysis, report
    from mpsched.lab.runner import Run, RunError

    plan = [
        (sc, policy, k) for sc in scenarios for policy in policies_for[sc.name] for k in range(runs)
    ]
    carried = {sc.name: carried_runs(out, sc) if resume else [] for sc in scenarios}
    results: list = []
    failed = 0
    started = time.monotonic()

    def save_table(sc: Scenario) -> None:
        mine = [r for r in results if r.scenario == sc.name]
        report.write_csv(out / sc.name, table_rows(mine, carried[sc.name]))

    for n, (sc, policy, k) in enumerate(plan):
        prefix = (
            f"[{n + 1}/{len(plan)}] {sc.name} · {policy} · run {k + 1}/{runs} (seed {sc.seed + k})"
        )
        progress = _progress(prefix, started, n, len(plan))
        run_dir = out / sc.name / policy / f"run{k}"
        kept = (
            kept_run(run_dir, sc, policy, k, rerun_cpu_bound, carried[sc.name])
            if resume
            else None
        )
        if kept is not None:
            results.append(kept)
            progress("kept from an earlier call (--resume)")
            continue
        progress("starting")
        if run_dir.exists():
            shutil.rmtree(run_dir)
        try:
            raw = Run(sc, policy, k, run_dir, p4rt_plaintext=p4rt_plaintext).execute(progress)
        except (RunError, RuntimeError, OSError) as exc:
            failed += 1
            progress(f"FAILED: {exc}")
            continue
        try:
            result = analysis.analyse(raw)
        except (ValueError, KeyError, TypeError) as exc:
            failed += 1
            log.exception("analysis of %s failed", run_dir)
            progress(f"FAILED: analysis: {exc}")
            continue
        report.write_run(run_dir, result)
        if not keep_captures:
            for capture in [raw.capture, *raw.captures.values()]:
                if capture:
                    capture.unlink(missing_ok=True)
        results.append(result)
        save_table(sc)
        m = result.metrics
        busy = " [CPU-bound]" if result.cpu_bound else ""
        limit = f" of the {result.cpu_limit_pct:g} % limit" if result.cpu_limit_pct else ""
        progress(
            f"done: goodput {m.get('goodput_mbps', float('nan')):.2f} Mbit/s "
            f"({m.get('goodput_frac', float('nan')):.2f} of capacity), "
            f"CPU idle {m.get('cpu_idle_pct', float('nan')):.0f} %{limit}{busy}"
        )
        for warning in result.warnings:
            progress(f"warning: {warning}")
    for sc in scenarios:
        results += not_replaced([r for r in results if r.scenario == sc.name], carried[sc.name])
    return results, failed


def write_reports(out: Path, scenarios: list[Scenario], results: list) -> list[Path]:
    from mpsched.lab import fabric_analysis, plots, report, tables

    written: list[Path] = []
    described = []
    for sc in scenarios:
        mine = [r for r in results if r.scenario == sc.name]
        if not mine:
            continue
        sdir = out / sc.name
        written += list(report.write_csv(sdir, mine))
        source = f"`{sc.source}`" if sc.source else sc.name
        pairs = fabric_analysis.pair_table(mine)
        pairs = f"\n### Per pair of edges\n\n{pairs}" if pairs else ""
        (sdir / "summary.md").write_text(
            f"# {sc.name}\n\n{sc.description} ({source})\n\n{tables.comparison_table(mine)}\n"
            + pairs
        )
        written.append(sdir / "summary.md")
        written += plots.write_plots(sdir / "plots", mine)
        described.append(f"- **{sc.name}**: {sc.description} ({source})")
    written += plots.write_load_plots(out / "plots", results)
    if described:
        (out / "summary.md").write_text(
            "# Results\n\n"
            + "\n".join(described)
            + "\n\n"
            + tables.comparison_table(results)
            + "\n"
        )
        written.append(out / "summary.md")
    return written


def cpu_warning(prog: str, results: list) -> str:
    """The closing warning naming every CPU-bound run; "" when there is none."""
    from mpsched.lab import tables

    bound = tables.cpu_bound_runs(results)
    if not bound:
        return ""
    lines = [
        f"{prog}: warning: {len(bound)} of {len(results)} run(s) were CPU-bound (the machine, "
        "not only the policy, limited them; see cpu.csv in each run's directory):"
    ]
    for r in bound:
        m = r.metrics
        lines.append(
            f"  {tables.run_label(r)}: idle < {r.cpu_rule.get('idle_below_pct', float('nan')):g} %"
            f" for {m.get('cpu_low_idle_pct', float('nan')):.0f} % of the measured time"
            f" (mean idle {m.get('cpu_idle_pct', float('nan')):.0f} %)"
        )
    return "\n".join(lines)


def _scenarios(args: argparse.Namespace) -> list[Scenario]:
    """The scenario files of the command line with its --seed, --duration and --load-pct."""
    scenarios = []
    for path in args.scenarios:
        sc = load(path, backend=args.backend, fabric=True)  # the fabric testbed runs it
        changes = {}
        if args.seed is not None:
            changes["seed"] = args.seed
        if args.duration is not None:
            if args.duration <= 0:
                raise ScenarioError("--duration", "must be > 0")
            changes["duration_s"] = args.duration
        scenarios += load_variants(dataclasses.replace(sc, **changes), args.load_pct)
    return scenarios


def _policies(args: argparse.Namespace, sc: Scenario) -> tuple[str, ...]:
    """The policies a scenario runs under: --policy, else its `compare` list (compare) or
    its policy (run); with --program plain-ecmp only that (it runs no scheduler)."""
    if args.program == PLAIN_ECMP:
        return (PLAIN_ECMP,)
    if args.policy:
        return tuple(args.policy)
    return sc.compare if args.compare else (sc.policy.name,)


def _program_problems(program: str, scenarios: list[Scenario], policies: list[str]
                      ) -> list[str]:
    if program == FULL:
        return []
    from mpsched.lab.plain_ecmp import program_problems  # the P4Runtime client: only here

    return program_problems(program, scenarios, policies)


def main(argv: list[str] | None = None, compare: bool = False) -> int:
    return execute(build_parser(compare).parse_args(argv))


def execute(args: argparse.Namespace) -> int:
    """Run what `args` (parsed by `build_parser`, also as `mpsched run|compare`) asks for."""
    compare = args.compare
    prog = "mpsched compare" if compare else "mpsched run"
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.WARNING,
        format="%(asctime)s %(name)s: %(message)s",
    )
    if args.runs < 1:
        print(f"{prog}: --runs must be >= 1", file=sys.stderr)
        return 2
    if args.rerun_cpu_bound and not args.resume:
        print(f"{prog}: --rerun-cpu-bound needs --resume", file=sys.stderr)
        return 2
    try:
        scenarios = _scenarios(args)
    except ScenarioError as exc:
        return cli_error(exc, prog)
    problems = _prerequisites(args.backend, args.program)
    if problems:
        print(f"{prog}: missing prerequisites:\n  " + "\n  ".join(problems), file=sys.stderr)
        return 2
    problems = _program_problems(args.program, scenarios, args.policy or [])
    if problems:
        print(f"{prog}: --program {args.program}:\n  " + "\n  ".join(problems),
              file=sys.stderr)
        return 2
    refused = cpulimit.confine(args.cpu_limit, prog)
    if refused is not None:
        return refused
    policies_for = {sc.name: _policies(args, sc) for sc in scenarios}
    out = args.out or build_dir() / "results" / time.strftime("%Y%m%d-%H%M%S")
    out.mkdir(parents=True, exist_ok=True)
    interrupt_on_signals()
    try:
        results, failed = run_experiments(
            scenarios, policies_for, args.runs, out, args.keep_captures,
            resume=args.resume, rerun_cpu_bound=args.rerun_cpu_bound,
            p4rt_plaintext=args.p4rt_plaintext,
        )
    except KeyboardInterrupt:
        print(
            f"{prog}: interrupted; the testbed was torn down. The runs done so far are in "
            f"{out}/<scenario>/runs.csv; the same command with --resume runs the rest",
            file=sys.stderr,
        )
        return 130
    except ResumeError as exc:
        print(f"{prog}: --resume: {exc}", file=sys.stderr)
        return 2
    return _report(prog, out, scenarios, results, failed)


def _report(
    prog: str, out: Path, scenarios: list[Scenario], results: list[RunResult], failed: int
) -> int:
    """Write the tables and plots, print the summary; the exit status of the call."""
    written = write_reports(out, scenarios, results)
    summary = out / "summary.md"
    if summary.exists():
        print(summary.read_text())
    print(f"{prog}: {len(results)} run(s) ok, {failed} failed; wrote:", file=sys.stderr)
    for path in written:
        print(f"  {path}", file=sys.stderr)
    warning = cpu_warning(prog, results)
    if warning:
        print(warning, file=sys.stderr)
    return 1 if failed or not results else 0


def main_compare(argv: list[str] | None = None) -> int:
    return main(argv, compare=True)


if __name__ == "__main__":
    sys.exit(main())
