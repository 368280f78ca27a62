"""Where a fabric comparison's short flows lost their time, and what each policy did with the
links (docs/results/fabric.md, fabric-ca.md).

    python -m mpsched.lab.fabrictable OUT [--link NAME ...]

OUT is an `mpsched compare` output directory (run JSONs and each run's `links.json`, the link
emulators' counters: OUT/<scenario>/<policy>/run<k>/). Printed as Markdown, per scenario, one
row per policy sorted by the short flows' mean FCT, every flow < 100 kB pooled over the runs:

- flows, their mean FCT, how many took over TIMEOUT_S (they waited for at least one
  retransmission timeout: Linux waits 1 s for a lost SYN and at least 200 ms, doubling, for
  a lost tail), those flows' share of the summed FCT and the mean of the others (`waits`);
- the packets dropped of all the links carried (both directions: queue, loss, oversize),
  the link direction that dropped the largest share, and the packets dropped while a link
  was down (a schedule's failure: mostly the probes that watch its paths until it returns,
  docs/fabric.md "Numbering"), counted apart so that they do not pass for congestion;
- per `--link NAME` (e.g. the asymmetric fabric's slow leaf1-spine2): its share of dropped
  packets and its share of all bytes the links sent, both directions together.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mpsched import stats
from mpsched.lab.fct import load_results
from mpsched.lab.metrics import size_bucket
from mpsched.lab.report import RunResult

# A short flow that took longer than this has waited for a retransmission timeout.
TIMEOUT_S = 1.0
DROPS = ("drop_queue", "drop_loss", "drop_oversize")
DOWN = "drop_down"  # dropped while the link was down (counted apart)
# links.json's directions of link "a-b"
DIRECTIONS = {"ab": (0, 1), "ba": (1, 0)}


def waits(results: Sequence[RunResult], policy: str) -> tuple[int, float, int, float, float]:
    """`policy`'s flows < 100 kB pooled over its runs: (flows, mean FCT s, flows over
    TIMEOUT_S, their share of the summed FCT, mean FCT s of the others); NaN where none."""
    fcts = [t for r in results if r.policy == policy
            for size, t in r.fct if size_bucket(int(size)) == "lt100k"]
    slow = [t for t in fcts if t > TIMEOUT_S]
    rest = [t for t in fcts if t <= TIMEOUT_S]
    total = math.fsum(fcts)
    return (len(fcts), stats.mean(fcts), len(slow),
            math.fsum(slow) / total if total else math.nan, stats.mean(rest))


@dataclass
class LinkTotals:
    """Counters of every link direction ("leaf1->spine2"), summed over runs."""

    received: Counter[str] = field(default_factory=Counter)
    dropped: Counter[str] = field(default_factory=Counter)
    down: Counter[str] = field(default_factory=Counter)  # dropped while the link was down
    runs: int = 0
    sent_bytes: Counter[str] = field(default_factory=Counter)

    def add(self, links: Mapping[str, Mapping[str, Mapping[str, Any]]]) -> None:
        """One run's links.json. ValueError names a link whose name or counters are not
        those of a link emulator's report."""
        self.runs += 1
        for name, dirs in links.items():
            ends = name.split("-")
            if len(ends) != 2:
                raise ValueError(f"links.json: link name {name!r} is not 'a-b'")
            for key, counters in dirs.items():
                if key not in DIRECTIONS:
                    raise ValueError(f"links.json: {name}: direction {key!r} is not ab or ba")
                i, j = DIRECTIONS[key]
                d = f"{ends[i]}->{ends[j]}"
                try:
                    self.received[d] += int(counters["rx"])
                    self.dropped[d] += sum(int(counters.get(k, 0)) for k in DROPS)
                    self.down[d] += int(counters.get(DOWN, 0))
                    self.sent_bytes[d] += int(counters["tx_bytes"])
                except (KeyError, TypeError, ValueError) as exc:
                    raise ValueError(f"links.json: {name} {key}: {exc!r}") from None

    def drop_share(self, directions: Iterable[str] | None = None) -> float:
        keys = list(self.received) if directions is None else list(directions)
        rx = sum(self.received[d] for d in keys)
        return sum(self.dropped[d] for d in keys) / rx if rx else math.nan

    def worst(self) -> tuple[str, float] | None:
        shares = {d: self.drop_share([d]) for d in self.received if self.received[d]}
        return max(shares.items(), key=lambda kv: kv[1]) if shares else None

    def byte_share(self, directions: Iterable[str]) -> float:
        total = sum(self.sent_bytes.values())
        return sum(self.sent_bytes[d] for d in directions) / total if total else math.nan


def link_totals(out: Path) -> dict[tuple[str, str], LinkTotals]:
    """Per (scenario, policy), the links.json of its runs under `out` summed."""
    got: dict[tuple[str, str], LinkTotals] = {}
    for path in sorted(out.glob("**/links.json")):
        scenario, policy = path.parts[-4], path.parts[-3]
        got.setdefault((scenario, policy), LinkTotals()).add(json.loads(path.read_text()))
    return got


def _pct(x: float) -> str:
    return f"{100 * x:.1f} %" if math.isfinite(x) else "\u2013"


def table(results: Sequence[RunResult], links: Mapping[tuple[str, str], LinkTotals],
          named: Sequence[str] = ()) -> str:
    """The module doc's table for every scenario, as Markdown."""
    out = []
    for scenario in sorted({r.scenario for r in results}):
        runs = [r for r in results if r.scenario == scenario]
        policies = sorted({r.policy for r in runs}, key=lambda p: waits(runs, p)[1])
        head = ["policy", "short flows", "mean s", f"over {TIMEOUT_S:g} s",
                "their share of the summed FCT", "mean s of the others",
                "links: dropped", "most dropping link", "dropped while down, per run"]
        for name in named:
            head += [f"{name}: dropped", f"{name}: share of bytes"]
        out += [f"### {scenario}", "", "| " + " | ".join(head) + " |",
                "| --- |" + " ---: |" * (len(head) - 1)]
        for pol in policies:
            n, mean, slow, share, rest = waits(runs, pol)
            tot = links.get((scenario, pol))
            cells = [pol, str(n), f"{mean:.3f}", f"{slow} ({100 * slow / n:.0f} %)" if n else "0",
                     _pct(share), f"{rest:.3f}"]
            worst = tot.worst() if tot else None
            cells += [_pct(tot.drop_share()) if tot else "\u2013",
                      f"{worst[0]} {_pct(worst[1])}" if worst else "\u2013",
                      f"{sum(tot.down.values()) / tot.runs:.0f}" if tot else "\u2013"]
            for name in named:
                a, b = name.split("-", 1)
                both = [f"{a}->{b}", f"{b}->{a}"]
                cells += [_pct(tot.drop_share(both)) if tot else "\u2013",
                          _pct(tot.byte_share(both)) if tot else "\u2013"]
            out.append("| " + " | ".join(cells) + " |")
        out.append("")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m mpsched.lab.fabrictable", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("out", type=Path, help="an mpsched compare output directory")
    p.add_argument("--link", action="append", default=[], metavar="NAME",
                   help="a link (a-b) whose drops and share of bytes get columns (repeatable)")
    args = p.parse_args(argv)
    bad = [name for name in args.link if len(name.split("-")) != 2]
    if bad:
        p.error(f"--link {bad[0]!r}: a link is named a-b")
    try:
        if not args.out.is_dir():
            raise ValueError(f"{args.out}: not a directory")
        results = load_results(args.out)
        if not results:
            raise ValueError(f"{args.out}: holds no run results")
        links = link_totals(args.out)
    except (OSError, ValueError) as exc:
        print(f"fabrictable: {exc}", file=sys.stderr)
        return 2
    print(table(results, links, args.link))
    return 0


if __name__ == "__main__":
    sys.exit(main())
