"""A switch's digest lists, read off its P4Runtime stream and handed to the controller as
typed reports (southbound/reports.py, scheduling/mptcp.py).

Path ids are per pair of edges: a path report is the controller's only when it is about a
path from one of the switch's peer edges, an RTT report only when it measured traffic
towards one; the others are logged and dropped. The agent (southbound/agent.py) drains the
stream each time its reader wakes it.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any, Protocol

from mpsched.controller.model.reports import PathReport, RttReport
from mpsched.controller.scheduling.mptcp import MptcpReport, mptcp_report
from mpsched.controller.southbound.reports import path_report, reports_from, rtt_report
from mpsched.p4rt.client import P4RuntimeClient, P4RuntimeError
from mpsched.p4rt.pipeline import DIGEST_PATH_REPORT, DIGEST_RTT_REPORT, Pipeline

log = logging.getLogger(__name__)


class ReportHost(Protocol):
    """What takes a switch's reports (the controller)."""

    def on_report(self, report: PathReport) -> None:
        """A path report of the egress edge (`report.src_edge`: the ingress)."""
        ...

    def on_rtt(self, report: RttReport) -> None:
        """An RTT report of the ingress edge."""
        ...

    def on_mptcp(self, report: MptcpReport) -> None:
        """An MPTCP handshake or close of a subflow."""
        ...


def drain_reports(client: P4RuntimeClient, pipeline: Pipeline, switch: str,
                  peers: list[int], host: ReportHost) -> None:
    """Hand every path, RTT and MPTCP report waiting on `switch`'s stream to `host`."""
    path_id, rtt_id = pipeline.path_report_id, pipeline.rtt_report_id
    mptcp = pipeline.mptcp_digests
    while True:
        digest_list = client.read_digest_list(timeout=0)
        if digest_list is None:
            return
        now = time.time()
        # each digest kind: its name, and what turns a decoded digest into the host's report
        take: Callable[[Any, str, float], None]
        if digest_list.digest_id == path_id:
            name = DIGEST_PATH_REPORT

            def take(v: Any, sw: str, at: float) -> None:
                if any(reports_from(v, e) for e in peers):
                    host.on_report(path_report(v, sw, at))
                else:
                    log.debug("%s: report from edge %s ignored", sw, v.get("src_edge"))
        elif digest_list.digest_id == rtt_id:
            name = DIGEST_RTT_REPORT

            def take(v: Any, sw: str, at: float) -> None:
                report = rtt_report(v, sw, at)
                if report.peer_edge in peers:
                    host.on_rtt(report)
                else:
                    log.debug("%s: RTT report towards edge %s ignored", sw, report.peer_edge)
        elif digest_list.digest_id in mptcp:
            name = mptcp[digest_list.digest_id][0]

            def take(v: Any, sw: str, at: float, name: str = name) -> None:
                host.on_mptcp(mptcp_report(name, v, sw, at))
        else:
            log.warning("%s: unknown digest id %d", switch, digest_list.digest_id)
            continue
        try:
            values = client.decode_digest_list(name, digest_list)
        except P4RuntimeError as error:
            log.warning("%s: undecodable digest: %s", switch, error)
            continue
        for v in values:
            take(v, switch, now)
