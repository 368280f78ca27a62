"""What one class's decision becomes on one switch (`Placement`), and a placement the switch
must be written with (`Change`); src/mpsched/controller/scheduling/placement.py makes them."""

from __future__ import annotations

from dataclasses import dataclass

from mpsched.controller.model.decision import CaCost


@dataclass(frozen=True)
class Placement:
    """What one class's path_weights (and mvqs_params or ca_params) entry says on one switch.

    `ca` (mode ca only) is the policy's CaCost with offsets and capacities quantised
    (`quantise_ca`), so estimator noise does not rewrite the switch every period; the writer
    turns it into set_ca's parameters with the program's units (`ca_fixed_point`)."""

    weights: tuple[tuple[int, int], ...]  # (path id, weight 0..255), by path id
    mode: str
    flowlet_gap_us: int
    vq: tuple[tuple[int, tuple[int, int, int, int]], ...] = ()  # mode vq: path -> params
    ca: CaCost | None = None  # mode ca: the cost the switch computes
    syn_copy: bool = False  # a SYN's copy onto another usable path (Decision.syn_copy)

    def weight_map(self) -> dict[int, int]:
        return dict(self.weights)

    def vq_map(self) -> dict[int, tuple[int, int, int, int]]:
        return dict(self.vq)


@dataclass(frozen=True)
class Change:
    switch: str
    class_id: int
    placement: Placement
    previous: Placement | None = None  # what the switch had (None: nothing, or unknown)
