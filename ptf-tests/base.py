"""Base class of the PTF tests: pushes the pipeline, cleans up its entries.

Run the suite with `make ptf` (or `python -m mpsched.ptfrun [test names]`),
which starts BMv2 on veths and passes grpcaddr, device_id, p4info and
bmv2_json as PTF test parameters. Port map: 1 = host h1, 2 = path 1,
3 = path 2, 4 = path 3.
"""

from __future__ import annotations

import ptf
import ptf.testutils as testutils
from ptf.base_tests import BaseTest

from mpsched import addressing as ap
from mpsched.p4rt.client import P4RuntimeClient
from mpsched.p4rt.p4info import P4Info
from mpsched.p4rt.pipeline import ALL_TABLES, Pipeline

HOST_PORT = 1
PATH_PORTS = {1: 2, 2: 3, 3: 4}

# The switch under test is s1 of the testbed's addressing plan (src/mpsched/addressing.py).
SWITCH_MAC = ap.S1_MAC
HOST_MAC = ap.H1_MAC
HOST_IP = ap.H1_IP
REMOTE_IP = ap.H2_IP
REMOTE_NET = ap.subnet(ap.RECEIVER_EDGE)
PEER_MAC = ap.S2_MAC  # the far edge switch: the source of the frames arriving from a path
# Edge ids (path tag src_edge/dst_edge, p4src/include/edge_config.p4): the switch under test
# is edge 1, the far edge switch edge 2 (the testbed's s1 and s2).
MY_EDGE = 1
PEER_EDGE = 2


class P4RuntimeTest(BaseTest):
    """Connects as primary, pushes the program (which also resets counters)."""

    def setUp(self) -> None:
        BaseTest.setUp(self)
        self.dataplane = ptf.dataplane_instance
        self.dataplane.flush()
        params = testutils.test_params_get()
        p4info = P4Info.from_file(params["p4info"])
        self.pipeline = Pipeline(p4info)
        self.client = P4RuntimeClient(params["grpcaddr"], int(params["device_id"]), p4info)
        self.client.connect()
        self.client.set_pipeline(params["bmv2_json"])

    def cell(self, path_id: int, edge: int = PEER_EDGE) -> int:
        """The index of (peer edge, path) in the per-(edge, path) counters path_tx, path_rx
        and probe_skipped (Pipeline.edge_path_index)."""
        return self.pipeline.edge_path_index(edge, path_id)

    def tearDown(self) -> None:
        for table in ALL_TABLES:
            self.client.clear_table(table)
        self.client.close()
        BaseTest.tearDown(self)


class EdgeSwitchTest(P4RuntimeTest):
    """An edge switch with host h1 on port 1 and paths 1-3 on ports 2-4."""

    def setUp(self) -> None:
        super().setUp()
        p = self.pipeline
        self.client.insert(
            p.switch_config(MY_EDGE),
            p.route_to_host(HOST_IP, HOST_PORT, SWITCH_MAC, HOST_MAC),
            p.route_to_paths(REMOTE_NET, PEER_EDGE),
            *[p.path_nexthop(PEER_EDGE, pid, port) for pid, port in PATH_PORTS.items()],
            *[p.path_ingress(port) for port in PATH_PORTS.values()],
        )

    def set_weights(self, weights: dict[int, int], insert: bool = False, class_id: int = 0,
                    mode: str = "hash", gap_us: int = 0, syn_copy: bool = False) -> None:
        entry = self.pipeline.weights(PEER_EDGE, class_id, weights, mode, gap_us, syn_copy)
        (self.client.insert if insert else self.client.modify)(entry)
