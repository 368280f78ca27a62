from mpsched.controller.telemetry.stats import PathStats, Sample


def test_rates_from_successive_samples():
    stats = PathStats(1)
    stats.update("s1", Sample(10.0, 0, 0, 0, 0))
    stats.update("s1", Sample(12.0, 100, 250_000, 50, 125_000))
    stats.update("s2", Sample(12.0, 10, 1_000, 0, 0))
    per = stats.by_switch["s1"]
    assert per.tx_rate_bps == 1_000_000 and per.rx_rate_bps == 500_000 and per.tx_pps == 50
    assert stats.totals() == {"packets": 110, "bytes": 251_000, "rate_bps": 1_000_000.0}


def test_counter_reset_gives_zero_rate_not_negative():
    stats = PathStats(1)
    stats.update("s1", Sample(1.0, 100, 100_000, 0, 0))
    stats.update("s1", Sample(2.0, 5, 500, 0, 0))
    assert stats.by_switch["s1"].tx_rate_bps == 0
