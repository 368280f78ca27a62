import pytest

from mpsched.p4rt.p4info import P4Info, P4InfoError, encode_ipv4, encode_mac, encode_uint
from mpsched.p4rt.pipeline import (
    ACTION_SET_REPORT_INTERVAL,
    COUNTER_DROP_REASON,
    COUNTER_TX,
    DIGEST_PATH_REPORT,
    PACKET_OUT,
    TABLE_REPORT_CONFIG,
    TABLE_WEIGHTS,
    Pipeline,
    program_probe_port,
)


def test_canonical_encoding():
    assert encode_uint(0, 9) == b"\x00"
    assert encode_uint(511, 9) == b"\x01\xff"
    # P4Runtime's canonical form drops leading zero bytes (RFC 5737 / 7042 documentation values)
    assert encode_mac("00:00:5e:00:53:01") == b"\x5e\x00\x53\x01"
    assert encode_ipv4("192.0.2.1") == b"\xc0\x00\x02\x01"
    assert encode_ipv4("0.0.2.1") == b"\x02\x01"
    with pytest.raises(ValueError):
        encode_uint(512, 9)
    with pytest.raises(ValueError):
        encode_ipv4("10.0.300.1")


def test_pipeline_binds_to_compiled_p4info(artifacts):
    """Every name the controller uses exists in the compiled program."""
    p4info = P4Info.from_file(artifacts.p4info)
    pipeline = Pipeline(p4info)
    assert pipeline.max_paths >= 2 and pipeline.max_edges >= 2
    # the per-(peer edge, path) counters: EDGE_PATH(edge, path), p4src/include/sizes.p4
    assert p4info.counter_size(COUNTER_TX) == (pipeline.max_edges + 1) * (pipeline.max_paths + 1)
    assert pipeline.edge_path_index(2, 1) == 2 * (pipeline.max_paths + 1) + 1
    entry = pipeline.weights(2, 0, {1: 1, 2: 0})
    assert entry.table == TABLE_WEIGHTS
    assert list(entry.params.values())[:2] == [65536, 65536]
    with pytest.raises(ValueError):
        pipeline.weights(2, 0, {pipeline.max_paths + 1: 1})


def test_path_report_digest_from_compiled_p4info(artifacts):
    """The digest's id and member names (in order) come from the P4Info; the
    test pins the order the design fixes, the code never copies it."""
    from tests.fake_p4rt import PATH_REPORT_MEMBERS

    p4info = P4Info.from_file(artifacts.p4info)
    pipeline = Pipeline(p4info)
    digest_id, names = pipeline.path_report_digest()
    assert digest_id == p4info.digest_id(DIGEST_PATH_REPORT)
    assert p4info.digest_members(DIGEST_PATH_REPORT) == PATH_REPORT_MEMBERS
    assert names == [name for name, _ in PATH_REPORT_MEMBERS]
    entry = pipeline.report_config(3, 2, 10_000)
    assert (entry.table, entry.action) == (TABLE_REPORT_CONFIG, ACTION_SET_REPORT_INTERVAL)
    assert entry.match == {"peer_edge": 3, "path_id": 2}
    assert entry.params == {"interval_us": 10_000}
    with pytest.raises(ValueError, match="path id"):
        pipeline.report_config(1, pipeline.max_paths + 1, 10_000)
    with pytest.raises(ValueError, match="edge id"):
        pipeline.report_config(pipeline.max_edges + 1, 1, 10_000)


def test_unknown_name_fails_loudly(artifacts):
    p4info = P4Info.from_file(artifacts.p4info)
    with pytest.raises(P4InfoError, match="no table named"):
        p4info.table("MpIngress.nope")


def test_drop_reasons_from_compiled_p4info(artifacts):
    """The drop_reason counter and its reasons come from the P4Info, and are exactly the
    DROP_REASONS list of p4src/include/defines.p4 (the one place they are defined)."""
    from mpsched.p4rt.client import CounterValue
    from tests.unit.testing.test_fuzz import p4_drop_reasons

    p4info = P4Info.from_file(artifacts.p4info)
    pipeline = Pipeline(p4info)
    assert pipeline.drop_reasons == p4_drop_reasons()
    assert p4info.counter_size(COUNTER_DROP_REASON) == max(pipeline.drop_reasons.values()) + 1
    code = pipeline.drop_reasons["ipv4_checksum"]
    counts = pipeline.drop_counts({code: CounterValue(3, 180)})
    assert counts["ipv4_checksum"] == CounterValue(3, 180)
    assert counts["truncated"] == CounterValue(0, 0)
    assert set(counts) == set(pipeline.drop_reasons)


def test_drop_reasons_annotation_checked():
    """A drop_reason counter without its annotation, or with a code outside the counter,
    fails the binding naming the counter."""
    from tests.fake_p4rt import synthetic_p4info

    info = synthetic_p4info()
    counter = next(c for c in info.counters if c.preamble.name == COUNTER_DROP_REASON)
    counter.preamble.structured_annotations[0].kv_pair_list.kv_pairs[0].value.int64_value = 9
    with pytest.raises(P4InfoError, match=f"{COUNTER_DROP_REASON}: reason codes"):
        Pipeline(P4Info(info))
    del counter.preamble.structured_annotations[:]
    with pytest.raises(P4InfoError, match=f"counter {COUNTER_DROP_REASON} lacks"):
        Pipeline(P4Info(info))


def test_special_ports_from_compiled_p4info(artifacts):
    """The CPU and probe ports come from the packet_out header's @ports annotation (defined
    once, in p4src/include/defines.p4); the BMv2 processes take the CPU port from there."""
    from mpsched.p4rt.pipeline import PORT_CPU, PORT_PROBE, program_cpu_port, special_ports

    ports = special_ports(P4Info.from_file(artifacts.p4info))
    assert program_cpu_port(artifacts.p4info) == ports[PORT_CPU] > 0
    assert program_cpu_port(artifacts.p4info.parent / "no-such.p4info.txt") is None
    assert ports[PORT_PROBE] not in (ports[PORT_CPU], 0)
    assert Pipeline(P4Info.from_file(artifacts.p4info)).probe_port == ports[PORT_PROBE]
    assert program_probe_port(artifacts.p4info) == ports[PORT_PROBE]
    assert program_probe_port(artifacts.p4info.parent / "no-such.p4info.txt") is None


def test_probe_frame_is_the_packet_out_header_then_the_probe():
    """A frame for the probe port: the packet_out fields packed as BMv2 prepends a PacketOut's
    metadata (here the 8-bit path id), then the probe; a program without @ports has no probe
    port; a malformed @ports fails the binding."""
    from mpsched.p4rt.pipeline import ANNOTATION_PORTS, PACKET_OUT, PROBE_FRAME
    from tests.fake_p4rt import synthetic_p4info

    info = synthetic_p4info()
    pipeline = Pipeline(P4Info(info))
    assert pipeline.probe_port is None
    assert pipeline.probe_frame(3, 2) == bytes([3, 2]) + PROBE_FRAME
    with pytest.raises(ValueError, match="outside"):
        pipeline.probe_frame(pipeline.max_paths + 1, 2)
    header = next(h for h in info.controller_packet_metadata if h.preamble.name == PACKET_OUT)
    ann = header.preamble.structured_annotations.add(name=ANNOTATION_PORTS)
    for key, value in (("CPU_PORT", 255), ("PROBE_PORT", 254)):
        kv = ann.kv_pair_list.kv_pairs.add(key=key)
        kv.value.int64_value = value
    assert Pipeline(P4Info(info)).probe_port == 254
    ann.kv_pair_list.kv_pairs[1].value.int64_value = 255
    with pytest.raises(P4InfoError, match="distinct"):
        Pipeline(P4Info(info))


def test_program_cookie_is_the_same_in_every_process(artifacts):
    """A restarted controller must find the program it pushed: the cookie of the same P4Info
    and JSON may not depend on the process (the C++ protobuf writes type_info's maps in
    another order in each process unless asked for deterministic output)."""
    import subprocess
    import sys

    code = ("from mpsched.p4rt.client import P4RuntimeClient\n"
            "from mpsched.p4rt.p4info import P4Info\n"
            f"c = P4RuntimeClient('127.0.0.1:1', 1, P4Info.from_file({str(artifacts.p4info)!r}))\n"
            f"print(c.program_cookie({str(artifacts.bmv2_json)!r}))\n")
    cookies = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              check=True).stdout for _ in range(3)}
    assert len(cookies) == 1, cookies


def test_edge_path_index_and_the_counters_it_indexes():
    """edge_path_index(edge, path) is the program's EDGE_PATH with max_paths from set_weights'
    bucket ends; a per-(edge, path) counter of another size fails the binding, naming it."""
    from tests.fake_p4rt import MAX_EDGES, MAX_PATHS, synthetic_p4info

    info = synthetic_p4info()
    pipeline = Pipeline(P4Info(info))
    assert (pipeline.max_edges, pipeline.max_paths) == (MAX_EDGES, MAX_PATHS)
    assert [pipeline.edge_path_index(e, p) for e, p in ((0, 0), (1, 1), (2, 4), (8, 4))] == [
        0, MAX_PATHS + 2, 2 * MAX_PATHS + 6, 9 * MAX_PATHS + 8]
    counter = next(c for c in info.counters if c.preamble.name == COUNTER_TX)
    counter.size = MAX_PATHS + 1  # per path id only, as before the fabric
    with pytest.raises(P4InfoError, match=f"{COUNTER_TX} has {MAX_PATHS + 1} cells"):
        Pipeline(P4Info(info))


def test_synthetic_p4info_names_are_the_compiled_ones(artifacts):
    """The fake server's synthetic P4Info (tests/fake_p4rt.py) names what the compiled program
    names, with the same shapes: every table with its match fields (name, width, kind) and
    actions, every action with its parameters, every counter, register and digest, and the
    packet_out header. Unit tests against the fake then speak the real program's names."""
    from tests.fake_p4rt import synthetic_p4info

    fake, real = synthetic_p4info(), P4Info.from_file(artifacts.p4info)
    fake_actions = {a.preamble.id: a.preamble.name for a in fake.actions}
    real_actions = {a.preamble.id: a.preamble.name for a in real.message.actions}
    for table in fake.tables:
        name = table.preamble.name
        compiled = real.table(name)
        assert compiled.preamble.name == name
        assert [(f.name, f.bitwidth, f.match_type) for f in table.match_fields] == [
            (f.name, f.bitwidth, f.match_type) for f in compiled.match_fields
        ], name
        assert {fake_actions[a.id] for a in table.action_refs} <= {
            real_actions[a.id] for a in compiled.action_refs
        }, name
    for action in fake.actions:
        compiled = real.action(action.preamble.name)
        assert compiled.preamble.name == action.preamble.name
        assert [(p.name, p.bitwidth) for p in action.params] == [
            (p.name, p.bitwidth) for p in compiled.params
        ], action.preamble.name
    for counter in fake.counters:
        assert real.counter(counter.preamble.name).preamble.name == counter.preamble.name
    for register in fake.registers:
        assert real.register(register.preamble.name).preamble.name == register.preamble.name
    for digest in fake.digests:
        name = digest.preamble.name
        assert real.digest(name).preamble.name == name
        assert P4Info(fake).digest_members(name) == real.digest_members(name), name
    assert P4Info(fake).packet_metadata(PACKET_OUT) == real.packet_metadata(PACKET_OUT)
