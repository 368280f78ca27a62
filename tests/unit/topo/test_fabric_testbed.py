"""What the fabric testbed decides before Mininet (src/mpsched/topo/fabric_testbed.py); bringing it
up is
tests/integration/test_fabric_testbed.py."""

from __future__ import annotations

import pytest

from mpsched.topo.fabric_testbed import FabricSpec, FabricTestbed
from tests.unit.fabric.helpers import build, example, leaf_spine


def test_spec_parses_its_section_or_takes_the_model() -> None:
    section = example("leaf-spine-4x2")
    spec = FabricSpec(section)
    assert spec.model == build(section)
    given = build(leaf_spine(2, 1))
    assert FabricSpec(section, fabric=given).model is given
    net = spec.description()
    assert net.fabric == section and len(net.switches) == 6
    assert spec.plan.hosts_by_edge() == {e: [f"h{e}_1"] for e in (1, 2, 3, 4)}


def test_clashing_names_fail_before_anything_starts() -> None:
    section = {"graph": {
        "link": {"rate_mbps": 10},
        "switches": [{"name": "a", "role": "edge"}, {"name": "b", "role": "edge"},
                     {"name": "lk2", "role": "transit"}],
        "links": [{"a": "a", "b": "lk2"}, {"a": "b", "b": "lk2"}],
    }}
    with pytest.raises(ValueError, match="lk2"):
        FabricTestbed(FabricSpec(section, backend="linkem"))


def test_mptcp_limits_on_every_host_endpoints_on_the_initiators_only() -> None:
    """`enable_mptcp` as commands in the hosts (a fake `host`: no Mininet)."""
    bed = FabricTestbed(FabricSpec(leaf_spine(2, 2), backend="linkem", host_addresses=3))
    sent: dict[str, list[str]] = {}

    class Host:
        def __init__(self, name: str) -> None:
            self.name = name

        def cmd(self, command: str) -> str:
            sent.setdefault(self.name, []).append(command)
            return ""

    bed.host = Host  # type: ignore[method-assign]
    bed.enable_mptcp(2, ["h1_1"])
    assert sent["h2_1"] == ["sysctl -qw net.mptcp.enabled=1",
                            "ip mptcp limits set subflows 2 add_addr_accepted 2"]
    assert sent["h1_1"][2:] == ["ip mptcp endpoint add 10.0.1.9 dev h1_1-eth0 subflow"]
    with pytest.raises(ValueError, match="host_addresses"):
        bed.enable_mptcp(4)
