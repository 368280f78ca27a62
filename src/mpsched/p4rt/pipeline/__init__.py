"""The P4 program's control-plane interface, bound to its P4Info.

The package is the only place that names the program's tables, actions, counters,
registers and digests (names.py). Binding (binding.py) checks every name against the P4Info
and derives the number of paths from it, so the controller, the PTF tests and the
integration tests all agree with the compiled program. `Pipeline` adds to the binding the
builders of the entries, by table group (forwarding.py, placement.py, monitoring.py), and
the probe frames (probes.py); ports.py reads the switch's special ports.

Every name of names.py is importable from here, as are the classes and functions below.
"""

from __future__ import annotations

from mpsched.p4rt.pipeline.binding import FeatureAbsentError as FeatureAbsentError
from mpsched.p4rt.pipeline.binding import program_features as program_features
from mpsched.p4rt.pipeline.forwarding import ForwardingEntries
from mpsched.p4rt.pipeline.monitoring import MonitoringEntries
from mpsched.p4rt.pipeline.names import *  # noqa: F403
from mpsched.p4rt.pipeline.placement import PlacementEntries
from mpsched.p4rt.pipeline.ports import program_cpu_port as program_cpu_port
from mpsched.p4rt.pipeline.ports import program_probe_port as program_probe_port
from mpsched.p4rt.pipeline.ports import special_ports as special_ports
from mpsched.p4rt.pipeline.probes import ProbeFrames


class Pipeline(ForwardingEntries, PlacementEntries, MonitoringEntries, ProbeFrames):
    """Builders for the program's table entries, checked against one P4Info.

    `drop_reasons` maps each drop reason's name (lower case, e.g. "ipv4_checksum") to its
    index in the COUNTER_DROP_REASON counter; `drop_counts()` turns a read of that counter
    into counts by name. (A controller reads it with
    `pipeline.drop_counts(client.read_counter(COUNTER_DROP_REASON))`.)

    `features` holds the optional stages (OPTIONAL_FEATURES) the program was compiled with;
    `tables` the tables of ALL_TABLES it has. Without the RTT monitor, rtt_config() and
    rtt_report_digest() raise FeatureAbsentError; without MPTCP, subflow_pin() does,
    `mptcp_digests` is empty and `max_pins` is 0; without congestion, ca_params() and
    weights(..., mode="ca") do and `ca_units` is empty. A present feature is checked in full.
    """

