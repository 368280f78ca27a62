"""The congestion-aware mode CA in the pipeline binding (src/mpsched/p4rt/pipeline/): the
ca_params table, its @ca_units annotation, the "congestion" feature and mode "ca" — on a
synthetic P4Info with the real program's shape, and on the compiled program when it has
the table."""

from __future__ import annotations

import pytest

from mpsched.controller.model.decision import CaCost, CaPath
from mpsched.controller.policies.ca import ca_fixed_point
from mpsched.p4rt import pipeline as pl
from mpsched.p4rt.p4info import P4Info, P4InfoError
from mpsched.p4rt.pipeline import FeatureAbsentError, Pipeline, program_features
from tests.fake_p4rt import CA_UNITS, MAX_PATHS, synthetic_p4info


def _without_congestion(info):
    """The synthetic P4Info as -DNO_CONGESTION compiles it: no ca_params table, no set_ca or
    no_ca action; the policy_mode_t enum keeps CA (defines.p4)."""
    table = next(t for t in info.tables if t.preamble.name == pl.TABLE_CA)
    info.tables.remove(table)
    for name in (pl.ACTION_SET_CA, pl.ACTION_NO_CA):
        action = next(a for a in info.actions if a.preamble.name == name)
        info.actions.remove(action)
    return info


def _ca_table(info):
    return next(t for t in info.tables if t.preamble.name == pl.TABLE_CA)


def test_congestion_feature_follows_the_table():
    info = synthetic_p4info()
    assert pl.FEATURE_CONGESTION in program_features(P4Info(info))
    pipeline = Pipeline(P4Info(info))
    assert pipeline.has_congestion
    assert pl.TABLE_CA in pipeline.tables
    assert pipeline.modes["ca"] == 4
    assert pipeline.ca_units == CA_UNITS
    assert pipeline.ca_params_names[:5] == list(pl.CA_COEFFICIENTS)
    assert pipeline.ca_params_names[5:] == [
        f"{n}_{i}" for n in pl.CA_PATH_PARAMS for i in range(1, MAX_PATHS + 1)
    ]

    bare = Pipeline(P4Info(_without_congestion(synthetic_p4info())))
    assert pl.FEATURE_CONGESTION not in bare.features
    assert not bare.has_congestion
    assert pl.TABLE_CA not in bare.tables
    assert bare.ca_units == {} and bare.ca_params_names == []


def test_ca_params_entry():
    pipeline = Pipeline(P4Info(synthetic_p4info()))
    params = {"c_qdelay": 256, "offset_2": 700, "inv_capacity_4": 2**32 - 1}
    entry = pipeline.ca_params(2, 3, params)
    assert (entry.table, entry.action) == (pl.TABLE_CA, pl.ACTION_SET_CA)
    assert entry.match == {"dst_edge": 2, "class_id": 3}
    assert list(entry.params) == pipeline.ca_params_names
    assert entry.params["c_qdelay"] == 256
    assert entry.params["offset_2"] == 700
    assert entry.params["inv_capacity_4"] == 2**32 - 1
    assert entry.params["c_loss"] == 0 and entry.params["offset_1"] == 0
    # {}: all zero, the same as the table's default no_ca (the key a cleanup deletes)
    assert set(pipeline.ca_params(2, 3, {}).params.values()) == {0}


def test_ca_params_from_the_fixed_point_builder():
    """ca_fixed_point's names are exactly set_ca's, in the program's units."""
    pipeline = Pipeline(P4Info(synthetic_p4info()))
    cost = CaCost(paths={1: CaPath(0.0, 100.0), 4: CaPath(1500.0, None)})
    fixed = ca_fixed_point(cost, pipeline.max_paths, pipeline.ca_units)
    entry = pipeline.ca_params(2, 0, fixed)
    assert entry.params == fixed
    assert entry.params["offset_4"] == 1500 and entry.params["inv_capacity_4"] == 0


@pytest.mark.parametrize(
    ("params", "named"),
    [
        ({"c_qdelay": -1}, "c_qdelay"),
        ({"epsilon": 2**32}, "epsilon"),
        ({"max_age_us": 1.5}, "max_age_us"),
        ({"c_util": True}, "c_util"),
        ({"offset_5": 1}, "offset_5: path 5 outside 1..4"),
        ({"inv_capacity_0": 1}, "inv_capacity_0: path 0 outside"),
        ({"gain": 1}, "gain: not a parameter"),
    ],
)
def test_ca_params_refuses_bad_values_naming_the_parameter(params, named):
    pipeline = Pipeline(P4Info(synthetic_p4info()))
    with pytest.raises(ValueError, match=named):
        pipeline.ca_params(2, 0, params)


def test_ca_params_refuses_a_bad_class():
    pipeline = Pipeline(P4Info(synthetic_p4info()))
    with pytest.raises(ValueError, match="class id"):
        pipeline.ca_params(2, pipeline.max_classes, {})


def test_mode_ca_needs_the_feature():
    pipeline = Pipeline(P4Info(synthetic_p4info()))
    assert pipeline.weights(2, 0, {1: 1, 2: 1}, "ca", 1000).params["mode"] == 4
    bare = Pipeline(P4Info(_without_congestion(synthetic_p4info())))
    assert bare.weights(2, 0, {1: 1}, "flowlet", 1000).params["mode"] == 1
    with pytest.raises(FeatureAbsentError, match='mode "ca".*NO_CONGESTION'):
        bare.weights(2, 0, {1: 1}, "ca", 1000)
    with pytest.raises(FeatureAbsentError, match="NO_CONGESTION"):
        bare.ca_params(2, 0, {})


def test_ca_units_annotation_checked():
    """Without @ca_units, or with a unit missing or 0, the binding fails naming the table."""
    info = synthetic_p4info()
    del _ca_table(info).preamble.structured_annotations[:]
    with pytest.raises(P4InfoError, match=f"table {pl.TABLE_CA} lacks"):
        Pipeline(P4Info(info))
    info = synthetic_p4info()
    kvs = _ca_table(info).preamble.structured_annotations[0].kv_pair_list.kv_pairs
    next(kv for kv in kvs if kv.key == "coef_one").value.int64_value = 0
    with pytest.raises(P4InfoError, match=r"not positive \['coef_one'\]"):
        Pipeline(P4Info(info))
    info = synthetic_p4info()
    kvs = _ca_table(info).preamble.structured_annotations[0].kv_pair_list.kv_pairs
    del kvs[0]
    with pytest.raises(P4InfoError, match=r"missing \['rate_window_us'\]"):
        Pipeline(P4Info(info))


def test_set_ca_parameters_checked():
    """A set_ca whose parameters are not coefficients, offsets, inverse capacities (in that
    order, one per path) fails the binding."""
    info = synthetic_p4info()
    action = next(a for a in info.actions if a.preamble.name == pl.ACTION_SET_CA)
    action.params[0].name, action.params[1].name = "c_loss", "c_qdelay"
    with pytest.raises(P4InfoError, match=f"{pl.ACTION_SET_CA} has parameters"):
        Pipeline(P4Info(info))
    info = synthetic_p4info()
    modes = info.type_info.serializable_enums[pl.ENUM_POLICY_MODE]
    del modes.members[-1]
    with pytest.raises(P4InfoError, match="has no CA"):
        Pipeline(P4Info(info))


def test_compiled_program_has_ca(artifacts):
    """The compiled program's ca_params: its units, its parameters, an entry of the defaults."""
    p4info = P4Info.from_file(artifacts.p4info)
    pipeline = Pipeline(p4info)
    # build/p4 is the full profile (`make p4`, run by `make unit/integration/ptf`): every
    # stage is in it, so a missing congestion stage is a regression, not a reason to skip
    assert pipeline.has_congestion, (
        f"build/p4 has no {pl.TABLE_CA}: the full program lost its congestion stage (or "
        "build/p4 was compiled with -DNO_CONGESTION by hand; `make p4` rebuilds it)")
    assert set(pipeline.ca_units) == set(pl.CA_UNITS)
    # the fake P4Info of the unit tests declares the compiled program's units, value for value
    assert pipeline.ca_units == CA_UNITS
    assert "ca" in pipeline.modes
    for name in pipeline.ca_params_names:
        assert p4info.action_param(pl.ACTION_SET_CA, name).bitwidth == 32
    fixed = ca_fixed_point(CaCost(paths={1: CaPath(0.0, 10.0)}), pipeline.max_paths,
                           pipeline.ca_units)
    entry = pipeline.ca_params(2, 1, fixed)
    assert entry.params["c_qdelay"] == 256 and entry.params["inv_capacity_1"] > 0


# -- the controller writes, cleans and reconciles ca_params (fake P4Runtime server) --------


def _ca_entries(server, p4info) -> dict[int, dict[str, int]]:
    """class id -> set_ca parameters, of the ca_params entries the fake switch holds."""
    from mpsched.p4rt.client import param_value
    from mpsched.p4rt.p4info import decode_uint

    out = {}
    for (tid, _), entry in server.servicer.entries.items():
        if tid == p4info.table_id(pl.TABLE_CA):
            cid = decode_uint(entry.match[1].exact.value)  # keys: dst_edge, class_id
            out[cid] = {
                p.name: param_value(entry, p.id) for p in p4info.action_params(pl.ACTION_SET_CA)
            }
    return out


def _mode(server, p4info, class_id: int) -> int:
    from mpsched.p4rt.client import param_value
    from mpsched.p4rt.p4info import decode_uint

    mode = p4info.action_param(pl.ACTION_SET_WEIGHTS, "mode")
    for (tid, _), entry in server.servicer.entries.items():
        if tid == p4info.table_id(pl.TABLE_WEIGHTS) and (
            decode_uint(entry.match[1].exact.value) == class_id  # keys: dst_edge, class_id
        ):
            return param_value(entry, mode.id)
    raise AssertionError(f"no path_weights entry of class {class_id}")


def test_controller_writes_and_cleans_ca_params(server, p4info, tmp_path):
    """A class in mode ca gets its ca_params entry (before its path_weights entry switches to
    mode ca), a removed class's entry is deleted, and a restarted controller deletes a stray
    one (the table is reconciled like mvqs_params)."""
    from mpsched.controller.scheduling.classes import (
        DEFAULT_CLASS_ID,
        ClassPolicy,
        Match,
        TrafficClass,
    )
    from mpsched.p4rt.client import P4RuntimeClient
    from tests.unit.controller.test_southbound_fake import _one_switch_controller

    ctl = _one_switch_controller(server, p4info, tmp_path)
    ctl.start()
    try:
        assert ctl.agents[0].wait_ready(5)
        assert _ca_entries(server, p4info) == {}  # ecmp: nothing in ca_params
        ctl.set_class_policy(DEFAULT_CLASS_ID, {"name": "ca"})
        assert _mode(server, p4info, 0) == 4
        fixed = _ca_entries(server, p4info)[0]
        assert fixed["c_qdelay"] == 256 and fixed["max_age_us"] == 500_000
        view = ctl.traffic_class(DEFAULT_CLASS_ID).placement["s1"]
        assert view.mode == "ca" and view.ca["epsilon_us"] == 2000.0
        decision = ctl.decisions(0, 10).decisions[-1]
        assert decision["mode"] == "ca" and "| ca: " in decision["reason"]

        voip = TrafficClass(5, "voip", match=Match(dscp=46), policy=ClassPolicy("ca"))
        ctl.set_classes([TrafficClass(DEFAULT_CLASS_ID, "default"), voip])
        assert set(_ca_entries(server, p4info)) == {0, 5}
        ctl.set_classes([TrafficClass(DEFAULT_CLASS_ID, "default")])
        assert set(_ca_entries(server, p4info)) == {0}  # class 5's deleted with it
    finally:
        ctl.stop()

    pipeline = Pipeline(p4info)
    with P4RuntimeClient(server.address, 1, p4info) as client:
        client.insert(pipeline.ca_params(2, 9, {"c_qdelay": 1}))
    assert set(_ca_entries(server, p4info)) == {0, 9}
    again = _one_switch_controller(server, p4info, tmp_path)
    again.start()
    try:
        assert again.agents[0].wait_ready(5)
        assert again.agents[0].programmed.how == "reconciled"
        assert set(_ca_entries(server, p4info)) == set()  # ecmp again: stray and stale gone
    finally:
        again.stop()


def test_controller_without_congestion_refuses_mode_ca(server, tmp_path):
    """On a program without the feature, policy ca is refused naming the field, and the
    controller neither writes nor reconciles ca_params."""
    from mpsched.controller.app.core import Controller, ControllerSettings
    from mpsched.controller.model.errors import FieldError
    from mpsched.controller.scheduling.classes import DEFAULT_CLASS_ID
    from tests.unit.controller.test_southbound_fake import _net

    p4info = P4Info(_without_congestion(synthetic_p4info()))
    json_file = tmp_path / "p.json"
    json_file.write_text("{}")
    net = _net(server.address)
    with pytest.raises(FieldError, match="NO_CONGESTION"):
        Controller(
            type(net)(switches=net.switches[:1]),
            Pipeline(p4info),
            str(json_file),
            ControllerSettings(default_policy="ca"),
        )
    ctl = Controller(
        type(net)(switches=net.switches[:1]),
        Pipeline(p4info),
        str(json_file),
        ControllerSettings(poll_interval=0.05, write_timeout=2),
    )
    ctl.start()
    try:
        assert ctl.agents[0].wait_ready(5)
        with pytest.raises(FieldError) as err:
            ctl.set_class_policy(DEFAULT_CLASS_ID, {"name": "ca"})
        assert err.value.field == "policy.name"
        ctl.set_class_policy(DEFAULT_CLASS_ID, {"name": "letflow"})
        assert _mode(server, p4info, 0) == 1
    finally:
        ctl.stop()
