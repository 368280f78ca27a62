"""Scheduling policies: the interface (`base`), the registry by name (`registry`) and the
implementations: the baselines (ecmp, rr, letflow, minrtt, wcmp), the least-congestion ``ca``
(`ca`: mode CA, the switch picks by live cost), the papers' LLHD, CMT-LA, FD-MVQS and QoS
score, LM3 path activation on top of any of them (`lm3`), and the context-adaptive choice among
all of them (`adaptive`, QoS-MPTCP).

Importing this package registers every implementation; use `make_policy` and `REGISTRY` from
here (or from `registry` after importing the package).
"""

from mpsched.controller.policies import (  # noqa: F401
    adaptive,
    baselines,
    ca,
    cmtla,
    fdmvqs,
    llhd,
    qos,
)
from mpsched.controller.policies.registry import REGISTRY, make_policy, policy_names, register

__all__ = ["REGISTRY", "make_policy", "policy_names", "register"]
