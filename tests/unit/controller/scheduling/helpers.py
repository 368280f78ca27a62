"""Helpers shared by the scheduling unit tests: an MPTCP connection of h1 and h2 (keys,
tokens, the initial subflow and the joins), its subflows and costs that only rank paths."""

from __future__ import annotations

from mpsched import addressing as ap
from mpsched.controller.scheduling.mptcp_digest import Flow
from mpsched.controller.scheduling.mptcp_placement import MptcpParams, Subflow

ACK, SYNACK = 0x10, 0x12
CLIENT_KEY = 0x0123456789ABCDEF
SERVER_KEY = 0x0000000000000001
# SHA-256 of eight zero bytes is af5570f5 a1810b7a ...; of 00..01 it is cd2662154e6d76b2...
SERVER_TOKEN = 0xCD266215
INITIAL = Flow(ap.H1_IP, 40000, ap.H2_IP, 5201)
# the joins come from h1's other addresses 2, 3, 4
JOIN_1, JOIN_2, JOIN_3 = (Flow(ap.host_ip(ap.SENDER_EDGE, 1 + k), 40000 + k, ap.H2_IP, 5201)
                          for k in (1, 2, 3))
MPTCP_DEFAULTS = MptcpParams()  # replace_margin 0.25, replace_margin_us 2000, min_dwell_s 5


def sub(flow: Flow, path: int | None, initial: bool = False) -> Subflow:
    return Subflow(flow, initial, 0, 0.0, path_id=path)


def rank(order: list[int]) -> dict[int, float]:
    """Costs that only rank (0, 1, 2, ... µs: far below any re-placement margin)."""
    return {p: float(i) for i, p in enumerate(order)}
