"""`mpsched fabric FILE` (`python -m mpsched.fabric FILE`): a fabric scenario's switches,
links and paths; with `--fail` or `--at`, the paths recomputed after failures.

Errors in the file print ``file: field: message`` and exit with status 2.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path as FilePath

from mpsched.fabric.model import Fabric
from mpsched.fabric.paths import (
    Failures,
    Pair,
    Path,
    Routing,
    bottleneck_mbps,
    path_delay_ms,
    reroute,
    route,
)
from mpsched.fabric.ports import next_hops, port_map
from mpsched.lab.scenario import ScenarioError, load
from mpsched.validation import InputError, cli_error

PROG = "mpsched fabric"
EPILOG = """\
FILE is a scenario file with a `fabric:` section (docs/fabric.md; examples in
scenarios/fabric/). Printed: the switches (role, edge id, hosts, subnets, ports),
the links (parameters of the forward direction a -> b at the time --at, schedules),
and per ordered pair of edges its paths: id, hops, one-way delay (summed over the
links crossed), bottleneck rate and switches. With --fail or --at the paths are
recomputed with those links or switches down and numbered from the intact
fabric's: a surviving path keeps its id, a new path takes the lowest free one.
`mpsched topo --scenario FILE` brings the fabric up, `mpsched run FILE` runs it
with its workload (docs/fabric-lab.md, "Lab" and "Workloads").
"""


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog=PROG,
        description="Show a fabric scenario's switches, links and per-pair paths.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("file", type=FilePath, metavar="FILE", help="scenario YAML file with fabric:")
    p.add_argument("--fail", action="append", default=[], metavar="NAME",
                   help="a link (e.g. leaf1-spine2) or switch taken down; repeatable")
    p.add_argument("--at", type=float, default=None, metavar="SECONDS",
                   help="also take down the links whose schedules have them down at this time")
    p.add_argument("--next-hops", action="store_true",
                   help="print each switch's (source edge, destination edge, path id) -> port")
    return p


def _rate(value: float | None) -> str:
    return "-" if value is None else f"{value:g}"


def _rows(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    return ["  " + "  ".join(str(c).ljust(w) for c, w in zip(r, widths, strict=True)).rstrip()
            for r in [header, *rows]]


def describe(fabric: Fabric, t: float = 0.0) -> list[str]:
    """The switches and the links, as table lines."""
    ports = port_map(fabric)
    switches = []
    for s in fabric.switches:
        where = [f"host{k}:{k}" for k in ports[s.name].hosts]
        where += [f"{n}:{p}" for n, p in ports[s.name].neighbours.items()]
        switches.append((s.name, s.role, str(s.edge_id or "-"), str(s.hosts or "-"),
                         ",".join(s.subnets) or "-", " ".join(where)))
    links = []
    for link in fabric.links:
        fwd = link.params(link.a, t)
        events = len(link.segment.forward_events) + len(link.segment.reverse_events)
        links.append((link.name, link.a, link.b, _rate(fwd.rate_mbps), f"{fwd.delay_ms:g}",
                      f"{100 * fwd.mean_loss():g}", str(fwd.queue_packets),
                      "up" if link.up_at(t) else "down", str(events or "-")))
    return [
        "switches:",
        *_rows(("name", "role", "edge", "hosts", "subnets", "ports (neighbour:port)"), switches),
        "links (forward = a -> b):",
        *_rows(("name", "a", "b", "Mbit/s", "delay_ms", "loss_%", "queue", "state", "events"),
               links),
    ]


def path_lines(fabric: Fabric, table: Mapping[Pair, Mapping[int, Path]],
               baseline: Mapping[Pair, Mapping[int, Path]] | None = None,
               t: float = 0.0) -> list[str]:
    """Per ordered pair its numbered paths; against `baseline`, new paths are marked and the
    ids that lost their path are listed."""
    rows = []
    for (src, dst), paths in sorted(table.items()):
        pair = f"{fabric.edge(src).name}->{fabric.edge(dst).name}"
        for pid, path in paths.items():
            note = "" if baseline is None or baseline[(src, dst)].get(pid) == path else "new"
            rows.append((pair, str(pid), str(path.hops), f"{path_delay_ms(fabric, path, t):g}",
                         _rate(bottleneck_mbps(fabric, path, t)), " ".join(path.switches), note))
        for pid, path in (baseline or {}).get((src, dst), {}).items():
            if path not in paths.values():
                rows.append((pair, str(pid), "-", "-", "-", " ".join(path.switches), "down"))
        if not paths:
            rows.append((pair, "-", "-", "-", "-", "no path", ""))
    return _rows(("pair", "id", "hops", "delay_ms", "Mbit/s", "switches", ""), rows)


def hop_lines(fabric: Fabric, table: Mapping[Pair, Mapping[int, Path]]) -> list[str]:
    rows = [(switch, f"{src}->{dst}", str(pid), str(port))
            for switch, entries in next_hops(fabric, table).items()
            for (src, dst, pid), port in entries.items()]
    return _rows(("switch", "edges", "path", "port"), rows)


def report(fabric: Fabric, name: str, fail: Sequence[str] = (), at: float | None = None,
           hops: bool = False) -> list[str]:
    """The command's output lines."""
    t = at or 0.0
    routing = route(fabric)
    pairs = len(fabric.pairs())
    lines = [f"{name}: {fabric.kind} fabric, {len(fabric.switches)} switches, "
             f"{len(fabric.links)} links, {len(fabric.edges)} edges, {pairs} ordered pairs, "
             f"up to {fabric.paths_per_pair} paths each", *describe(fabric, t),
             "paths of the intact fabric:", *path_lines(fabric, routing.current)]
    current: Routing = routing
    if fail or at is not None:
        failures = Failures.at(fabric, at, fail)
        down = sorted(failures.links | failures.switches)
        current = reroute(fabric, routing, failures)
        lines += [f"paths with {', '.join(down) or 'nothing'} down"
                  + (f" (at {t:g} s)" if at is not None else "") + ":",
                  *path_lines(fabric, current.current, routing.baseline, t)]
    if hops:
        lines += ["next hops:", *hop_lines(fabric, current.current)]
    return lines


def execute(args: argparse.Namespace) -> int:
    try:
        scenario = load(args.file, fabric=True)
        fabric = scenario.fabric
        if fabric is None:
            raise ScenarioError("fabric", "missing: this scenario has two edge switches "
                                "joined by paths, not a fabric", str(args.file))
        unknown = [n for n in args.fail if n not in fabric.by_name | fabric.link_by_name]
        if unknown:
            raise InputError("--fail", f"no link or switch named {unknown[0]!r}")
    except InputError as exc:
        return cli_error(exc, PROG)
    print("\n".join(report(fabric, str(args.file), args.fail, args.at, args.next_hops)))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    return execute(build_parser().parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
