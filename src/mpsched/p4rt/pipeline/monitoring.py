"""The monitoring entries: how often each path is reported (path and RTT reports) and when
it is declared dead (liveness)."""

from __future__ import annotations

from mpsched.p4profiles import FEATURE_RTT_MONITOR
from mpsched.p4rt.client import TableEntry
from mpsched.p4rt.pipeline.binding import PipelineBinding
from mpsched.p4rt.pipeline.names import (
    ACTION_SET_DEAD_AFTER,
    ACTION_SET_REPORT_INTERVAL,
    ACTION_SET_RTT_INTERVAL,
    LIVENESS_KEYS,
    REPORT_KEYS,
    TABLE_LIVENESS_CONFIG,
    TABLE_REPORT_CONFIG,
    TABLE_RTT_CONFIG,
)


class MonitoringEntries(PipelineBinding):
    """Builders of the report and liveness configuration entries."""

    def report_config(self, peer_edge: int, path_id: int, interval_us: int) -> TableEntry:
        """Report path path_id from edge peer_edge at most once per interval_us µs
        (path_report_t digests of this switch as the egress edge)."""
        return self._report_entry(TABLE_REPORT_CONFIG, ACTION_SET_REPORT_INTERVAL, peer_edge,
                                  path_id, interval_us)

    def rtt_config(self, peer_edge: int, path_id: int, interval_us: int) -> TableEntry:
        """Report the RTT samples of path path_id towards edge peer_edge at most once per
        interval_us µs (rtt_report_t)."""
        self._require(FEATURE_RTT_MONITOR, TABLE_RTT_CONFIG)
        return self._report_entry(TABLE_RTT_CONFIG, ACTION_SET_RTT_INTERVAL, peer_edge,
                                  path_id, interval_us)

    def _report_entry(self, table: str, action: str, peer_edge: int, path_id: int,
                      interval_us: int) -> TableEntry:
        if not 1 <= path_id <= self.max_paths:
            raise ValueError(f"path id {path_id} outside 1..{self.max_paths}")
        if interval_us < 0:
            raise ValueError(f"report interval {interval_us} < 0")
        peer_key, path_key = REPORT_KEYS
        return TableEntry(table, {peer_key: self._edge(peer_edge), path_key: path_id}, action,
                          {"interval_us": interval_us})

    def liveness_config(self, peer_edge: int, path_id: int, dead_after_us: int) -> TableEntry:
        """Declare path path_id towards edge peer_edge dead dead_after_us µs after its last
        sign of life (p4src/include/liveness.p4); without an entry the path never dies."""
        if not 1 <= path_id <= self.max_paths:
            raise ValueError(f"path id {path_id} outside 1..{self.max_paths}")
        if dead_after_us <= 0:
            raise ValueError(f"dead_after_us {dead_after_us} <= 0")
        peer_key, path_key = LIVENESS_KEYS
        return TableEntry(
            TABLE_LIVENESS_CONFIG,
            {peer_key: self._edge(peer_edge), path_key: path_id},
            ACTION_SET_DEAD_AFTER,
            {"dead_after_us": dead_after_us},
        )
