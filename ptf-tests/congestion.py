"""Congestion metrics fed back in the path tag, and mode CA's least-cost choice per flowlet
(p4src/include/congestion.p4, p4src/include/ca_select.p4).

One switch plays both edges: tagged packets arriving from a path are what the far edge
sent (this switch measures them as egress edge); feedback arrives in the tags of probes
from a path (as the far edge would send it); packets from h1 leave tagged with this
switch's own feedback.

Run: make ptf    (or: python -m mpsched.ptfrun congestion.LeastCostTest)
"""

from __future__ import annotations

import time
from collections.abc import Mapping

import ptf.testutils as testutils
from base import (
    HOST_IP,
    HOST_PORT,
    PATH_PORTS,
    PEER_EDGE,
    PEER_MAC,
    REMOTE_IP,
    SWITCH_MAC,
    EdgeSwitchTest,
)
from forwarding import host_packet, path_of
from path_tag import PathTag
from pinning import to_host
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether
from scapy.packet import Raw

from mpsched.p4rt.pipeline import COUNTER_RX, ETHERTYPE_PATH_TAG, PATH_FLAG_PROBE
from tests.waiting import wait_until

EQUAL = {1: 1, 2: 1, 3: 1}
LONG_GAP_US = 10_000_000  # no flowlet ends during a test
MAX_AGE_US = 2_000_000
N_FLOWS = 24
AGING_MAX_AGE_US = 600_000  # below fb_age's largest value (255 x 4096 us)


def probe_with_feedback(units: Mapping[str, int], via: int, seq: int, fb_path: int,
                        qdelay_us: int = 0, loss: int = 0, rate: int = 0, age_us: int = 0,
                        tx_ts: int = 1000):
    """A probe from path `via` whose tag carries the far edge's feedback about fb_path, in
    the tag's units (`units`: the program's, Pipeline.ca_units)."""
    return (Ether(dst="00:00:00:00:00:00", src=PEER_MAC, type=ETHERTYPE_PATH_TAG)
            / PathTag(path_id=via, flags=PATH_FLAG_PROBE, seq=seq, tx_ts=tx_ts, next_type=0,
                      fb_path=fb_path, fb_age=age_us // units["fb_age_unit_us"],
                      fb_qdelay=qdelay_us // units["fb_qdelay_unit_us"], fb_loss=loss,
                      fb_rate=rate)
            / Raw(b"mpsP"))


class CongestionTest(EdgeSwitchTest):
    """Paths 1-3 weighted equally in mode CA with a long flowlet gap."""

    def setUp(self) -> None:
        super().setUp()
        self.set_weights(EQUAL, insert=True, mode="ca", gap_us=LONG_GAP_US)
        self.coef_one = self.pipeline.ca_units["coef_one"]  # a coefficient of 1 (8.8 fixed point)
        self.seq = 0
        self.sport = 41000

    def ca(self, insert: bool = True, **params: int) -> None:
        """The class-0 ca_params entry: unnamed parameters are 0."""
        entry = self.pipeline.ca_params(PEER_EDGE, 0, params)
        (self.client.insert if insert else self.client.modify)(entry)

    def feedback(self, fb_path: int, **fields: int) -> None:
        """The far edge's feedback about fb_path arrives (in a probe from path 1; probes
        end at this switch: nothing leaves)."""
        testutils.send_packet(self, PATH_PORTS[1],
                              probe_with_feedback(self.pipeline.ca_units, 1, self.seq, fb_path,
                                                  **fields))
        self.seq += 1

    def stored(self) -> bool:
        """Every feedback probe sent so far has entered the ingress pipeline (path 1's rx
        counter). BMv2's single ingress thread finishes a packet before it takes the next,
        so a packet sent from now on sees the feedback stored."""
        cell = self.cell(1)
        return self.client.read_counter(COUNTER_RX, cell)[cell].packets >= self.seq

    def new_flows(self, n: int = N_FLOWS) -> list[int]:
        """The paths of n new flows (one packet each), once the feedback sent before is
        stored (packets from different ports may be processed out of order)."""
        wait_until(self.stored, timeout=10, interval=0.01, what=f"{self.seq} feedback probes")
        out = []
        for _ in range(n):
            out.append(path_of(self, to_host(REMOTE_IP, self.sport)))
            self.sport += 1
        return out


class NoParamsIsRandomTest(CongestionTest):
    """Mode CA without a ca_params entry (miss: no_ca): every cost is 0, every usable path
    a candidate: new flows spread over all three paths (LetFlow); a flow keeps its path."""

    def runTest(self) -> None:
        paths = self.new_flows(36)
        assert set(paths) == {1, 2, 3}, paths
        assert len({path_of(self, to_host(REMOTE_IP, 41000)) for _ in range(6)}) == 1


class LeastCostTest(CongestionTest):
    """Queueing delay fed back for each path (16, 0.16 and 8 ms): with c_qdelay = 1 and
    epsilon 0 every new flowlet takes path 2; flowlets in progress keep their path when
    path 2 then reports 32 ms, and new ones take path 3, the least cost now."""

    def runTest(self) -> None:
        self.ca(c_qdelay=self.coef_one, max_age_us=MAX_AGE_US)
        for path, q in ((1, 16_000), (2, 160), (3, 8_000)):
            self.feedback(path, qdelay_us=q)
        paths = self.new_flows()
        assert paths == [2] * N_FLOWS, paths
        first = self.sport - N_FLOWS
        self.feedback(2, qdelay_us=32_000)
        assert set(self.new_flows(8)) == {3}
        assert path_of(self, to_host(REMOTE_IP, first)) == 2  # its flowlet goes on


class CostTermsTest(CongestionTest):
    """Each term of the cost counts: loss (c_loss), utilisation (c_util with the path's
    inverse capacity) and the per-path offset each move new flowlets away from a path
    with equal queueing delay."""

    def runTest(self) -> None:
        # loss: 5 % on path 1, 1 % on path 2, 0 on path 3 -> path 3
        self.ca(c_loss=self.coef_one, max_age_us=MAX_AGE_US)
        self.feedback(1, loss=3277)
        self.feedback(2, loss=655)
        self.feedback(3, loss=0)
        assert set(self.new_flows(8)) == {3}
        # utilisation: same delivered rate, path 2 has 4x the capacity -> path 2
        self.ca(insert=False, c_util=self.coef_one, max_age_us=MAX_AGE_US,
                inv_capacity_1=1 << 16, inv_capacity_2=1 << 14, inv_capacity_3=1 << 16)
        for path in (1, 2, 3):
            self.feedback(path, rate=1000)
        assert set(self.new_flows(8)) == {2}
        # offsets alone (no live term): the smallest offset -> path 1
        self.ca(insert=False, max_age_us=MAX_AGE_US, offset_1=10, offset_2=500, offset_3=900)
        assert set(self.new_flows(8)) == {1}


class EpsilonTest(CongestionTest):
    """Paths within epsilon of the least cost are chosen among at random: costs 100, 150
    and 5000 µs (offsets) with epsilon 100 give paths 1 and 2, never 3; epsilon 0 gives
    path 1 only."""

    def runTest(self) -> None:
        self.ca(max_age_us=MAX_AGE_US, epsilon=100, offset_1=100, offset_2=150, offset_3=5000)
        paths = self.new_flows(32)
        assert set(paths) == {1, 2}, paths
        self.ca(insert=False, max_age_us=MAX_AGE_US, offset_1=100, offset_2=150,
                offset_3=5000)
        assert set(self.new_flows(12)) == {1}


class AgingTest(CongestionTest):
    """Metrics older than max_age_us count 0: path 2 reported 1 s of queueing (offsets
    make it the best otherwise) loses new flowlets while the report is fresh and wins them
    again once it is older than max_age; feedback that arrives already older than max_age
    (fb_age) counts 0 at once. Each phase checks the clock instead of assuming that eight
    round trips beat max_age."""

    def runTest(self) -> None:
        max_age_s = AGING_MAX_AGE_US / 1e6
        self.ca(c_qdelay=self.coef_one, max_age_us=AGING_MAX_AGE_US, offset_1=1000, offset_3=1000)
        stored_by = self.avoided_while_fresh(max_age_s)
        time.sleep(max(0.0, stored_by + max_age_s + 0.15 - time.monotonic()))
        assert set(self.new_flows(8)) == {2}
        self.feedback(2, qdelay_us=1_000_000, age_us=AGING_MAX_AGE_US + 200_000)
        assert set(self.new_flows(8)) == {2}
        self.avoided_while_fresh(max_age_s)

    def avoided_while_fresh(self, max_age_s: float) -> float:
        """Path 2 reports 1 s of queueing and 8 new flows avoid it, all placed while the
        report was younger than max_age (a busy machine that cannot place them in time
        tries again, twice, then fails saying so). Returns a time by which the report was
        stored."""
        for _ in range(3):
            sent = time.monotonic()
            self.feedback(2, qdelay_us=1_000_000)
            paths = self.new_flows(8)
            done = time.monotonic()
            if done - sent < max_age_s:
                assert 2 not in paths, paths
                return done
        raise AssertionError(f"8 new flows took longer than max_age ({max_age_s:g} s) three "
                             "times: the machine is too busy for this test")


class DeadPathNotChosenTest(CongestionTest):
    """Failover stays as it is: a dead path is never chosen, however cheap; a flowlet whose
    path dies moves to an alive path at once (no controller)."""

    def runTest(self) -> None:
        p = self.pipeline
        self.ca(c_qdelay=self.coef_one, max_age_us=MAX_AGE_US)
        self.feedback(1, qdelay_us=5_000)
        self.feedback(2, qdelay_us=0)
        self.feedback(3, qdelay_us=5_000)
        assert set(self.new_flows(6)) == {2}
        flow = self.sport - 1
        # path 2 dies: liveness configured for paths 1 and 2, a probe from path 2 arms its
        # timer, then only path 1 sends (feedback probes) for 300 ms; path 3 has no
        # liveness entry: never dead
        self.client.insert(*[p.liveness_config(PEER_EDGE, i, 200_000) for i in (1, 2)])
        testutils.send_packet(self, PATH_PORTS[2], probe_with_feedback(p.ca_units, 2, 0, 0))
        end = time.monotonic() + 0.3
        while time.monotonic() < end:
            self.feedback(3, qdelay_us=5_000)
            time.sleep(0.04)
        moved = path_of(self, to_host(REMOTE_IP, flow))
        assert moved in (1, 3), moved
        self.feedback(1, qdelay_us=5_000)
        assert 2 not in self.new_flows(8)


class FeedbackOutTest(CongestionTest):
    """Round trip: tagged packets arriving from path 2 with one-way delays 20 ms above the
    first one's, and 2 packets missing after seq 9, make the tags this switch sends carry
    feedback about path 2: fb_qdelay near 20 ms, fb_loss > 0, fb_rate > 0, a fresh age;
    the feedback rotates over the paths (path 3, never measured, is never reported)."""

    def runTest(self) -> None:
        base_ts = 50_000_000
        start = time.monotonic()
        for seq in range(40):
            if seq in (10, 11):
                continue  # lost
            elapsed = int((time.monotonic() - start) * 1e6)
            # the first packet sets the minimum; the others left 20 ms "earlier"
            tx = base_ts + elapsed - (0 if seq == 0 else 20_000)
            pkt = (Ether(dst=SWITCH_MAC, src=PEER_MAC,
                         type=ETHERTYPE_PATH_TAG)
                   / PathTag(path_id=2, seq=seq, tx_ts=tx)
                   / IP(src=REMOTE_IP, dst=HOST_IP, ttl=63) / UDP(sport=7, dport=7)
                   / Raw(b"x" * 200))
            testutils.send_packet(self, PATH_PORTS[2], pkt)
            testutils.dp_poll(self, port_number=HOST_PORT, timeout=2)
        reports = {}
        for i in range(12):
            testutils.send_packet(self, HOST_PORT, host_packet(sport=42000 + i))
            got = testutils.dp_poll(self, timeout=2)
            assert isinstance(got, self.dataplane.PollSuccess), "nothing left the switch"
            tag = Ether(got.packet)[PathTag]
            if tag.fb_path:
                reports[tag.fb_path] = tag
        assert set(reports) == {2}, sorted(reports)
        t = reports[2]
        units = self.pipeline.ca_units
        qdelay = t.fb_qdelay * units["fb_qdelay_unit_us"]
        assert 12_000 <= qdelay <= 40_000, qdelay
        assert t.fb_loss > 0, t.fb_loss
        assert t.fb_rate > 0, t.fb_rate
        assert t.fb_age * units["fb_age_unit_us"] < 1_000_000, t.fb_age
