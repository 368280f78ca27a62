"""MPTCP across a fabric on the real stack: one short run of scenarios/fabric-mptcp-steered.yaml
(4 leaves x 2 spines, BMv2, linkem, kernel MPTCP in the hosts) through the runner with the
controller's connections sampled every second (`SamplingRun`, `make bench-fabric-mptcp`'s run):
both bulk transfers' connections are seen with their 2 subflows, the subflows of each
connection are pinned to distinct paths of its pair in every sample, and the run's result
carries each connection's goodput against the capacity of its paths."""

from __future__ import annotations

import dataclasses
import json

import pytest

from tests.conftest import require

# a failure on a deadline says whether the machine was saturated (tests/integration/conftest.py)
pytestmark = [pytest.mark.integration, pytest.mark.usefixtures("machine_load")]

SECONDS = 18.0  # before the scenario's failure at 20 s: the paths stay up


def test_subflows_of_each_connection_land_on_distinct_paths(artifacts, tmp_path):
    require("root", "simple_switch_grpc", "mininet", "ethtool", "linkem")
    from mpsched.bench.fabric_mptcp import VARIANTS
    from mpsched.bench.fabric_mptcp_run import SAMPLES_FILE, SamplingRun, distinct_share
    from mpsched.lab import analysis
    from mpsched.lab.scenario import load

    sc = dataclasses.replace(load(VARIANTS["steered"], fabric=True), duration_s=SECONDS)
    raw = SamplingRun(sc, "ecmp", 0, tmp_path).execute()
    samples = json.loads((tmp_path / SAMPLES_FILE).read_text())
    late = [s for s in samples if s["t"] >= SECONDS / 2]
    assert late and all(s["steering"] for s in late)
    pairs = set()
    for conn in late[-1]["connections"]:
        subflows = conn["subflows"]
        pairs.add((subflows[0]["src"], subflows[0]["dst"]))
        assert len(subflows) == 2, conn
    assert pairs == {("10.0.1.1", "10.0.3.1"), ("10.0.2.1", "10.0.4.1")}
    distinct, counted = distinct_share(samples)
    assert counted >= len(late) * 2 and distinct == counted, samples
    result = analysis.analyse(raw)
    for pair in ("leaf1->leaf3", "leaf2->leaf4"):
        got = result.pairs[pair]
        assert got["mptcp_capacity_mbps"] > 0 and got["mptcp_goodput_mbps"] > 0, got
    assert result.metrics["mptcp_goodput_frac"] > 0
