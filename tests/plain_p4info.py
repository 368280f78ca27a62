"""A synthetic P4Info of the plain ECMP program (p4src/bench/plain_ecmp.p4): its names
(src/mpsched/p4rt/plain_ecmp.py) with the compiled program's shapes, for unit tests without p4c
(tests/unit/p4rt/test_plain_ecmp.py holds it to the compiled one where that is built)."""

from __future__ import annotations

from p4.config.v1 import p4info_pb2

from mpsched.p4rt import plain_ecmp as pe
from tests.fake_p4rt import _EXACT, _LPM, _annotate, _Builder

ROUTE_SIZE = 1024
NEXTHOP_SIZE = 1024
DROP_REASONS = {"IPV4_VERSION": 1, "IPV4_IHL": 2, "TRUNCATED": 3, "NOT_IPV4": 4,
                "IPV4_CHECKSUM": 5, "TTL_EXPIRED": 6, "NO_ROUTE": 7, "NO_NEXTHOP": 8}
MAC_PARAMS = [("port", 9), ("smac", 48), ("dmac", 48)]


def synthetic_plain_ecmp_p4info(route_size: int = ROUTE_SIZE,
                                nexthop_size: int = NEXTHOP_SIZE) -> p4info_pb2.P4Info:
    b = _Builder()
    b.action(pe.ACTION_TO_HOST, MAC_PARAMS)
    b.action(pe.ACTION_TO_EDGE, [("dst_edge", 8), ("group_size", 8)])
    b.action("PlainIngress.no_route", [])
    b.action(pe.ACTION_SET_NEXTHOP, MAC_PARAMS)
    b.action("PlainIngress.no_nexthop", [])
    b.table(pe.TABLE_ROUTE, route_size, [("dst_addr", 32, _LPM)],
            [pe.ACTION_TO_HOST, pe.ACTION_TO_EDGE, "PlainIngress.no_route"])
    b.table(pe.TABLE_NEXTHOP, nexthop_size, [("dst_edge", 8, _EXACT), ("member", 8, _EXACT)],
            [pe.ACTION_SET_NEXTHOP, "PlainIngress.no_nexthop"])
    counter = b.counter(pe.COUNTER_DROP_REASON, len(DROP_REASONS) + 1)
    _annotate(counter.preamble, pe.ANNOTATION_DROP_REASONS, DROP_REASONS)
    return b.info
