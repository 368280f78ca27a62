"""The data plane's telemetry export and liveness settings, and when a path needs probes.

`TelemetryConfig` is installed per path on every switch: how often the edges export path and
RTT reports, how they batch them, how often the agents probe, and after how long a silent path
counts as dead (failover.p4). `sender_busy` reads from two consecutive path reports whether the
sender's own traffic keeps a path measured; `probe_needed` decides from that whether a switch
may pause its probes onto the path (probe_gate.p4) without risking a false death.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from mpsched.p4rt.backlog import PACKET_OUT_BACKLOG

# Default per-path report interval of the egress edge's path_report_t digests.
REPORT_INTERVAL_US = 10_000
# Default per-path interval of the ingress edge's rtt_report_t digests.
RTT_REPORT_INTERVAL_US = 10_000
# Path liveness: probes per path and switch every PROBE_INTERVAL_S; a path
# from which nothing tagged arrived for DEAD_AFTER_US (5 probe intervals) is
# dead and the edge switch fails its weighted traffic over (failover.p4).
PROBE_INTERVAL_S = 0.010
DEAD_AFTER_US = 50_000
# A fabric's pair of edges without traffic for IDLE_AFTER_S is idle: its paths are probed
# every IDLE_PROBE_INTERVAL_S only, and their dead_after stretches in proportion (5 of these
# intervals, 1 s: an idle pair's failed path is found within about a second;
# docs/fabric-dataplane.md, "Liveness"). 200 ms is close to the 256 ms at which BMv2
# implementations of HULA (Katta et al., "HULA: Scalable Load Balancing Using Programmable
# Data Planes", SOSR 2016) probe, keeps
# each idle path reported 5 times per the estimators' 1 s dead_after_s (EstimatorSettings:
# a lost probe does not make it look dead) and probes often enough for the failure
# inference (src/mpsched/controller/fabric/failures.py: at least twice per settle time); and it is
# 20 times fewer probes than every 10 ms.
IDLE_PROBE_INTERVAL_S = 0.200
IDLE_AFTER_S = 2.0
# Path and RTT reports are batched by the switch: one DigestList per REPORT_BATCH_US carries
# every report of that time (P4Runtime DigestEntry max_timeout_ns; BMv2 counts whole ms), so
# the controller handles (and acknowledges) one stream message per switch and interval instead
# of one per path and report. A report waits at most this long; 0 sends each on its own.
REPORT_BATCH_US = 5_000
REPORT_BATCH_MAX = 64  # reports per list at most (a full list goes at once)
# A path carries its sender's traffic ("busy") when, between two reports of its far edge, the
# sender tagged at least this many packets more than its probes account for (one per probe
# interval, plus one): then the traffic itself keeps the far edge's liveness and feedback
# fresh, and the sender's probes onto it may pause (probe_needed).
BUSY_EXTRA_PACKETS = 2
# Path and RTT reports per second one switch may export at most (together): a fabric's edge
# reports every (peer edge, path) cell, both kinds once per interval, and the controller's
# intake handles each in Python (docs/results/scale.md). 2000/s holds a two-edge switch of up
# to 10 paths, a 4 x 2 leaf-spine's edges (6 cells) and fabric-wan.yaml's (9) at the default
# 10 ms; a switch with more cells reports each less often (`for_targets`).
REPORT_MAX_PPS = 2000.0
# The reports of every edge together a controller takes per second by default: each edge's
# cap is the smaller of REPORT_MAX_PPS and this budget's share (`for_fabric`), so fabrics of
# up to 8 edges keep REPORT_MAX_PPS each, and 16, 32 and 64 leaves get 1000, 500 and 250.
# One controller process handed over about 15 000 reports a second at 8 and 16 leaves, and
# 3 % of the 128 000 that 64 leaves sent under the per-switch cap alone
# (docs/results/scale.md).
REPORT_BUDGET_PPS = 16_000.0
# The probes of every switch together per second by default: each switch's probe cap is the
# smaller of probe_max_pps and this budget's share (`for_fabric`). A probe crosses three or
# more BMv2 switches at tens of us each, and the controller writes every one: 64 leaves of 4
# spines probing their 252 (destination, path) cells every 10 ms would be 1.6 million a
# second. 8000 leaves the lab's fabrics (4 leaves: 6 cells each, 600 a second) and two edges
# at their 10 ms, and gives each of 64 leaves 125 a second (each cell every 2 s).
PROBE_BUDGET_PPS = 8_000.0


@dataclass(frozen=True)
class TelemetryConfig:
    """The data plane's export and liveness settings, installed per path on every switch.

    report_interval_us: at most one path_report_t per path per interval (egress edge).
    rtt_interval_us: at most one rtt_report_t per path per interval (ingress edge).
    probe_interval_s: each agent's probe PacketOuts per path; None = no probes.
    dead_after_us: a path with nothing tagged from it for this long is dead (fails over).
    report_batch_us: path and RTT reports wait up to this long to travel together in one
      DigestList (0: each report in a list of its own, at once).
    probe_idle_only: probe a path only while the switch's own traffic does not keep it
      measured (probe_needed); False: every path every interval.
    probe_max_pps: at most this many probes per second from one switch (None: no cap). A
      fabric's edge probes every (destination edge, path): 4 leaves of 2 paths each probe 6,
      and every probe crosses three switches (docs/fabric-controller.md). `for_targets`
      gives a switch's own settings under the cap.
    report_max_pps: at most this many path and RTT reports per second from one switch
      together (None: no cap). An edge of a fabric exports both per (peer edge, path) cell;
      `for_targets` stretches a switch's report_interval_us and rtt_interval_us in proportion
      until its cells' reports stay within the cap.
    report_budget_pps: at most this many reports per second from all the edges together
      (None: no budget); `for_fabric` lowers report_max_pps to each edge's share of it.
    probe_budget_pps: at most this many probes per second from all the edges together
      (None: no budget); `for_fabric` lowers probe_max_pps to each edge's share of it.
    idle_probe_interval_s: on a fabric, the probe interval of an idle pair of edges (no
      traffic beyond probes for idle_after_s; src/mpsched/controller/telemetry/regimes.py), never
      shorter
      than probe_interval_s (`idle_interval_s`); None: every pair is probed every
      probe_interval_s (always so with two edges).
    idle_after_s: a fabric's pair of edges is idle once no traffic beyond probes crossed it,
      either way, for this long.
    """

    report_interval_us: int = REPORT_INTERVAL_US
    rtt_interval_us: int = RTT_REPORT_INTERVAL_US
    probe_interval_s: float | None = PROBE_INTERVAL_S
    dead_after_us: int = DEAD_AFTER_US
    report_batch_us: int = REPORT_BATCH_US
    probe_idle_only: bool = True  # pause a path's probes while its own traffic is busy
    probe_max_pps: float | None = None  # per switch (None: no cap)
    report_max_pps: float | None = REPORT_MAX_PPS  # per switch, path and RTT reports together
    report_budget_pps: float | None = REPORT_BUDGET_PPS  # every edge together
    probe_budget_pps: float | None = PROBE_BUDGET_PPS  # every edge together
    idle_probe_interval_s: float | None = IDLE_PROBE_INTERVAL_S  # a fabric's idle pairs
    idle_after_s: float = IDLE_AFTER_S

    def __post_init__(self) -> None:
        for name in ("report_interval_us", "rtt_interval_us", "dead_after_us"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")
        batch: object = self.report_batch_us  # checked as given: a file may hold anything
        if isinstance(batch, bool) or not isinstance(batch, int) or batch < 0:
            raise ValueError(f"report_batch_us must be an integer >= 0, got {batch!r}")
        if self.probe_interval_s is not None and not self.probe_interval_s > 0:
            raise ValueError(f"probe_interval_s must be > 0, got {self.probe_interval_s!r}")
        if self.probe_max_pps is not None and not self.probe_max_pps > 0:
            raise ValueError(f"probe_max_pps must be > 0, got {self.probe_max_pps!r}")
        if self.report_max_pps is not None and not self.report_max_pps > 0:
            raise ValueError(f"report_max_pps must be > 0, got {self.report_max_pps!r}")
        for name in ("report_budget_pps", "probe_budget_pps", "idle_probe_interval_s"):
            value = getattr(self, name)
            if value is not None and not value > 0:
                raise ValueError(f"{name} must be > 0, got {value!r}")
        if not self.idle_after_s > 0:
            raise ValueError(f"idle_after_s must be > 0, got {self.idle_after_s!r}")

    @property
    def idle_interval_s(self) -> float | None:
        """The probe interval of an idle pair: idle_probe_interval_s, or probe_interval_s
        where that is longer (a probe cap's, `for_targets`); None: no probe regimes (no
        probes, or idle_probe_interval_s None)."""
        if self.probe_interval_s is None or self.idle_probe_interval_s is None:
            return None
        return max(self.probe_interval_s, self.idle_probe_interval_s)

    @property
    def idle_dead_after_us(self) -> int:
        """The dead_after of an idle pair's paths: as many idle intervals as dead_after_us is
        probe intervals (5 by default: 1 s at 200 ms), so that its slow probes never make a
        working path look dead; dead_after_us without probe regimes."""
        idle = self.idle_interval_s
        if idle is None or self.probe_interval_s is None:
            return self.dead_after_us
        return round(self.dead_after_us * idle / self.probe_interval_s)

    def regimes(self, fabric: bool) -> bool:
        """Whether pairs of edges are probed by their regime (active or idle): on a fabric
        with an idle interval (src/mpsched/controller/telemetry/regimes.py)."""
        return fabric and self.idle_interval_s is not None

    def packet_out_backlog(self, targets: int) -> int:
        """The PacketOuts a switch probing `targets` (destination edge, path) pairs may have
        waiting for its stream (src/mpsched/p4rt/backlog.py): a second of its probes at its rate
        (at most probe_max_pps, for_targets), and at least two whole rounds (each round is
        one burst of `targets` PacketOuts) and PACKET_OUT_BACKLOG."""
        own = self.for_targets(targets)
        if own.probe_interval_s is None or targets <= 0:
            return PACKET_OUT_BACKLOG
        per_second = math.ceil(targets / own.probe_interval_s)
        return max(PACKET_OUT_BACKLOG, 2 * targets, per_second)

    def for_fabric(self, edges: int) -> TelemetryConfig:
        """The settings of every switch of a network of `edges` edge switches: under
        report_budget_pps each edge's report cap is the smaller of report_max_pps and its
        share of the budget, and under probe_budget_pps its probe cap the smaller of
        probe_max_pps and its share of that (no cap at all becomes the share)."""
        if edges <= 0:
            return self
        return replace(
            self,
            report_max_pps=_capped(self.report_max_pps, self.report_budget_pps, edges),
            probe_max_pps=_capped(self.probe_max_pps, self.probe_budget_pps, edges),
        )

    def for_targets(self, targets: int) -> TelemetryConfig:
        """The settings of a switch that probes, and reports, `targets` (destination edge,
        path) pairs. Under `probe_max_pps` its probe interval stretches until targets /
        interval stays within the cap, and dead_after with it in proportion: a silent path is
        still dead after as many probe intervals as configured (5 by default), so that a
        capped probe rate never makes an idle path look dead. Under `report_max_pps` its
        report and RTT report intervals stretch by one factor until its reports per second
        stay within the cap (`report_stretch`)."""
        if targets <= 0:
            return self
        cfg = self
        scale = report_stretch(targets, self.report_interval_us, self.rtt_interval_us,
                               self.report_max_pps)
        if scale > 1:
            cfg = replace(cfg, report_interval_us=round(self.report_interval_us * scale),
                          rtt_interval_us=round(self.rtt_interval_us * scale))
        if self.probe_interval_s is None or self.probe_max_pps is None:
            return cfg
        interval = max(self.probe_interval_s, targets / self.probe_max_pps)
        if interval == self.probe_interval_s:
            return cfg
        scale = interval / self.probe_interval_s
        return replace(cfg, probe_interval_s=interval,
                       dead_after_us=round(self.dead_after_us * scale))


def _capped(cap: float | None, budget: float | None, edges: int) -> float | None:
    """One switch's cap under a budget of `edges` switches together."""
    if budget is None:
        return cap
    share = budget / edges
    return share if cap is None or cap > share else cap


def report_stretch(targets: int, report_us: int, rtt_us: int, max_pps: float | None) -> float:
    """By how much a switch exporting path and RTT reports for `targets` cells at `report_us`
    and `rtt_us` must stretch both intervals to send at most `max_pps` reports a second
    (1.0: it is within the cap, or there is none)."""
    if max_pps is None or targets <= 0:
        return 1.0
    wanted = targets * (1e6 / report_us + 1e6 / rtt_us)
    return max(1.0, wanted / max_pps)


def sender_busy(tagged: int, elapsed_s: float, probe_interval_s: float | None) -> bool:
    """Between two reports `elapsed_s` apart, the sender tagged `tagged` packets onto the path
    (the difference of the reports' sequence numbers): more than its probes can account for
    (one per probe interval, plus one) by BUSY_EXTRA_PACKETS."""
    if elapsed_s <= 0:
        return False
    probes = 0 if probe_interval_s is None else elapsed_s / probe_interval_s + 1
    return tagged >= probes + BUSY_EXTRA_PACKETS


def probe_needed(
    now: float, busy_at: float | None, rtt_min_ms: float | None, cfg: TelemetryConfig,
    report_interval_us: int | None = None,
) -> bool:
    """Whether a switch should probe a path now, given when its own traffic on the path was
    last seen busy at the far edge (`busy_at`, from the far edge's reports; the same clock
    as `now`), the path's least RTT, and the interval of those reports in force for the pair
    (`report_interval_us`; None: cfg's, as with two edges; on a fabric the pair's report
    rate, src/mpsched/controller/telemetry/report_rates.py).

    A probe is skipped only while that traffic keeps the far edge's liveness fresh, and only
    where, should the traffic stop right after, the far edge cannot go silent for dead_after
    before the probes resume: the last busy report arrives up to one batch after the last
    packet, the hold lasts one report interval, the next probe tick comes within one probe
    interval, the switch's probe gate skips that first probe (its traffic went onto the path
    since its previous probe there, probe_gate.p4), the next goes one probe interval later and
    takes at most the path's RTT to arrive, with one more probe interval of margin (a lost
    probe). Paths whose least RTT is unknown are always probed.

    The hold is one report interval plus a grace for a busy report late on its way (the
    stream, the agent's queue, a controller behind): what dead_after leaves spare beyond that
    worst silence, at most one more report interval. Without it every busy path whose report
    arrived a little late was probed (at 64 leaves, reports every 2 s with 2 s to spare: most
    of a leaf's probes, docs/results/scale.md); at two edges' defaults the spare is 1 ms.

    Reports further apart than dead_after allows (a fabric's active pair reporting every
    250 ms under a 50 ms dead_after) hold for what is safe only (`safe_hold_s`): the probes
    resume until the next busy report, and the switch's probe gate drops those the traffic
    made needless. Without that cap any report interval too long for dead_after sent every
    busy path's probes (reports every 50 ms under a 50 ms dead_after skipped none)."""
    if busy_at is None or rtt_min_ms is None or cfg.probe_interval_s is None:
        return True
    hold_s = (cfg.report_interval_us if report_interval_us is None else report_interval_us) / 1e6
    safe_s = safe_hold_s(cfg, rtt_min_ms)
    if safe_s <= 0:
        return True
    return now - busy_at > min(safe_s, 2 * hold_s)


def safe_hold_s(cfg: TelemetryConfig, rtt_min_ms: float) -> float:
    """How long after a busy report a switch may skip its probes onto the path without the
    far edge going silent for dead_after, should the traffic stop right after the report:
    dead_after less the report's batch, three probe intervals and the RTT (`probe_needed`;
    <= 0: not at all). `probe_needed`'s hold of one report interval plus the spare beyond it,
    at most one more interval, is hold + min(safe - hold, hold) = min(safe, 2 hold)."""
    probe_s = cfg.probe_interval_s or 0.0
    return (cfg.dead_after_us - cfg.report_batch_us) / 1e6 - 3 * probe_s - rtt_min_ms / 1000
