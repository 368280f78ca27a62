"""What the fabric testbed decides before Mininet (topo/fabric_testbed.py); bringing it up is
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
