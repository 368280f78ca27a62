"""The pure parts of `make bench-scale` (src/mpsched/bench/scale.py): the fabric of a size,
the figures of one size, the memory check, process accounting and the report lines (the
loop's phases among them).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from mpsched.controller.scheduling.loop import Phases
from mpsched.controller.southbound.agent_model import JobTime
from mpsched.lab import cpu
from mpsched.stats import percentile

SPINES = 4
# Figures printed as `scale_<name>_<leaves>=` with their targets (docs/targets.md), in order.
FIGURES = ("program_s", "loop_p50_ms", "loop_p99_ms", "refresh_p99_ms", "step_share_pct",
           "rss_mb", "cpu_pct", "writes_per_s", "reports_per_s", "entries_edge",
           "entries_transit", "probe_pps", "reroute_ms", "machine_idle_pct", "cpu_bound")
TARGETS = {"loop_p99_ms": 100.0, "rss_mb": 1000.0, "cpu_pct": 50.0, "reroute_ms": 1000.0}
PAGE_MB = 1 / 1024  # /proc's kB


def fabric_section(leaves: int, spines: int = SPINES) -> dict:
    """A scenario's `fabric:` section: `leaves` leaves, each linked to every spine."""
    return {"leaf_spine": {"leaves": leaves, "spines": spines, "hosts_per_leaf": 1,
                           "link": {"delay_ms": 1, "rate_mbps": 100}}}


def spine_links(leaves: int, spine: int) -> list[str]:
    """Every link of spine `spine` (1-based): its failure takes all of them down."""
    return [f"leaf{i}-spine{spine}" for i in range(1, leaves + 1)]


def pairs(leaves: int) -> int:
    """Ordered pairs of edges: the scheduler's units."""
    return leaves * (leaves - 1)


@dataclass
class SizeResult:
    """The figures of one fabric size (None: not measured)."""

    leaves: int
    program_s: float | None = None
    loop_p50_ms: float | None = None
    loop_p99_ms: float | None = None
    rss_mb: float | None = None
    cpu_pct: float | None = None
    writes_per_s: float | None = None
    entries_edge: int | None = None
    entries_transit: int | None = None
    probe_pps: float | None = None
    reroute_ms: float | None = None
    refresh_p99_ms: float | None = None  # a due pair's wait: input change to its step
    # the share of the period (%) a step could spend on the pairs at the end: step_budget_pct,
    # lowered under the CPU budget (src/mpsched/controller/runtime/governor.py)
    step_share_pct: float | None = None
    reports_per_s: float | None = None  # path and RTT reports handed over, all leaves
    # the feeder's thread making up reports (not in cpu_pct; the hand-over to the controller is)
    feeder_cpu_pct: float | None = None
    switch_rss_mb: float | None = None  # one BMv2 process, programmed
    # the machine's cores idle over the loop's measurement (% of all cores), and whether it
    # was the bottleneck then (1: idle < 10 % for over 20 % of the time, the lab's
    # `cpu_bound` rule, src/mpsched/lab/cpu.py; 0: not; None: unknown)
    machine_idle_pct: float | None = None
    cpu_bound: int | None = None

    def figure(self, name: str) -> float | int | None:
        return getattr(self, name)


def result_lines(results: list[SizeResult]) -> list[str]:
    """`scale_<figure>_<leaves>=<value>`, every figure of every size ("n/a": not measured)."""
    lines = []
    for r in results:
        for name in FIGURES:
            value = r.figure(name)
            text = "n/a" if value is None else (f"{value}" if isinstance(value, int)
                                                else f"{value:.1f}")
            lines.append(f"scale_{name}_{r.leaves}={text}")
    return lines


def misses(results: list[SizeResult]) -> list[str]:
    """The figures over their targets, as `<figure> at <leaves> leaves: <value> > <target>`."""
    out = []
    for r in results:
        for name, target in TARGETS.items():
            value = r.figure(name)
            if value is not None and value > target:
                out.append(f"{name} at {r.leaves} leaves: {value:.1f} > {target:g}")
    return out


def memory_fits(switches: int, per_switch_mb: float, controller_mb: float,
                available_mb: float, margin: float = 0.8) -> bool:
    """Whether `switches` BMv2 processes and the controller fit in `margin` of the memory
    available now."""
    return switches * per_switch_mb + controller_mb <= margin * available_mb


def meminfo_available_mb(text: str) -> float:
    """MemAvailable of /proc/meminfo's text, in MiB."""
    for line in text.splitlines():
        if line.startswith("MemAvailable:"):
            return int(line.split()[1]) * PAGE_MB
    raise ValueError("no MemAvailable in /proc/meminfo")


def status_rss_mb(text: str) -> float:
    """VmRSS of a /proc/<pid>/status text, in MiB."""
    for line in text.splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * PAGE_MB
    raise ValueError("no VmRSS (a kernel thread, or the process is gone)")


def rss_mb(pid: int | str = "self") -> float:
    return status_rss_mb(Path(f"/proc/{pid}/status").read_text())


def stat_cpu_s(text: str, ticks_per_s: float) -> float:
    """utime + stime of a /proc/<pid>/task/<tid>/stat text, in s (the fields after the
    command, whose name may hold spaces and parentheses)."""
    fields = text[text.rindex(")") + 2:].split()
    return (int(fields[11]) + int(fields[12])) / ticks_per_s


def thread_group(name: str) -> str:
    """The part of the controller a thread of that name belongs to (its name up to the
    first '-': agent, probe, p4rt; the loop is `control`)."""
    return name.split("-", 1)[0]


def cpu_pct(cpu_s: float, wall_s: float) -> float:
    """CPU seconds over wall seconds, as % of one core."""
    return 100.0 * cpu_s / wall_s if wall_s > 0 else 0.0


def _bar(value: float, top: float, width: int = 40) -> str:
    return "#" * max(1, round(width * value / top)) if top > 0 else ""


PLOTTED = tuple(f for f in FIGURES if f != "cpu_bound")  # a mark, not a quantity


def plot(results: list[SizeResult], figures: tuple[str, ...] = PLOTTED) -> list[str]:
    """A text plot per figure against the number of leaves (one bar per size, scaled to the
    largest), for docs/results/scale.md."""
    lines: list[str] = []
    for name in figures:
        values = [(r.leaves, r.figure(name)) for r in results]
        shown = [(n, float(v)) for n, v in values if v is not None]
        if not shown:
            continue
        top = max(v for _, v in shown)
        target = TARGETS.get(name)
        lines.append(f"{name}" + (f" (target <= {target:g})" if target else ""))
        for n, v in shown:
            lines.append(f"  {n:3d} leaves {v:10.1f} {_bar(v, top)}")
        lines.append("")
    return lines


def phases_line(phases: list[Phases]) -> str:
    """Where the writing steps' latency went, p50 / p99 of each phase (loop.py `Phases`)."""
    if not phases:
        return "loop phases: no writing step"
    parts = {
        "the lock": [p.locked_ms for p in phases],
        "the pairs' steps and entries": [p.submitted_ms - p.locked_ms for p in phases],
        "the writes until acknowledged": [p.acknowledged_ms - p.submitted_ms for p in phases],
    }
    return "loop phases, p50 / p99 ms: " + ", ".join(
        f"{name} {percentile(v, 50):.1f} / {percentile(v, 99):.1f}" for name, v in parts.items())


def jobs_line(times: list[JobTime]) -> str:
    """The agents' jobs (the steps' writes among them): their wait in the agent's queue and
    their run, p50 / p99 (southbound/agent_model.py `JobTime`)."""
    if not times:
        return "agents' jobs: none"
    waited = [t.waited_s * 1000 for t in times]
    ran = [t.ran_s * 1000 for t in times]
    return (f"agents' jobs ({len(times)}), p50 / p99 ms: waited in the queue "
            f"{percentile(waited, 50):.1f} / {percentile(waited, 99):.1f}, ran "
            f"{percentile(ran, 50):.1f} / {percentile(ran, 99):.1f}")


def machine_mark(res: SizeResult, samples: list[cpu.CpuSample]) -> None:
    """The machine's idle share over `samples` (/proc/stat, every 0.5 s) and the lab's
    `cpu_bound` rule on them, into `res`."""
    if len(samples) < 2:
        return
    res.machine_idle_pct = cpu.idle_pct(samples[0].cpu, samples[-1].cpu)
    bound = cpu.is_cpu_bound(cpu.idle_series(samples), cpu.CpuRule())
    res.cpu_bound = None if bound is None else int(bound)
