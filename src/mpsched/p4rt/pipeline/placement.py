"""The placement entries: a class's weights and mode towards an edge, the clone sessions of
SYN copies, the traffic classifier, and the MVQS and congestion-aware parameters."""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping

from mpsched.p4profiles import FEATURE_CONGESTION
from mpsched.p4rt.client import CloneSession, MatchValue, TableEntry
from mpsched.p4rt.pipeline.binding import PipelineBinding
from mpsched.p4rt.pipeline.names import (
    ACTION_SET_CA,
    ACTION_SET_CLASS,
    ACTION_SET_MVQS,
    ACTION_SET_WEIGHTS,
    CA_PATH_PARAMS,
    MODE_CA,
    MVQS_PARAMS,
    TABLE_CA,
    TABLE_MVQS,
    TABLE_TRAFFIC_CLASS,
    TABLE_WEIGHTS,
)
from mpsched.p4rt.weights import bucket_ends


class PlacementEntries(PipelineBinding):
    """Builders of the placement tables' entries."""

    def _class_key(self, dst_edge: int, class_id: int) -> dict[str, MatchValue]:
        if not 0 <= class_id < self.max_classes:
            raise ValueError(f"class id {class_id} outside 0..{self.max_classes - 1}")
        return {"dst_edge": self._edge(dst_edge), "class_id": class_id}

    def weights(
        self,
        dst_edge: int,
        class_id: int,
        weights: Mapping[int, int],
        mode: str = "hash",
        flowlet_gap_us: int = 0,
        syn_copy: bool = False,
    ) -> TableEntry:
        """The placement entry of a class towards edge dst_edge: weights maps path id
        (1-based, dst_edge's paths) -> weight;
        mode one of self.modes ("hash", "flowlet", "rr", "vq", "ca"); the flowlet gap in µs;
        syn_copy: a TCP SYN also goes, as a copy, onto another usable path (the clone
        sessions of `copy_session`). Mode "ca" without the congestion feature raises
        FeatureAbsentError."""
        if mode == MODE_CA:
            self._require(FEATURE_CONGESTION, f'mode "{MODE_CA}"')
        unknown = [p for p in weights if not 1 <= p <= self.max_paths]
        if unknown:
            raise ValueError(f"path ids {unknown} outside 1..{self.max_paths}")
        key = self._class_key(dst_edge, class_id)
        if mode not in self.modes:
            raise ValueError(f"mode {mode!r} is not one of {sorted(self.modes)}")
        if not 0 <= flowlet_gap_us < 1 << 32:
            raise ValueError(f"flowlet gap {flowlet_gap_us} µs outside 0..2^32-1")
        ends = bucket_ends([weights.get(p, 0) for p in range(1, self.max_paths + 1)])
        params: dict[str, int] = dict(zip(self.weight_params, ends, strict=True))
        # bit i-1: path i owns buckets (end_i > end_{i-1}), derived from the same ends
        params["weighted_paths"] = sum(
            1 << i for i, end in enumerate(ends) if end > (ends[i - 1] if i else 0)
        )
        params["mode"] = self.modes[mode]
        params["flowlet_gap_us"] = flowlet_gap_us
        params["syn_copy"] = int(syn_copy)
        return TableEntry(TABLE_WEIGHTS, key, ACTION_SET_WEIGHTS, params)

    def copy_session(self, dst_edge: int, path_id: int, port: int) -> CloneSession:
        """The clone session through which a SYN's copy leaves on path `path_id` towards edge
        `dst_edge` (its port, as path_nexthop's): session id edge_path_index(dst_edge,
        path_id), the EDGE_PATH cell the egress clones to (p4src/include/ingress.p4)."""
        return CloneSession(self.edge_path_index(self._edge(dst_edge), self._path(path_id)),
                            port)

    def traffic_class(
        self,
        class_id: int,
        priority: int,
        dscp: int | None = None,
        src: str | None = None,
        dst: str | None = None,
        protocol: int | None = None,
        src_port: tuple[int, int] | None = None,
        dst_port: tuple[int, int] | None = None,
    ) -> TableEntry:
        """A classifier entry: packets matching every given field (None: any) get class_id;
        prefixes as "a.b.c.d/len", ports as inclusive (low, high). Higher priority wins."""
        if not 0 < class_id < self.max_classes:
            raise ValueError(f"class id {class_id} outside 1..{self.max_classes - 1}")
        if priority < 1:
            raise ValueError(f"priority {priority} < 1")
        match: dict[str, MatchValue] = {}
        if dscp is not None:
            match["dscp"] = (dscp, 0x3F)
        for key, prefix in (("src_addr", src), ("dst_addr", dst)):
            if prefix is not None:
                net = ipaddress.IPv4Network(prefix)
                if net.prefixlen:
                    match[key] = (str(net.network_address), int(net.netmask))
        if protocol is not None:
            match["protocol"] = (protocol, 0xFF)
        for key, ports in (("src_port", src_port), ("dst_port", dst_port)):
            if ports is not None and ports != (0, 0xFFFF):
                match[key] = ports
        return TableEntry(
            TABLE_TRAFFIC_CLASS, match, ACTION_SET_CLASS, {"class_id": class_id}, priority=priority
        )

    def mvqs_params(
        self, dst_edge: int, class_id: int, paths: Mapping[int, tuple[int, int, int, int]]
    ) -> TableEntry:
        """The MVQS parameters of a class in mode "vq" towards edge dst_edge: path id ->
        (pad_us, bdp_bytes,
        us_per_kbyte, drain_1024us) (mvqs.p4); paths not given get zeros."""
        unknown = [p for p in paths if not 1 <= p <= self.max_paths]
        if unknown:
            raise ValueError(f"path ids {unknown} outside 1..{self.max_paths}")
        params: dict[str, int] = {}
        for i in range(1, self.max_paths + 1):
            values = paths.get(i, (0, 0, 0, 0))
            for name, value in zip(MVQS_PARAMS, values, strict=True):
                if not 0 <= value < 1 << 32:
                    raise ValueError(f"{name} of path {i} = {value} outside 0..2^32-1")
                params[f"{name}_{i}"] = int(value)
        key = self._class_key(dst_edge, class_id)
        return TableEntry(TABLE_MVQS, key, ACTION_SET_MVQS, params)

    def ca_params(self, dst_edge: int, class_id: int, params: Mapping[str, int]) -> TableEntry:
        """The congestion-aware parameters of a class in mode "ca" towards edge dst_edge
        (ca_select.p4): `params`
        maps set_ca's parameter names (self.ca_params_names: c_qdelay, c_loss, c_util,
        epsilon, max_age_us, offset_i, inv_capacity_i; see controller.policies.ca
        .ca_fixed_point) to integers 0..2^32-1; a name not given is 0. ValueError naming the
        parameter for an unknown name, a path index outside 1..max_paths or a value out of
        range; FeatureAbsentError without the congestion feature."""
        self._require(FEATURE_CONGESTION, TABLE_CA)
        key = self._class_key(dst_edge, class_id)
        known = set(self.ca_params_names)
        for name in params:
            if name not in known:
                base, _, index = name.rpartition("_")
                if base in CA_PATH_PARAMS and index.isdigit():
                    raise ValueError(f"{name}: path {index} outside 1..{self.max_paths}")
                raise ValueError(f"{name}: not a parameter of {ACTION_SET_CA}")
        out: dict[str, int] = {}
        for name in self.ca_params_names:
            value = params.get(name, 0)
            if isinstance(value, bool) or not isinstance(value, int):
                raise ValueError(f"{name} = {value!r} is not an integer")
            if not 0 <= value < 1 << 32:
                raise ValueError(f"{name} = {value} outside 0..2^32-1")
            out[name] = value
        return TableEntry(TABLE_CA, key, ACTION_SET_CA, out)
