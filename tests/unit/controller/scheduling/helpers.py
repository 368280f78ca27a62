"""Helpers shared by the scheduling unit tests: an MPTCP connection of h1 and h2 (keys,
tokens, the initial subflow and the joins)."""

from __future__ import annotations

from mpsched import addressing as ap
from mpsched.controller.scheduling.mptcp_digest import Flow

ACK, SYNACK = 0x10, 0x12
CLIENT_KEY = 0x0123456789ABCDEF
SERVER_KEY = 0x0000000000000001
# SHA-256 of eight zero bytes is af5570f5 a1810b7a ...; of 00..01 it is cd2662154e6d76b2...
SERVER_TOKEN = 0xCD266215
INITIAL = Flow(ap.H1_IP, 40000, ap.H2_IP, 5201)
# the joins come from h1's other addresses 2, 3, 4
JOIN_1, JOIN_2, JOIN_3 = (Flow(ap.host_ip(ap.SENDER_EDGE, 1 + k), 40000 + k, ap.H2_IP, 5201)
                          for k in (1, 2, 3))
