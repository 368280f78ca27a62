"""What the operator's writes answer beyond the resource they changed (PUT
/paths/{id}/admin, /links/{id}/admin, /classes/{id}/policy): the resource's view
(northbound/views.py) and what the write meant more than it said."""

from __future__ import annotations

from mpsched.controller.northbound.views import LinkView, PathView, PolicyView


class PathChangeView(PathView):
    """PUT /paths/{id}/admin: the path after the change, and `warnings`: one per pair of
    edges (per switch with two edges) left with no usable path, `"<pair>: ..."` ([] when
    every pair has one)."""

    warnings: list[str]


class LinkChangeView(LinkView):
    """PUT /links/{id}/admin: the link after the change, and `warnings` as for a path's admin
    state: the pairs of edges the fabric's routing leaves without a usable path."""

    warnings: list[str]


class PolicyChangeView(PolicyView):
    """PUT /classes/{id}/policy: the policy after the change, and the class's parameter
    overrides a change of policy dropped (those the new policy does not have, or does not
    take as they were; [] when none was)."""

    dropped_params: list[str]
