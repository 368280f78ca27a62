"""src/mpsched/controller/telemetry/config.py: when the sender counts as busy, and where a probe is
needed."""

from __future__ import annotations

import pytest


def test_sender_busy_counts_packets_beyond_the_probes():
    from mpsched.controller.telemetry.config import BUSY_EXTRA_PACKETS, sender_busy

    # 10 ms between reports, probes every 10 ms: up to 2 probes; 2 more packets make it busy
    assert sender_busy(2 + BUSY_EXTRA_PACKETS, 0.010, 0.010)
    assert not sender_busy(3, 0.010, 0.010)
    assert not sender_busy(100, 0.0, 0.010)
    assert sender_busy(BUSY_EXTRA_PACKETS, 0.010, None)  # no probes at all


def test_probe_needed_only_where_the_far_edge_cannot_go_silent():
    """A probe is skipped while the sender's traffic was seen busy within the hold (one report
    interval and a grace), never longer than the far edge can stay without news: dead_after
    less the batch, three probe intervals and the RTT."""
    from mpsched.controller.telemetry.config import TelemetryConfig, probe_needed, safe_hold_s

    cfg = TelemetryConfig()  # reports every 10 ms, batched 5 ms, probes 10 ms, dead 50 ms
    assert not probe_needed(100.004, 100.0, 4.0, cfg)  # busy 4 ms ago, RTT 4 ms
    assert probe_needed(100.012, 100.0, 4.0, cfg)  # the hold (10 ms, 1 ms grace) is over
    assert probe_needed(100.004, None, 4.0, cfg)  # never busy
    assert probe_needed(100.004, 100.0, None, cfg)  # RTT unknown
    # 5 + 3 x 10 + RTT + the hold must stay within 50 ms (the third probe interval: the
    # switch's probe gate skips the first probe after its traffic stopped)
    assert safe_hold_s(cfg, 5.0) == pytest.approx(0.010)
    assert not probe_needed(100.0099, 100.0, 5.0, cfg)
    assert probe_needed(100.0101, 100.0, 5.0, cfg)
    assert not probe_needed(100.009, 100.0, 5.5, cfg)  # 9.5 ms: shorter than an interval
    assert probe_needed(100.0096, 100.0, 5.5, cfg)
    assert probe_needed(100.0001, 100.0, 15.0, cfg)  # nothing to spare: always probed
    slow = TelemetryConfig(dead_after_us=100_000)  # 5 + 30 + RTT + hold <= 100
    assert not probe_needed(100.004, 100.0, 55.5, slow)
    assert probe_needed(100.0096, 100.0, 55.5, slow)
    assert probe_needed(100.0001, 100.0, 65.0, slow)
    assert probe_needed(100.004, 100.0, 4.0, TelemetryConfig(probe_interval_s=None))


def test_a_pair_reporting_seldom_still_skips_what_is_safe():
    """The hold follows the report interval in force for the pair: a fabric's pair reporting
    every 250 ms under a 50 ms dead_after skips its busy paths' probes for what the far edge
    can bear after each busy report (11 ms at RTT 4 ms), not for 250 ms, and not never."""
    from mpsched.controller.telemetry.config import TelemetryConfig, probe_needed

    cfg = TelemetryConfig()
    assert not probe_needed(100.0105, 100.0, 4.0, cfg, report_interval_us=250_000)
    assert probe_needed(100.0115, 100.0, 4.0, cfg, report_interval_us=250_000)
    roomy = TelemetryConfig(dead_after_us=1_000_000)  # 961 ms safe: the hold is 2 intervals
    assert not probe_needed(100.49, 100.0, 4.0, roomy, report_interval_us=250_000)
    assert probe_needed(100.51, 100.0, 4.0, roomy, report_interval_us=250_000)
    assert probe_needed(100.021, 100.0, 4.0, roomy)  # cfg's own 10 ms: 20 ms


def test_a_late_busy_report_gets_the_spare_silence_as_grace():
    """The hold stretches by what dead_after leaves spare beyond the worst silence, at most
    one more report interval: a busy path whose report is late on its way is not probed, and
    the far edge still cannot go silent for dead_after."""
    from mpsched.controller.telemetry.config import TelemetryConfig, probe_needed

    cfg = TelemetryConfig()  # worst silence 5 + 10 + 30 + 4 = 49 ms of 50: 1 ms spare
    assert not probe_needed(100.0105, 100.0, 4.0, cfg)
    assert probe_needed(100.0115, 100.0, 4.0, cfg)
    # a 64-leaf edge (for_targets of 252 cells under 125 probes and 250 reports a second):
    # reports and probes every 2.016 s, dead after 10.08 s, so 2 s spare, capped at 2.016
    wide = TelemetryConfig(report_interval_us=2_016_000, rtt_interval_us=2_016_000,
                           probe_interval_s=2.016, dead_after_us=10_080_000)
    assert not probe_needed(103.5, 100.0, 20.0, wide)  # 1.5 s late: the grace holds
    assert probe_needed(104.1, 100.0, 20.0, wide)  # beyond 2.016 + 2.014 s: probe
    roomy = TelemetryConfig(dead_after_us=1_000_000)  # 951 ms spare, capped at one interval
    assert not probe_needed(100.019, 100.0, 4.0, roomy)
    assert probe_needed(100.021, 100.0, 4.0, roomy)


def test_the_probe_cap_stretches_interval_and_dead_after_in_proportion():
    """A switch with more (destination edge, path) pairs than the cap allows at the probe
    interval probes each less often, and judges a silent path dead after as many of its
    (longer) intervals as configured."""
    import pytest

    from mpsched.controller.telemetry.config import TelemetryConfig

    free = TelemetryConfig(report_max_pps=None)  # probes every 10 ms, dead after 50 ms, no cap
    assert free.for_targets(12) is free
    capped = TelemetryConfig(probe_max_pps=300)
    assert capped.for_targets(2) is capped  # 2 x 100/s stays under 300/s
    six = capped.for_targets(6)  # 600/s wanted: every 20 ms instead
    assert six.probe_interval_s == pytest.approx(0.020)
    assert six.dead_after_us == 100_000
    no_probes = TelemetryConfig(probe_interval_s=None, probe_max_pps=1)
    assert no_probes.for_targets(9) is no_probes
    with pytest.raises(ValueError, match="probe_max_pps must be > 0"):
        TelemetryConfig(probe_max_pps=0)


def test_packet_out_backlog_fits_a_second_of_probes_and_two_rounds():
    """A switch's PacketOut backlog (src/mpsched/p4rt/backlog.py): a second of its probes at its
    rate, capped by probe_max_pps, at least two rounds and PACKET_OUT_BACKLOG."""
    from mpsched.controller.telemetry.config import TelemetryConfig
    from mpsched.p4rt.backlog import PACKET_OUT_BACKLOG

    assert TelemetryConfig().packet_out_backlog(6) == 600  # 6 targets every 10 ms
    capped = TelemetryConfig(probe_max_pps=300.0)
    assert capped.packet_out_backlog(6) == 300  # the interval stretched to 20 ms
    assert capped.packet_out_backlog(252) == 504  # one burst of 252 at once, twice
    assert TelemetryConfig(probe_max_pps=10.0).packet_out_backlog(6) == PACKET_OUT_BACKLOG
    assert TelemetryConfig(probe_interval_s=None).packet_out_backlog(6) == PACKET_OUT_BACKLOG
    assert TelemetryConfig().packet_out_backlog(0) == PACKET_OUT_BACKLOG


def test_the_report_cap_stretches_both_report_intervals_by_one_factor():
    """A switch whose cells would send more path and RTT reports a second than the cap
    reports each less often, both kinds by the same factor; the default leaves a two-edge
    switch, a 4 x 2 leaf-spine's edges (6 cells) and a WAN's of 4 edges with 3 paths a pair
    (9 cells) as configured."""
    import pytest

    from mpsched.controller.telemetry.config import (
        REPORT_MAX_PPS,
        TelemetryConfig,
        report_stretch,
    )

    default = TelemetryConfig()
    assert default.report_max_pps == REPORT_MAX_PPS
    assert default.for_targets(2) is default  # two edges, 2 paths: 400 reports/s
    assert default.for_targets(6) is default  # 4 x 2 leaf-spine: 1200 reports/s
    assert default.for_targets(9) is default  # fabric-wan.yaml: 1800 reports/s
    # 64 leaves x 4 spines: 252 cells, 50 400 reports/s wanted at 10 ms: 25.2 x longer
    big = default.for_targets(252)
    assert big.report_interval_us == 252_000 and big.rtt_interval_us == 252_000
    assert big.probe_interval_s == default.probe_interval_s
    assert big.dead_after_us == default.dead_after_us  # the data plane's liveness: probes
    # different intervals stretch by one factor: 100/s + 50/s per cell, 10 cells, cap 300
    assert report_stretch(10, 10_000, 20_000, 300) == pytest.approx(5.0)
    assert report_stretch(10, 10_000, 20_000, None) == 1.0
    assert report_stretch(1, 10_000, 10_000, 300) == 1.0  # within the cap: never shorter
    both = TelemetryConfig(probe_max_pps=100).for_targets(252)  # both caps at once
    assert both.report_interval_us == 252_000
    assert both.probe_interval_s == pytest.approx(2.52)
    assert TelemetryConfig(report_max_pps=None).for_targets(252).report_interval_us == 10_000
    with pytest.raises(ValueError, match="report_max_pps must be > 0"):
        TelemetryConfig(report_max_pps=0)


def test_the_report_budget_of_all_the_edges():
    """Each edge's report cap is the smaller of report_max_pps and its share of the budget:
    up to 8 edges keep 2000 a second each, 16, 32 and 64 leaves get 1000, 500 and 250, and a
    64-leaf edge's cells are reported 8 times less often than under the per-switch cap."""
    import pytest

    from mpsched.controller.telemetry.config import (
        REPORT_BUDGET_PPS,
        REPORT_MAX_PPS,
        TelemetryConfig,
    )

    default = TelemetryConfig()
    assert default.report_budget_pps == REPORT_BUDGET_PPS
    for edges in (2, 4, 8):
        assert default.for_fabric(edges).report_max_pps == REPORT_MAX_PPS
    assert [default.for_fabric(n).report_max_pps for n in (16, 32, 64)] == [1000, 500, 250]
    assert default.for_fabric(64).for_targets(252).report_interval_us == 2_016_000
    assert default.for_targets(252).report_interval_us == 252_000  # the cap alone
    # no per-switch cap: the share is the cap; no budget: the settings as they are
    assert TelemetryConfig(report_max_pps=None).for_fabric(4).report_max_pps == 4000
    free = TelemetryConfig(report_budget_pps=None)
    assert free.for_fabric(64).report_max_pps == REPORT_MAX_PPS
    assert TelemetryConfig(report_max_pps=100).for_fabric(64).report_max_pps == 100
    with pytest.raises(ValueError, match="report_budget_pps must be > 0"):
        TelemetryConfig(report_budget_pps=0)


def test_the_probe_budget_of_all_the_edges():
    """Each switch's probe cap is the smaller of probe_max_pps and its share of the budget:
    the lab's fabrics and two edges keep their 10 ms, 64 leaves get 125 probes a second each,
    their 252 cells probed every 2 s and judged dead after 10 s (5 probe intervals)."""
    import pytest

    from mpsched.controller.telemetry.config import PROBE_BUDGET_PPS, TelemetryConfig

    default = TelemetryConfig()
    assert default.probe_budget_pps == PROBE_BUDGET_PPS
    assert default.for_fabric(2).for_targets(4).probe_interval_s == 0.010
    assert default.for_fabric(4).for_targets(6).probe_interval_s == 0.010
    leaf = default.for_fabric(64)
    assert leaf.probe_max_pps == 125
    assert leaf.for_targets(252).probe_interval_s == pytest.approx(2.016)
    assert leaf.for_targets(252).dead_after_us == 10_080_000
    assert TelemetryConfig(probe_max_pps=50).for_fabric(64).probe_max_pps == 50  # lower cap
    assert TelemetryConfig(probe_budget_pps=None).for_fabric(64).probe_max_pps is None
    with pytest.raises(ValueError, match="probe_budget_pps must be > 0"):
        TelemetryConfig(probe_budget_pps=0)


def test_an_idle_pairs_interval_and_dead_after():
    """An idle pair is probed every idle_probe_interval_s (never more often than the probe
    interval in force) and its paths die after as many of those intervals as dead_after_us is
    of probe intervals: 1 s at the defaults, and in proportion under a probe cap."""
    import pytest

    from mpsched.controller.telemetry.config import (
        DEAD_AFTER_US,
        IDLE_PROBE_INTERVAL_S,
        PROBE_INTERVAL_S,
        TelemetryConfig,
    )

    cfg = TelemetryConfig()
    assert cfg.idle_interval_s == IDLE_PROBE_INTERVAL_S == 0.2
    assert cfg.idle_dead_after_us == 1_000_000
    assert cfg.idle_dead_after_us * PROBE_INTERVAL_S == pytest.approx(
        DEAD_AFTER_US * IDLE_PROBE_INTERVAL_S)
    assert cfg.regimes(fabric=True) and not cfg.regimes(fabric=False)
    off = TelemetryConfig(idle_probe_interval_s=None)
    assert off.idle_interval_s is None and off.idle_dead_after_us == DEAD_AFTER_US
    assert not off.regimes(fabric=True)
    assert not TelemetryConfig(probe_interval_s=None).regimes(fabric=True)
    # a probe cap that stretches the probe interval beyond the idle one: both are the same
    capped = TelemetryConfig(probe_max_pps=10).for_targets(6)  # every 0.6 s, dead after 3 s
    assert capped.idle_interval_s == capped.probe_interval_s == pytest.approx(0.6)
    assert capped.idle_dead_after_us == capped.dead_after_us == 3_000_000
    slower = TelemetryConfig(probe_interval_s=0.3, dead_after_us=1_500_000)
    assert slower.idle_interval_s == 0.3 and slower.idle_dead_after_us == 1_500_000


def test_regime_settings_out_of_range_are_named():
    import pytest

    from mpsched.controller.telemetry.config import TelemetryConfig

    with pytest.raises(ValueError, match="idle_probe_interval_s must be > 0"):
        TelemetryConfig(idle_probe_interval_s=0)
    with pytest.raises(ValueError, match="idle_after_s must be > 0"):
        TelemetryConfig(idle_after_s=-1)
