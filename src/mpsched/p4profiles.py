"""Compile-time profiles of the P4 program: the one definition of their names and defines.

p4src/include/defines.p4 lets a build leave optional stages out with ``-DNO_<STAGE>``; a
profile names one such set (``make p4 P4_PROFILE=<name>`` builds it into build/p4-<name>).
The controller's ``Pipeline`` tells the stages of a compiled program from its P4Info
(``mpsched.p4rt.pipeline.OPTIONAL_FEATURES``, keyed by the feature names below).

It also holds the edge count of the many-edge build (``SCALE_EDGES``: ``make p4-scale``, used
by ``make bench-scale``).

``python -m mpsched.p4profiles --make`` prints the Makefile's variables (``P4_PROFILES``, one
``P4_PROFILE_DEFS_<name>`` each, ``P4_SCALE_EDGES``) so that the Makefile can take them from
here. Stdlib only:
the Makefile runs it before the virtualenv's packages matter.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass

# Optional stages (features) and the define that leaves each out (p4src/include/defines.p4).
FEATURE_FLOW_ORDER = "flow_order"
FEATURE_MPTCP = "mptcp"
FEATURE_RTT_MONITOR = "rtt_monitor"
FEATURE_CONGESTION = "congestion"
FEATURE_DEFINES = {
    FEATURE_FLOW_ORDER: "NO_FLOW_ORDER",
    FEATURE_MPTCP: "NO_MPTCP",
    FEATURE_RTT_MONITOR: "NO_RTT_MONITOR",
    FEATURE_CONGESTION: "NO_CONGESTION",
}
ALL_FEATURES = frozenset(FEATURE_DEFINES)

FULL = "full"


@dataclass(frozen=True)
class Profile:
    """One compile-time profile: its name (as ``P4_PROFILE`` spells it), the features it leaves
    out, and the label the benchmarks print."""

    name: str
    omits: frozenset[str]
    label: str

    @property
    def defines(self) -> tuple[str, ...]:
        """p4c's ``-D`` flags, in the order of FEATURE_DEFINES."""
        return tuple(f"-D{d}" for f, d in FEATURE_DEFINES.items() if f in self.omits)

    @property
    def features(self) -> frozenset[str]:
        """The optional features the compiled program keeps."""
        return ALL_FEATURES - self.omits


PROFILES = (
    Profile(FULL, frozenset(), "full program"),
    Profile("no-flow-order", frozenset({FEATURE_FLOW_ORDER}),
            "full without per-flow order (-DNO_FLOW_ORDER)"),
    Profile("no-mptcp", frozenset({FEATURE_MPTCP}), "full without MPTCP (-DNO_MPTCP)"),
    Profile("no-rtt-monitor", frozenset({FEATURE_RTT_MONITOR}),
            "full without RTT monitor (-DNO_RTT_MONITOR)"),
    Profile("no-congestion", frozenset({FEATURE_CONGESTION}),
            "full without congestion feedback and mode CA (-DNO_CONGESTION)"),
    Profile("lean", ALL_FEATURES, "lean: without all four"),
)  # fmt: skip
BY_NAME = {p.name: p for p in PROFILES}
# The profiles built besides the full program (`make p4-profiles`), each into build/p4-<name>.
REDUCED = tuple(p for p in PROFILES if p.name != FULL)
# MAX_EDGES (p4src/include/sizes.p4) of the many-edge build: `make p4-scale` compiles it into
# build/p4-<n>edges, src/mpsched/bench/scale.py runs it on up to this many leaves.
SCALE_EDGES = 64


def profile(name: str) -> Profile:
    """The profile called ``name``; ``KeyError`` naming the known ones otherwise."""
    try:
        return BY_NAME[name]
    except KeyError:
        raise KeyError(f"P4 profile {name!r}: not one of {' '.join(BY_NAME)}") from None


def make_lines() -> list[str]:
    """Makefile variable definitions: the profile names, the reduced ones, the defines of each,
    the many-edge build's edges."""
    return [
        f"P4_PROFILES := {' '.join(p.name for p in PROFILES)}",
        f"P4_PROFILES_REDUCED := {' '.join(p.name for p in REDUCED)}",
        *(f"P4_PROFILE_DEFS_{p.name} := {' '.join(p.defines)}".rstrip() for p in PROFILES),
        f"P4_SCALE_EDGES := {SCALE_EDGES}",
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m mpsched.p4profiles",
        description="Compile-time profiles of the P4 program (p4src/include/defines.p4).",
    )
    parser.add_argument(
        "--make", action="store_true",
        help="print Makefile variable lines (P4_PROFILES, P4_PROFILES_REDUCED, "
        "P4_PROFILE_DEFS_<name>, P4_SCALE_EDGES) instead of the table",
    )
    args = parser.parse_args(argv)
    if args.make:
        lines = make_lines()
    else:
        lines = [f"{p.name:15s} {' '.join(p.defines) or '-':60s} {p.label}" for p in PROFILES]
    sys.stdout.write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
