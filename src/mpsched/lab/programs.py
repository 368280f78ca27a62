"""The switches' programs a run may use (`mpsched run --program`): the names only, so that
the command line does not import the P4Runtime machinery (plain_ecmp.py)."""

from __future__ import annotations

FULL = "full"  # the scheduler's program (p4src/main.p4) under the controller
PLAIN_ECMP = "plain-ecmp"  # p4src/bench/plain_ecmp.p4, no controller; also its runs' policy
PROGRAMS = (FULL, PLAIN_ECMP)
