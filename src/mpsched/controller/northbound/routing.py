"""The REST API's route table: every resource, its methods, and for each the handler, the
request model (body or query) and the response model. The router (`Router`, over the
`routes` library's Mapper) and the REST description's generator (openapi.py) both read it,
so the served description lists exactly what is served.

Templates name their one variable ``{id}``, as the description does. Every JSON answer is a
model (northbound/views.py); the index, the description itself and the dashboard's files have
none.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from routes import Mapper

from mpsched.controller.northbound import answers, views
from mpsched.controller.northbound.bodies import (
    AdminBody,
    ClassesBody,
    DecisionsQuery,
    PolicyChanges,
    TelemetryQuery,
    WeightBody,
    params_changes_model,
)

READ_METHODS = frozenset({"GET", "HEAD"})


@dataclass(frozen=True)
class Endpoint:
    """One method of a resource: the `RestApi` method that handles it, the model of its
    JSON body (writes) or of its query parameters (reads), and of its answer."""

    handler: str
    body: Any = None
    query: Any = None
    response: Any = None
    where: str = ""  # prefix of the body's field names in errors (``policy.lm3``)
    public: bool = False  # a read that needs no token even with --read-token (the dashboard)

    @property
    def model(self) -> Any:
        return self.body if self.body is not None else self.query


@dataclass(frozen=True)
class Resource:
    """A path template (``/paths/{id}/weight``) and its endpoints by method."""

    template: str
    methods: Mapping[str, Endpoint] = field(default_factory=dict)


def _get(handler: str, **kw: Any) -> dict[str, Endpoint]:
    return {"GET": Endpoint(handler, **kw)}


ROUTES: tuple[Resource, ...] = (
    Resource("/", _get("index")),
    Resource("/openapi.yaml", _get("openapi")),
    Resource("/paths", _get("get_paths", response=list[views.PathView])),
    Resource("/paths/{id}", _get("get_path", response=views.PathView)),
    Resource("/paths/{id}/weight",
             {"PUT": Endpoint("put_weight", body=WeightBody, response=views.PathView)}),
    Resource("/paths/{id}/admin",
             {"PUT": Endpoint("put_admin", body=AdminBody, response=answers.PathChangeView)}),
    Resource("/paths/{id}/telemetry", _get("get_telemetry", response=views.PathTelemetryView)),
    Resource("/telemetry", _get("get_telemetry_since", query=TelemetryQuery,
                                      response=views.TelemetrySinceView)),
    Resource("/switches", _get("get_switches", response=list[views.SwitchStatusView])),
    Resource("/classes", {"GET": Endpoint("get_classes", response=list[views.ClassView]),
                          "PUT": Endpoint("put_classes", body=ClassesBody,
                                          response=list[views.ClassView])}),
    Resource("/classes/{id}", _get("get_class", response=views.ClassView)),
    Resource("/classes/{id}/policy", {
        "GET": Endpoint("get_class_policy", response=views.PolicyView),
        "PUT": Endpoint("put_class_policy", body=PolicyChanges, where="policy",
                        response=answers.PolicyChangeView),
    }),
    Resource("/classes/{id}/adaptive", _get("get_class_adaptive", response=views.AdaptiveView)),
    Resource("/params", {"GET": Endpoint("get_params", response=views.ParamsView),
                         "PUT": Endpoint("put_params", body=params_changes_model(),
                                  response=views.ParamsView)}),
    Resource("/decisions",
             _get("get_decisions", query=DecisionsQuery, response=views.DecisionsView)),
    Resource("/mptcp/connections", _get("get_mptcp_connections", response=views.ConnectionsView)),
    Resource("/mptcp/connections/{id}",
             _get("get_mptcp_connection", response=views.ConnectionView)),
    Resource("/state", _get("get_state", response=views.StateView)),
    Resource("/links", _get("get_links", response=list[views.LinkView])),
    Resource("/links/{id}/admin",
             {"PUT": Endpoint("put_link_admin", body=AdminBody,
                               response=answers.LinkChangeView)}),
    Resource("/pairs", _get("get_pairs", response=list[views.PairView])),
    Resource("/pairs/{id}", _get("get_pair", response=views.PairView)),
    Resource("/ui", _get("get_ui_index", public=True)),
    Resource("/ui/{id}", _get("get_ui_file", public=True)),
)


class MethodNotAllowedError(Exception):
    """The resource exists but has no such method; `allow` lists the ones it has."""

    def __init__(self, allow: list[str]) -> None:
        super().__init__(", ".join(allow))
        self.allow = allow


class Router:
    """Finds a request's endpoint: (resource, endpoint, the ``{id}`` or None), None when no
    resource matches, `MethodNotAllowedError` when the resource has no such method."""

    def __init__(self, resources: tuple[Resource, ...] = ROUTES) -> None:
        self.resources = {r.template: r for r in resources}
        self.by_method = Mapper(explicit=True)
        self.any_method = Mapper(explicit=True)
        for mapper in (self.by_method, self.any_method):
            mapper.minimization = False
        for r in resources:
            self.any_method.connect(r.template, template=r.template)
            for method in r.methods:
                self.by_method.connect(
                    r.template, template=r.template, conditions={"method": [method]}
                )

    def match(self, path: str, method: str) -> tuple[Resource, Endpoint, str | None] | None:
        found = self.by_method.match(path, environ={"REQUEST_METHOD": method})
        if found is None:
            anywhere = self.any_method.match(path)
            if anywhere is None:
                return None
            raise MethodNotAllowedError(sorted(self.resources[anywhere["template"]].methods))
        resource = self.resources[found["template"]]
        return resource, resource.methods[method], found.get("id")
