"""southbound/digests.py: a switch's digest lists handed to the host as typed reports."""

from __future__ import annotations

import ipaddress

from p4.v1 import p4runtime_pb2

from mpsched import addressing as ap
from mpsched.controller.southbound.digests import drain_reports
from mpsched.p4rt.client import P4RuntimeClient
from mpsched.p4rt.p4info import encode_uint
from mpsched.p4rt.pipeline import (
    DIGEST_MPTCP_JOIN,
    DIGEST_PATH_REPORT,
    DIGEST_RTT_REPORT,
    Pipeline,
)
from tests.fake_p4rt import MPTCP_MEMBERS, PATH_REPORT_MEMBERS, RTT_REPORT_MEMBERS
from tests.unit.controller.helpers import JOIN_SRC


def u32(ip: str) -> int:
    return int(ipaddress.IPv4Address(ip))


def test_digests_go_to_the_host_by_id_and_peer(p4info):
    """Path reports go to on_report, RTT reports to on_rtt, MPTCP reports to on_mptcp;
    unknown ids are skipped."""
    def digest_list(name, members, values):
        dl = p4runtime_pb2.DigestList(digest_id=p4info.digest_id(name))
        struct = dl.data.add().struct
        for (_, width), v in zip(members, values, strict=True):
            struct.members.add().bitstring = encode_uint(v, width)
        return dl

    pending = [
        digest_list(DIGEST_RTT_REPORT, RTT_REPORT_MEMBERS, [2, 2, 30_000, 4, 1_500]),
        # an RTT sample towards another edge (3): not s1's path 2 to its peer, so not taken
        digest_list(DIGEST_RTT_REPORT, RTT_REPORT_MEMBERS, [2, 3, 60_000, 0, 0]),
        p4runtime_pb2.DigestList(digest_id=12345),
        digest_list(DIGEST_PATH_REPORT, PATH_REPORT_MEMBERS, [1, 2, 7, 10, 20, 1, 100, 0, 0, 0]),
        # path 1 of another edge (3): not s1's path 1 from its peer s2, so not taken
        digest_list(DIGEST_PATH_REPORT, PATH_REPORT_MEMBERS, [1, 3, 8, 10, 20, 1, 100, 0, 0, 0]),
        digest_list(DIGEST_MPTCP_JOIN, MPTCP_MEMBERS[DIGEST_MPTCP_JOIN],
                    [u32(JOIN_SRC), u32(ap.H2_IP), 40001, 5201, 0xCAFE, 2]),
    ]
    client = P4RuntimeClient("127.0.0.1:1", 1, p4info)
    client.read_digest_list = lambda timeout: pending.pop(0) if pending else None
    paths, rtts, mptcp = [], [], []

    class Host:  # an AgentHost that records the reports
        on_report = paths.append
        on_rtt = rtts.append
        on_mptcp = mptcp.append

    drain_reports(client, Pipeline(p4info), "s1", [2], Host())  # s1's one peer: edge 2
    assert [(r.path_id, r.peer_edge, r.rtt_us, r.retrans, r.inflight_bytes, r.switch)
            for r in rtts] == [(2, 2, 30_000, 4, 1_500, "s1")]
    assert [(r.path_id, r.seq, r.rx_bytes) for r in paths] == [(1, 7, 100)]
    assert [(r.kind, str(r.flow), r.token, r.addr_id) for r in mptcp] == [
        ("join", f"{JOIN_SRC}:40001->{ap.H2_IP}:5201", 0xCAFE, 2)
    ]
