"""src/mpsched/controller/scheduling/mptcp_digest.py: the MPTCP token of a key (RFC 8684) and the
switch's digest values as a report."""

from __future__ import annotations

from ipaddress import IPv4Address

import pytest

from mpsched import addressing as ap
from mpsched.controller.scheduling.mptcp_digest import (
    mptcp_report,
    token,
)
from mpsched.p4rt.pipeline import DIGEST_MPTCP_JOIN
from tests.unit.controller.scheduling.helpers import (
    JOIN_1,
    SERVER_KEY,
    SERVER_TOKEN,
)


def test_token_is_the_top_32_bits_of_sha256_of_the_key_in_network_order():
    assert token(0) == 0xAF5570F5
    assert token(SERVER_KEY) == SERVER_TOKEN
    with pytest.raises(ValueError):
        token(1 << 64)


def test_digest_values_become_a_report():
    r = mptcp_report(
        DIGEST_MPTCP_JOIN,
        {"src_addr": int(IPv4Address(JOIN_1.src)), "dst_addr": int(IPv4Address(ap.H2_IP)),
         "src_port": 40001,
         "dst_port": 5201, "token": SERVER_TOKEN, "addr_id": 2},
        "s1",
        5.0,
    )
    assert (r.kind, r.flow, r.token, r.addr_id, r.switch) == (
        "join", JOIN_1, SERVER_TOKEN, 2, "s1")
