"""Compile-time profiles of the P4 program (p4src/include/defines.p4, `make p4 P4_PROFILE=...`):
each compiles without warnings to a valid P4Info, and the controller's Pipeline binds to it
and tells which optional stages it has."""

from __future__ import annotations

import subprocess

import pytest

from mpsched import addressing as ap
from mpsched.p4profiles import BY_NAME, FULL
from mpsched.p4rt.p4info import P4Info
from mpsched.p4rt.pipeline import (
    ALL_TABLES,
    DIGEST_PATH_REPORT,
    FEATURE_CONGESTION,
    FEATURE_MPTCP,
    FEATURE_RTT_MONITOR,
    TABLE_CA,
    TABLE_RTT_CONFIG,
    TABLE_SUBFLOW_PIN,
    FeatureAbsentError,
    Pipeline,
)
from mpsched.proc.layout import REPO_ROOT
from tests.conftest import require

pytestmark = pytest.mark.integration

MAIN_P4 = REPO_ROOT / "p4src" / "main.p4"


def compile_profile(out, defines: list[str]) -> subprocess.CompletedProcess:
    """p4c as `make p4 P4_PROFILE=...` runs it, into out/."""
    return subprocess.run(
        ["p4c", "--target", "bmv2", "--arch", "v1model", "--std", "p4-16", *defines,
         "-o", str(out), "--p4runtime-files", str(out / "main.p4info.txt"), str(MAIN_P4)],
        capture_output=True, text=True, timeout=300, check=False,
    )


@pytest.fixture(scope="module", params=sorted(BY_NAME))
def profile(request, tmp_path_factory) -> tuple[str, Pipeline]:
    require("p4c")
    name = request.param
    out = tmp_path_factory.mktemp(f"p4-{name}")
    run = compile_profile(out, list(BY_NAME[name].defines))
    assert run.returncode == 0, run.stderr
    assert "warning" not in run.stderr.lower(), run.stderr
    assert (out / "main.json").is_file()
    PROFILE_DIRS[name] = out
    return name, Pipeline(P4Info.from_file(out / "main.p4info.txt"))


PROFILE_DIRS: dict = {}  # profile -> the directory the fixture compiled it into


def test_profile_binds_with_its_features(profile):
    name, pipeline = profile
    assert pipeline.features == BY_NAME[name].features
    if name == FULL:
        assert pipeline.tables == ALL_TABLES
    assert pipeline.max_paths == 4
    # Path telemetry keeps its digest layout (flow_ooo stays, 0 without per-flow order).
    _, members = pipeline.path_report_digest()
    assert "flow_ooo" in members, DIGEST_PATH_REPORT
    entry = pipeline.weights(2, 0, {1: 1, 2: 1}, "flowlet", 500)
    assert entry.table in pipeline.tables


def test_profile_without_rtt_monitor(profile):
    _, pipeline = profile
    if FEATURE_RTT_MONITOR in pipeline.features:
        assert pipeline.rtt_config(1, 1, 0).table == TABLE_RTT_CONFIG
        assert pipeline.rtt_report_digest()[1]
        return
    assert TABLE_RTT_CONFIG not in pipeline.tables
    with pytest.raises(FeatureAbsentError, match="NO_RTT_MONITOR"):
        pipeline.rtt_config(1, 1, 0)
    with pytest.raises(FeatureAbsentError, match="NO_RTT_MONITOR"):
        pipeline.rtt_report_digest()


def test_profile_without_mptcp(profile):
    _, pipeline = profile
    if FEATURE_MPTCP in pipeline.features:
        assert pipeline.max_pins > 0 and len(pipeline.mptcp_digests) == 3
        assert TABLE_SUBFLOW_PIN in pipeline.tables
        return
    assert pipeline.max_pins == 0 and pipeline.mptcp_digests == {}
    assert TABLE_SUBFLOW_PIN not in pipeline.tables
    with pytest.raises(FeatureAbsentError, match="NO_MPTCP"):
        pipeline.subflow_pin(ap.H1_IP, ap.H2_IP, 1, 2, 1)


def test_profile_without_congestion(profile):
    _, pipeline = profile
    if FEATURE_CONGESTION in pipeline.features:
        assert pipeline.ca_params(2, 0, {"c_qdelay": 256}).table == TABLE_CA
        assert pipeline.weights(2, 0, {1: 1}, "ca", 500).table in pipeline.tables
        return
    assert TABLE_CA not in pipeline.tables
    with pytest.raises(FeatureAbsentError, match="NO_CONGESTION"):
        pipeline.ca_params(2, 0, {})
    with pytest.raises(FeatureAbsentError, match="NO_CONGESTION"):
        pipeline.weights(2, 0, {1: 1}, "ca", 500)


def test_the_controller_programs_the_profile_on_bmv2(profile, switch):
    """The controller brings a BMv2 running the profile to its state (the entries of the
    stages the profile has, their digests) and writes weights to it."""
    import time

    from mpsched.controller.app.core import Controller, ControllerSettings
    from mpsched.controller.telemetry.estimators import TelemetryConfig
    from mpsched.netcfg import NetCfg
    from tests.integration.test_controller_bmv2 import s1_config

    name, pipeline = profile
    sw, _ = switch
    ctl = Controller(
        NetCfg.from_dict({"switches": [s1_config(sw)]}),
        pipeline,
        str(PROFILE_DIRS[name] / "main.json"),
        ControllerSettings(poll_interval=0.2, telemetry=TelemetryConfig(probe_interval_s=None)),
    )
    ctl.start()
    try:
        assert ctl.agents[0].wait_ready(10), ctl.agents[0].status
        assert ctl.agents[0].programmed.how == "pushed"
        assert ctl.set_weight(2, 0).weight == 0
        time.sleep(0.5)  # a counter poll or two
        assert ctl.agents[0].status.state == "ready", ctl.agents[0].status
    finally:
        ctl.stop()
