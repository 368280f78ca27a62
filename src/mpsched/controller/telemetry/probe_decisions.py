"""The probe decisions of the telemetry intake (telemetry/intake.py): which probes a switch's
prober sends (an idle pair's every idle interval, an active pair's only on paths its own
traffic does not keep measured), how often its rounds come, and which paths it has
installed. Asked from the probers' threads without the controller's lock."""

from __future__ import annotations

from mpsched.controller.telemetry.config import IDLE_PROBE_INTERVAL_S
from mpsched.controller.telemetry.estimators import probe_needed
from mpsched.controller.telemetry.intake_base import IntakeBase


class ProbeDecisions(IntakeBase):
    """What the probers ask of the intake."""

    def probe_wanted(self, switch: str, dst_edge: int, path_id: int, now: float) -> bool:
        """Should `switch` probe its path `path_id` towards edge `dst_edge` now? An idle
        pair's path only once its last probe is an idle interval old (regimes.py); an active
        pair's not while its own traffic on the path keeps the far edge measured
        (`probe_needed`, with `probe_idle_only`, for the pair's report interval in force,
        telemetry/report_rates.py). Whether a fabric pair has the path id
        installed now is `probe_installed`'s, which the prober asks first
        (src/mpsched/controller/southbound/prober.py). Called from the probers' threads without the
        controller's lock (a race only costs a probe)."""
        cfg = self.switch_telemetry[switch]
        if self.regimes.enabled:
            idle_s, tick_s = cfg.idle_interval_s, self.probe_tick_s(switch)
            if idle_s is not None and tick_s is not None:
                due = self.regimes.idle_probe_wanted(switch, self.routes.edge_of[switch],
                                                     dst_edge, path_id, now, idle_s, tick_s)
                if due is not None:
                    return due
        if not cfg.probe_idle_only:
            return True
        where = self.towards(switch, dst_edge)
        est = self.estimators.get((path_id, where))
        if est is None:
            return True
        try:
            rtt_min = est.rtt_min_ms()
        except IndexError:  # the window emptied under us
            return True
        pair = self.routes.reports.intervals(cfg, self.routes.edge_of[switch], dst_edge)
        return probe_needed(now, est.busy_at, rtt_min, cfg, pair.report_us)

    def probe_tick_s(self, switch: str) -> float:
        """How long `switch`'s prober waits between rounds now: its probe interval while any
        pair of its edge is probed fast, else the idle interval (nothing is due more often;
        a pair that turns active pokes the prober, src/mpsched/controller/southbound/regime_ops.py).
        Called from the probers' threads without the controller's lock (the regimes' state is
        replaced whole, never changed in place)."""
        cfg = self.switch_telemetry[switch]
        fast_s, idle_s = cfg.probe_interval_s, cfg.idle_interval_s
        if fast_s is None:  # no probes: no prober asks
            return IDLE_PROBE_INTERVAL_S
        if not self.regimes.enabled or idle_s is None:
            return fast_s
        edge = self.routes.edge_of[switch]
        if any(edge in pair for pair in self.regimes.state.probed_fast):
            return fast_s
        return idle_s

    def probe_installed(self, switch: str, dst_edge: int, path_id: int) -> bool:
        """Whether `switch` has its path `path_id` towards edge `dst_edge` installed now: one
        of the pair's current paths or a watched one (routes.py); always with two edges."""
        if not self.routes.is_fabric:
            return True
        return (self.routes.edge_of[switch], dst_edge, path_id) in self.routes.installed_keys
