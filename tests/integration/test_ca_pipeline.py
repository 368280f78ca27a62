"""The congestion-aware mode CA in the pipeline binding (src/mpsched/p4rt/pipeline/): the
ca_params table, its @ca_units annotation, the "congestion" feature and mode "ca" — on a
synthetic P4Info with the real program's shape, and on the compiled program when it has
the table."""

from __future__ import annotations

import pytest

from mpsched.controller.policies.ca import ca_fixed_point
from mpsched.p4rt import pipeline as pl
from mpsched.p4rt.p4info import P4Info
from mpsched.p4rt.pipeline import Pipeline


@pytest.mark.integration
def test_controller_writes_ca_params_to_bmv2(switch, artifacts):
    """On the compiled program in BMv2: policy ca puts the class's ca_params entry (the
    placement's fixed-point cost) and path_weights in mode CA on the switch; a removed CA
    class's entry is deleted."""
    from mpsched.controller.app.core import Controller, ControllerSettings
    from mpsched.controller.scheduling.classes import (
        DEFAULT_CLASS_ID,
        ClassPolicy,
        Match,
        TrafficClass,
    )
    from mpsched.controller.telemetry.estimators import TelemetryConfig
    from mpsched.netcfg import NetCfg
    from mpsched.p4rt.client import param_value
    from mpsched.p4rt.p4info import decode_uint
    from tests.integration.test_controller_bmv2 import reader, s1_config

    pipeline = Pipeline(P4Info.from_file(artifacts.p4info))
    # build/p4 is the full profile (`make p4`, run by `make unit/integration/ptf`): every
    # stage is in it, so a missing congestion stage is a regression, not a reason to skip
    assert pipeline.has_congestion, (
        f"build/p4 has no {pl.TABLE_CA}: the full program lost its congestion stage (or "
        "build/p4 was compiled with -DNO_CONGESTION by hand; `make p4` rebuilds it)")
    sw, _ = switch
    ctl = Controller(
        NetCfg.from_dict({"switches": [s1_config(sw)]}),
        pipeline,
        str(artifacts.bmv2_json),
        ControllerSettings(poll_interval=0.2, telemetry=TelemetryConfig(probe_interval_s=None)),
    )
    ctl.start()
    client, p4info = reader(sw, artifacts)
    try:
        assert ctl.agents[0].wait_ready(10), ctl.agents[0].status

        def held() -> dict[int, dict[str, int]]:
            """class id -> set_ca parameters of the entries towards s2 (edge 2), the only
            destination edge of s1; an entry towards another edge fails here."""
            assert {decode_uint(e.match[0].exact.value)
                    for e in client.read_table(pl.TABLE_CA)} <= {2}  # keys: dst_edge, class_id
            return {
                decode_uint(e.match[1].exact.value): {
                    p.name: param_value(e, p.id)
                    for p in p4info.action_params(pl.ACTION_SET_CA)
                }
                for e in client.read_table(pl.TABLE_CA)
            }

        assert held() == {}
        ctl.set_class_policy(DEFAULT_CLASS_ID, {"name": "ca"})
        placement = ctl.scheduler.placement_of("s1", DEFAULT_CLASS_ID)
        want = ca_fixed_point(placement.ca, pipeline.max_paths, pipeline.ca_units)
        assert held() == {0: want}
        # capacity: the configured rate (10 Mbit/s) until measured
        units = pipeline.ca_units
        window_bytes = 10 * 125 * units["rate_window_us"] / 1000
        assert want["inv_capacity_1"] == round(2**32 * units["rate_unit_bytes"] / window_bytes)
        assert want["c_qdelay"] == 256
        (weights,) = client.read_table(pl.TABLE_WEIGHTS)
        mode = p4info.action_param(pl.ACTION_SET_WEIGHTS, "mode")
        assert param_value(weights, mode.id) == pipeline.modes["ca"]

        voip = TrafficClass(5, "voip", match=Match(dscp=46), policy=ClassPolicy("ca"))
        ctl.set_classes([TrafficClass(DEFAULT_CLASS_ID, "default"), voip])
        assert set(held()) == {0, 5}
        ctl.set_classes([TrafficClass(DEFAULT_CLASS_ID, "default")])
        assert set(held()) == {0}
    finally:
        client.close()
        ctl.stop()
