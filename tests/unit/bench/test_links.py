"""`make bench-links`' table rows from probe results (src/mpsched/bench/links.py), without a
testbed: a fake bed hands back the datagrams a 20 ms link would deliver."""

from __future__ import annotations

from array import array

from mpsched.bench import links
from mpsched.testing.linkbed import ProbeResult
from mpsched.testing.udpprobe import Records


class FakeEm:
    def set(self, _direction: str, _params: object) -> None:
        pass


class FakeBed:
    """Every probe: `count` datagrams, 2 ms apart, each delayed by 20 ms plus k x 0.1 ms."""

    em = FakeEm()

    def wait_idle(self) -> None:
        pass

    def probe(self, pps: float, count: int, size: int, drain_s: float = 0.0) -> ProbeResult:
        tx = [k * 2_000_000 for k in range(count)]
        rx = [t + 20_000_000 + (k % 5) * 100_000 for k, t in enumerate(tx)]
        records = Records(array("q", range(count)), array("q", tx), array("q", rx),
                          array("q", [size] * count))
        return ProbeResult({"sent": count, "pps": pps}, {"rcvbuf_drops": 0}, records, 0.1, 1.0)


def test_jitter_rows_give_the_median_spread_and_reordering():
    rows: list[links.Row] = []
    links.bench_jitter(FakeBed(), 0.2, rows)
    assert [r.configured for r in rows] == ["20 ms, jitter 0 ms", "20 ms, jitter 4 ms"]
    assert rows[0].measured == "p50 20.200 ms, IQR 0.200 ms"
    assert rows[0].note.startswith("p5 20.000 p95 20.400; reordered 0; 500/500 rx")
