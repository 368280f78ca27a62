"""Failed links and switches of a fabric, inferred from its paths' liveness (pure).

Boolean network tomography (Duffield, "Simple network performance tomography", IMC 2003;
Kompella et al., "IP fault localization via risk modeling", NSDI 2005): the controller
observes whole paths, alive or dead (a pair's path is alive while its egress edge reports it,
src/mpsched/controller/telemetry/estimators.py), never a link; a link's state is what the paths
crossing
it have in common. Per direction of a link (a `Hop`: a path's liveness says its frames got
from its source to its destination, so it speaks for the links in the direction it crosses
them):

1. every hop of a live path works (it delivered);
2. a dead path's suspects are its hops that no live path vouches for; a dead path one of
   whose suspects is already held failed is explained and adds nothing;
3. a hop fails when it is a suspect of every unexplained dead path crossing it and the
   evidence singles it out: the intersection of those paths' suspects is that hop alone.
   Two hops that every dead path crosses together (a chain with no other path through it)
   stay ambiguous, and nothing is inferred of them;
4. a hop held failed stays failed until a live path crosses it again (its return is
   observed, never guessed: the controller keeps probing it, `watch_paths`).

A link is failed when either of its directions is (the routing's rule, docs/fabric.md,
"Numbering"), a switch when all its links are.

`watch_paths` chooses which paths cut by inferred failures stay installed, unweighted, only
to be probed, so that the return of their links is seen: per pair, each baseline path that
crosses an inferred failed link and is no current path, under its own id if the pair's
current paths leave it free, else under the lowest free id up to the program's `max_paths`
(ids above the pair's k: the program's spare ones); a path for which no id is free is not
watched.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from mpsched.fabric.model import Fabric
from mpsched.fabric.paths import Pair, Path

Hop = tuple[str, str]  # a link crossed in one direction: (from switch, to switch)


def path_hops(path: Path) -> frozenset[Hop]:
    """The hops of `path`, in the direction it crosses its links."""
    return frozenset(zip(path.switches, path.switches[1:], strict=False))


@dataclass(frozen=True)
class Observation:
    """One path's liveness: its hops and whether it is alive."""

    hops: frozenset[Hop]
    alive: bool


@dataclass(frozen=True)
class Inference:
    """The hops held failed, their links (either direction failed) and the switches all of
    whose links are failed."""

    hops: frozenset[Hop] = frozenset()
    links: frozenset[str] = frozenset()
    switches: frozenset[str] = frozenset()


def failed_hops(observations: Iterable[Observation], before: frozenset[Hop] = frozenset()
                ) -> frozenset[Hop]:
    """The hops failed now (the module's rule), given those held failed `before`."""
    observations = list(observations)
    good = {h for o in observations if o.alive for h in o.hops}
    kept = before - good
    suspects = [o.hops - good for o in observations if not o.alive]
    unexplained = [s for s in suspects if s and not s & kept]
    new = set()
    for hop in set().union(*unexplained):
        crossing = [s for s in unexplained if hop in s]
        if frozenset.intersection(*crossing) == {hop}:
            new.add(hop)
    return frozenset(kept | new)


def infer(fabric: Fabric, observations: Iterable[Observation],
          before: frozenset[Hop] = frozenset()) -> Inference:
    """`failed_hops`, with the links and switches they take down."""
    hops = failed_hops(observations, before)
    names = {frozenset(link.ends()): link.name for link in fabric.links}
    links = frozenset(names[frozenset(h)] for h in hops if frozenset(h) in names)
    switches = frozenset(
        sw.name for sw in fabric.switches
        if (own := [lk.name for lk in fabric.links if sw.name in lk.ends()])
        and set(own) <= links
    )
    return Inference(hops, links, switches)


def watch_paths(baseline: Mapping[Pair, Mapping[int, Path]],
                current: Mapping[Pair, Mapping[int, Path]],
                failed_links: frozenset[str], max_paths: int
                ) -> dict[Pair, dict[int, Path]]:
    """The paths to keep installed and probed while `failed_links` are held failed (the
    module's docstring): {pair: {id: path}}, pairs without any left out."""
    out: dict[Pair, dict[int, Path]] = {}
    for pair, paths in sorted(baseline.items()):
        now = current.get(pair, {})
        taken = set(now)
        watched: dict[int, Path] = {}
        for pid, path in sorted(paths.items()):
            if not failed_links & set(path.links) or path in now.values():
                continue
            free = [i for i in range(1, max_paths + 1) if i not in taken]
            if not free:
                break
            wid = pid if pid in free else free[0]
            watched[wid] = path
            taken.add(wid)
        if watched:
            out[pair] = watched
    return out


__all__ = ["Hop", "Inference", "Observation", "failed_hops", "infer", "path_hops",
           "watch_paths"]
