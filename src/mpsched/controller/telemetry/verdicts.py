"""The estimators' settings from the switches' telemetry (pure): when a silent path counts as
dead and its RTT as stale, and by which probe interval a path report tells its sender's
traffic from its probes (`sender_busy`).

A path goes silent for no longer than REPORTS_PER_VERDICT of the slowest switch's (stretched,
the report cap: TelemetryConfig.for_targets) report intervals, nor of an idle pair's probe
intervals (src/mpsched/controller/telemetry/regimes.py), before it counts as dead or its RTT as
stale: its
reports would otherwise come too seldom for it to stay alive (docs/fabric-controller.md, "The
report cap").

An estimator judges busy paths by its sender's own probe interval for the pair: stretched
under the probe cap (at 64 leaves a leaf probes each cell every 2 s, and judged by the
unstretched 10 ms no path carrying fewer than 200 packets per report was busy, so every one
was probed, docs/results/scale.md), and an idle pair's idle interval (light traffic on an
idle pair, judged by the fast interval, would never be busy, nor the pair active). An idle
pair also reports seldom (telemetry/report_rates.py): its estimators' verdicts wait for
REPORTS_PER_VERDICT of its report intervals too.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping

from mpsched.controller.telemetry.config import TelemetryConfig
from mpsched.controller.telemetry.report_rates import pair_intervals
from mpsched.controller.telemetry.windows import EstimatorSettings

REPORTS_PER_VERDICT = 4


def longest_intervals_s(configs: Iterable[TelemetryConfig]) -> tuple[float, float]:
    """The longest report and RTT report intervals of the switches' settings, in s."""
    cfgs = list(configs)
    report = max((c.report_interval_us for c in cfgs), default=0) / 1e6
    return report, max((c.rtt_interval_us for c in cfgs), default=0) / 1e6


def verdict_settings(estimators: EstimatorSettings, telemetry: TelemetryConfig,
                     switches: Mapping[str, TelemetryConfig], regimes: bool
                     ) -> EstimatorSettings:
    """Every estimator's settings given each switch's own telemetry (`switches`) and whether
    the pairs have probe regimes: dead_after_s and stale_after_s stretched to
    REPORTS_PER_VERDICT of the longest intervals (module docstring)."""
    report_s, rtt_s = longest_intervals_s(switches.values())
    idle_s = max((c.idle_interval_s or 0.0 for c in switches.values()),
                 default=0.0) if regimes else 0.0
    return dataclasses.replace(
        estimators, probe_interval_s=telemetry.probe_interval_s,
        dead_after_s=max(estimators.dead_after_s, REPORTS_PER_VERDICT * report_s,
                         REPORTS_PER_VERDICT * idle_s),
        stale_after_s=max(estimators.stale_after_s, REPORTS_PER_VERDICT * rtt_s),
    )


def sender_settings(settings: EstimatorSettings, switches: Mapping[str, TelemetryConfig],
                    regimes: bool = False) -> dict[tuple[str, bool], EstimatorSettings]:
    """Per (sender switch, its pair probed fast), the settings of the estimators of its
    traffic: `settings` with the sender's own probe interval for the pair, and with
    `regimes` an idle pair's dead_after_s and stale_after_s stretched to REPORTS_PER_VERDICT
    of its report intervals (module docstring)."""
    out = {}
    for name, own in switches.items():
        for fast in (True, False):
            cfg = dataclasses.replace(
                settings, probe_interval_s=own.probe_interval_s if fast else own.idle_interval_s)
            if regimes and not fast:
                idle = pair_intervals(own, True, slow=True)
                cfg = dataclasses.replace(
                    cfg,
                    dead_after_s=max(cfg.dead_after_s, REPORTS_PER_VERDICT * idle.report_us / 1e6),
                    stale_after_s=max(cfg.stale_after_s, REPORTS_PER_VERDICT * idle.rtt_us / 1e6))
            out[(name, fast)] = cfg
    return out
