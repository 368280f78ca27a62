"""The plain ECMP program's control-plane interface (p4src/bench/plain_ecmp.p4), bound to
its P4Info.

The only place that names that program's tables, actions and counter, as
src/mpsched/p4rt/pipeline/ is for the scheduler's program. Binding checks every name, key and
parameter against the P4Info and reads the widths and sizes from it, so an entry that the
program cannot hold fails here, with its field named, not at the switch.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping

from mpsched.p4rt.client import CounterValue, TableEntry
from mpsched.p4rt.p4info import P4Info, P4InfoError, annotated_codes

TABLE_ROUTE = "PlainIngress.ipv4_route"
ACTION_TO_HOST = "PlainIngress.route_to_host"
ACTION_TO_EDGE = "PlainIngress.route_to_edge"
TABLE_NEXTHOP = "PlainIngress.ecmp_nexthop"
ACTION_SET_NEXTHOP = "PlainIngress.set_nexthop"
TABLES = (TABLE_ROUTE, TABLE_NEXTHOP)
ROUTE_KEY = "dst_addr"
NEXTHOP_KEYS = ("dst_edge", "member")
MAC_PARAMS = ("port", "smac", "dmac")  # route_to_host and set_nexthop
EDGE_PARAMS = ("dst_edge", "group_size")  # route_to_edge
# Drops by reason: a packets counter indexed by the reason code, whose names and codes the
# program defines once and hands over as the counter's annotation @drop_reasons[NAME = code].
COUNTER_DROP_REASON = "PlainIngress.drop_reason"
ANNOTATION_DROP_REASONS = "drop_reasons"


class PlainEcmpPipeline:
    """The plain ECMP program's entries by P4Info name.

    `table_sizes`: each table's size; `max_edge_id`, `max_group_size`: what dst_edge and
    group_size hold (their bit widths); `drop_reasons`: reason name -> counter index."""

    def __init__(self, p4info: P4Info) -> None:
        self.p4info = p4info
        p4info.match_field(TABLE_ROUTE, ROUTE_KEY)
        for key in NEXTHOP_KEYS:
            p4info.match_field(TABLE_NEXTHOP, key)
        offered = {TABLE_ROUTE: (ACTION_TO_HOST, ACTION_TO_EDGE),
                   TABLE_NEXTHOP: (ACTION_SET_NEXTHOP,)}
        for table, actions in offered.items():
            for action in actions:
                if action not in p4info.table_actions(table):
                    raise P4InfoError(f"{table} does not offer {action}")
        for action in (ACTION_TO_HOST, ACTION_SET_NEXTHOP):
            for param in MAC_PARAMS:
                p4info.action_param(action, param)
        widths = {p: p4info.action_param(ACTION_TO_EDGE, p).bitwidth for p in EDGE_PARAMS}
        self.max_edge_id = (1 << widths["dst_edge"]) - 1
        self.max_group_size = (1 << widths["group_size"]) - 1
        self.table_sizes = {t: p4info.table_size(t) for t in TABLES}
        self.drop_reasons = annotated_codes(p4info, COUNTER_DROP_REASON,
                                            ANNOTATION_DROP_REASONS)

    def _edge(self, edge_id: int) -> int:
        if not 1 <= edge_id <= self.max_edge_id:
            raise ValueError(f"dst_edge {edge_id} outside 1..{self.max_edge_id}")
        return edge_id

    def route_to_host(self, ip: str, port: int, smac: str, dmac: str) -> TableEntry:
        """Deliver `ip` (a /32) on `port`, from the switch's `smac` to the host's `dmac`."""
        return TableEntry(TABLE_ROUTE, {ROUTE_KEY: (ip, 32)}, ACTION_TO_HOST,
                          dict(zip(MAC_PARAMS, (port, smac, dmac), strict=True)))

    def route_to_edge(self, prefix: str, dst_edge: int, group_size: int) -> TableEntry:
        """`prefix` lies behind edge `dst_edge`, reached over this switch's group towards it
        of `group_size` members (1..max_group_size: the program divides by it)."""
        if not 1 <= group_size <= self.max_group_size:
            raise ValueError(f"group_size {group_size} outside 1..{self.max_group_size}")
        net = ipaddress.IPv4Network(prefix)
        return TableEntry(TABLE_ROUTE, {ROUTE_KEY: (str(net.network_address), net.prefixlen)},
                          ACTION_TO_EDGE,
                          {"dst_edge": self._edge(dst_edge), "group_size": group_size})

    def nexthop(self, dst_edge: int, member: int, port: int, smac: str, dmac: str
                ) -> TableEntry:
        """Member `member` of the group towards `dst_edge`: out of `port`, from this
        switch's `smac` to the neighbour's `dmac`."""
        if not 0 <= member < self.max_group_size:
            raise ValueError(f"member {member} outside 0..{self.max_group_size - 1}")
        return TableEntry(TABLE_NEXTHOP,
                          dict(zip(NEXTHOP_KEYS, (self._edge(dst_edge), member), strict=True)),
                          ACTION_SET_NEXTHOP,
                          dict(zip(MAC_PARAMS, (port, smac, dmac), strict=True)))

    def drop_counts(self, values: Mapping[int, CounterValue]) -> dict[str, int]:
        """The drop_reason counter's packets (index -> CounterValue, as
        P4RuntimeClient.read_counter reads them) by reason name; a missing index counts 0."""
        return {name: values[code].packets if code in values else 0
                for name, code in self.drop_reasons.items()}
