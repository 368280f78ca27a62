"""Which pairs a control step must visit: those whose inputs changed since their last step.

A fabric of E edges has E · (E - 1) pairs (controller/routes.py), and a step over every one
of them every control period costs the controller a core from a few dozen edges on
(docs/results/scale.md). A pair's step is a function of its view (its paths' estimates,
controller/telemetry/intake.py), of the scheduler's configuration (classes, policies,
parameters, administrative states) and of the routing, and, for a policy whose decision
repeats on equal inputs (`Policy.repeats`), of nothing else. So a pair is due when

- it has not been stepped yet, or its policy does not repeat;
- its direction was handed a report or an RTT sample since its last step (`inputs`);
- the configuration or the routing changed (`context`: whatever identifies them);
- its view changes with time alone (`until`, `PathEstimator.changes_at`): a path's liveness
  verdict flips when no report came for `dead_after_s`, its srtt, rttvar and bytes in flight
  go stale after `stale_after_s` and then age towards their priors, read every
  AGE_STEP_S while they do.

Otherwise its step would decide what it decided last time, and is skipped.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass

# How often an aging estimate (srtt, rttvar: exp(-t / age_tau_s), 2 s by default) is read
# again while nothing else changes: it moves by at most 1 - e^-0.1, about 10 % of what is
# left of its way to the prior, between two steps.
AGE_STEP_S = 0.2


@dataclass(frozen=True)
class Stepped:
    """What a pair's last step saw."""

    inputs: int  # the count of its direction's inputs then (TelemetryIntake.unit_inputs)
    context: Hashable  # the configuration and routing then
    until: float  # when its view changes with time alone (math.inf: not without input)


def is_due(last: Stepped | None, inputs: int, context: Hashable, now: float,
           repeats: bool = True) -> bool:
    """Whether a pair whose last step saw `last` must be stepped at `now`."""
    return (
        last is None
        or not repeats
        or last.inputs != inputs
        or last.context != context
        or now >= last.until
    )
