"""The inputs of one ingress edge switch for one control period (`SwitchView`): what telemetry
assembles and the scheduler decides over."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from mpsched.controller.model.paths import PathState


@dataclass(frozen=True)
class SwitchView:
    """The inputs of one ingress edge switch for one period."""

    switch: str
    paths: Sequence[PathState]  # its paths, by path id, as seen for its outgoing traffic
    flow_ooo: Mapping[int, int]  # path -> cumulative flow_ooo at the far egress edge
