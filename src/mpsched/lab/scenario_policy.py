"""The policy names a scenario may run and its `policy:` section (src/mpsched/lab/scenario.py,
scenarios/README.md)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from mpsched.validation import KeyCheck, int_in, one_of

# Baselines, then the papers' schedulers (src/mpsched/controller/*.py), the static weights of the
# scenario
# ("static": wcmp with `policy.weights`, else weights proportional to the configured rates),
# and each paper's scheduler under LM3 path activation ("<name>+lm3").
BASELINES = ("ecmp", "rr", "letflow", "minrtt", "wcmp")
PAPERS = ("llhd", "cmtla", "fdmvqs", "qos")
# mode ca (p4src/include/ca_select.p4): least live congestion cost, and the papers as its cost
CONGESTION_AWARE = ("ca", *(f"{p}-ca" for p in PAPERS))
# the context-adaptive choice among the others by the class's QoS target (QoS-MPTCP paper)
ADAPTIVE = ("adaptive",)
POLICIES = (
    *BASELINES, *PAPERS, *CONGESTION_AWARE, *ADAPTIVE, "static", *(f"{p}+lm3" for p in PAPERS)
)
# A scenario's default `compare` list: every policy ("static" only differs from wcmp when
# the scenario gives weights, so it is compared when asked for).
COMPARE = tuple(p for p in POLICIES if p != "static")
DEFAULT_FLOWLET_GAP_US = 0  # automatic (src/mpsched/controller/scheduling/placement.py auto_gap_us)
PACKET_MIX_PAPERS = ((44, 0.49), (576, 0.012), (628, 0.021), (1300, 0.017), (1500, 0.46))
BACKENDS = ("auto", "linkem", "netem")

@dataclass(frozen=True)
class Policy(KeyCheck):
    """`policy`: the scheduler of `mpsched run` (one of POLICIES), the weights of "static"
    (one per path) and the flowlet gap (0: automatic)."""

    name: Annotated[str, one_of(POLICIES)] = "ecmp"
    weights: tuple[Annotated[int, int_in(0, 255)], ...] = ()
    flowlet_gap_us: Annotated[int, int_in(0, 10_000_000)] = DEFAULT_FLOWLET_GAP_US
