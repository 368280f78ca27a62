"""Programming a switch: bring it to the controller's state, keeping the program and its
registers where it already runs it, then ask for its reports (digests).

A switch that already runs this program (same pipeline cookie, e.g. after a controller
restart) keeps it, with its registers (flowlets, sequence numbers, liveness): its tables are
read back and only the difference is written. A switch without it (new, restarted, or
running another program) gets the program pushed and every entry.
"""

from __future__ import annotations

import logging
import time

from mpsched.controller.southbound.agent_model import Programming
from mpsched.controller.southbound.forwarding import copy_sessions
from mpsched.controller.southbound.reports import check_members, check_rtt_members
from mpsched.controller.southbound.writes import insert_sessions
from mpsched.controller.telemetry.estimators import REPORT_BATCH_MAX
from mpsched.p4rt.client import P4RuntimeClient, TableEntry
from mpsched.p4rt.pipeline import DIGEST_PATH_REPORT, DIGEST_RTT_REPORT, Pipeline

log = logging.getLogger(__name__)


def program_switch(client: P4RuntimeClient, pipeline: Pipeline, bmv2_json: str,
                   desired: list[TableEntry], report_batch_us: int, name: str) -> Programming:
    """Bring switch `name` to the `desired` entries and their clone sessions, pushing the
    program (which wipes the switch) unless it runs it already, then insert its digests
    (`insert_digests`). How it went: "reconciled" or "pushed"."""
    cookie = client.program_cookie(bmv2_json)
    if client.pipeline_cookie() == cookie:
        difference = client.reconcile(pipeline.tables, desired)
        programmed = Programming("reconciled", difference.summary(), time.time())
    else:
        client.set_pipeline(bmv2_json, cookie)
        client.insert(*desired)
        programmed = Programming("pushed", f"{len(desired)} entries", time.time())
    # where a SYN's copy leaves (forwarding.copy_sessions); written again on a reconcile,
    # as the replication engine's sessions are not read back
    insert_sessions(client, copy_sessions(pipeline, desired))
    log.info("%s: pipeline %s (%s)", name, *programmed.as_tuple())
    insert_digests(client, pipeline, report_batch_us)
    return programmed


def insert_digests(client: P4RuntimeClient, pipeline: Pipeline, report_batch_us: int) -> None:
    """The path and RTT reports (their members checked against what the controller reads),
    batched by `report_batch_us`, and the MPTCP digests, one at a time."""
    _, members = pipeline.path_report_digest()
    check_members(members)
    # report_config / rtt_config bound the rate per path; the switch batches the reports
    # of report_batch_us into one DigestList (one stream message and one ack)
    lists = {
        "max_timeout_ns": report_batch_us * 1000,
        "max_list_size": REPORT_BATCH_MAX if report_batch_us else 1,
    }
    client.insert_digest(DIGEST_PATH_REPORT, **lists)
    if pipeline.has_rtt_monitor:  # a compile-time profile may leave the stage out
        _, members = pipeline.rtt_report_digest()
        check_rtt_members(members)
        client.insert_digest(DIGEST_RTT_REPORT, **lists)
    # MPTCP handshakes and closes of pinned subflows (none without MPTCP parsing)
    for name, _ in pipeline.mptcp_digests.values():
        client.insert_digest(name, max_timeout_ns=0, max_list_size=1)
