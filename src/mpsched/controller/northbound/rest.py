"""The REST API as a plain WSGI application (webob), independent of os-ken.

Every handler validates its input and answers JSON. Errors are
``{"error": <message>, "field": <name or null>}`` with 400 (bad input, the
field named), 401/403 (a write without the right token), 404 (unknown
resource), 405 (with ``Allow``), 409 (a write to a backup controller: the message
names the primary), 413 (body over `MAX_BODY`), 415 (a Content-Type that is not
JSON), 421 (a Host that is not a name of this server, guard.py), or 503 (a switch did not
acknowledge). With a `token`, every PUT/POST/DELETE needs ``Authorization: Bearer <token>``;
GETs stay open unless there is a `read_token`: then every GET but the dashboard's own files
needs the write or the read token (auth.py). Without a token, writes are open too (tests,
loopback demos). Every answer carries the security headers of guard.py. The API is described
by the REST description served at /openapi.yaml, generated from the route table
(routing.py) and the models (openapi.py).

Bodies are strict JSON (jsonbody.py: NaN, infinities, huge numbers, duplicate keys and
deep nesting are refused naming the field; Content-Types other than JSON are 415), checked
against the endpoint's model (bodies.py, named by the route table in routing.py).

A 409 also answers a write a fabric would read otherwise than a two-edge network (a path id's
weight or admin state: path 1 is a different route for every pair); its message names the
fabric's own resources (links, pairs).
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable
from importlib import resources
from typing import Any, Protocol

from webob import Request, Response

from mpsched.controller.model.errors import (
    FieldError,
    NotFoundError,
    NotHereError,
    NotPrimaryError,
    UnavailableError,
)
from mpsched.controller.northbound import auth, openapi, views
from mpsched.controller.northbound.answers import (
    LinkChangeView,
    PathChangeView,
    PolicyChangeView,
)
from mpsched.controller.northbound.bodies import (
    MAX_ID_DIGITS,
    AdminBody,
    ClassesBody,
    DecisionsQuery,
    PolicyChanges,
    TelemetryQuery,
    WeightBody,
    parse,
)
from mpsched.controller.northbound.guard import HostCheck, answer_headers
from mpsched.controller.northbound.jsonbody import (  # noqa: F401 (re-exported)
    MAX_BODY,
    MAX_DEPTH,
    MAX_INT_DIGITS,
    HttpError,
    check_content_type,
    check_tree,
    read_json_object,
)
from mpsched.controller.northbound.routing import (
    READ_METHODS,
    ROUTES,
    Endpoint,
    MethodNotAllowedError,
    Router,
)
from mpsched.controller.scheduling.classes import MAX_CLASSES, TrafficClass, thaw

log = logging.getLogger(__name__)

REST_THREADS = 8  # the server's worker threads (northbound/server.py; --rest-threads)
MAX_REST_THREADS = 64
ENDPOINT_KEY = "mpsched.endpoint"  # the request's Endpoint (routing.py), in its environ


class Backend(Protocol):
    """What the API serves (src/mpsched/controller/app/backend.py `RestBackend`, a part of
    core.py's `Controller`): typed views (northbound/views.py), serialised by
    `json_response`."""

    def paths(self) -> list[views.PathView]: ...
    def path(self, path_id: int) -> views.PathView: ...
    def switches(self) -> list[views.SwitchStatusView]: ...
    def set_weight(self, path_id: int, weight: int) -> views.PathView: ...
    def telemetry(self, path_id: int) -> views.PathTelemetryView: ...
    def telemetry_since(self, since: float, direction: str | None = None
                        ) -> views.TelemetrySinceView: ...
    def set_admin(self, path_id: int, up: bool) -> PathChangeView: ...
    def classes(self) -> list[views.ClassView]: ...
    def set_classes(self, classes: list[TrafficClass]) -> list[views.ClassView]: ...
    def traffic_class(self, class_id: int) -> views.ClassView: ...
    def class_policy(self, class_id: int) -> views.PolicyView: ...
    def set_class_policy(self, class_id: int, changes: dict) -> PolicyChangeView: ...
    def adaptive(self, class_id: int) -> views.AdaptiveView: ...
    def params(self) -> views.ParamsView: ...
    def set_params(self, changes: dict) -> views.ParamsView: ...
    def decisions(
        self, since: float, limit: int, pair: str | None = None
    ) -> views.DecisionsView: ...
    def mptcp_connections(self) -> views.ConnectionsView: ...
    def mptcp_connection(self, conn_id: int) -> views.ConnectionView: ...
    def state(self) -> views.StateView: ...
    def links(self) -> list[views.LinkView]: ...
    def set_link_admin(self, name: str, up: bool) -> LinkChangeView: ...
    def pairs(self) -> list[views.PairView]: ...
    def pair(self, key: str) -> views.PairView: ...


def json_response(body: Any, status: int = 200) -> Response:
    """`body` (a view, a list of views, or plain JSON data) as the JSON response."""
    return Response(
        body=(json.dumps(views.to_json(body), indent=2) + "\n").encode(),
        status=status,
        content_type="application/json",
        charset=None,
    )


def _is_id(text: str) -> bool:
    return text.isascii() and text.isdigit() and len(text) <= MAX_ID_DIGITS


class RestApi:
    """WSGI application; its handlers call `backend` in the server's worker thread."""

    def __init__(
        self,
        backend: Backend,
        token: str | None = None,
        *,
        read_token: str | None = None,
        hosts: HostCheck | None = None,
    ) -> None:
        self.backend = backend
        self.token = token
        self.read_token = read_token  # None: reads need no token
        self.hosts = hosts or HostCheck.serving("localhost")
        self.routes = list(ROUTES)  # what is served; openapi.py describes the same table
        self.router = Router(ROUTES)

    def __call__(self, environ: dict, start_response: Callable) -> Any:
        request = Request(environ)
        try:
            response = self.dispatch(request)
        except HttpError as error:
            response = json_response({"error": error.message, "field": error.field}, error.status)
            for key, value in error.headers.items():
                response.headers[key] = value
        except Exception:
            log.exception("%s %r failed", request.method, environ.get("PATH_INFO"))
            response = json_response({"error": "internal error", "field": None}, 500)
        for key, value in answer_headers(environ.get("PATH_INFO") or "/"):
            response.headers[key] = value
        return response(environ, start_response)

    def dispatch(self, request: Request) -> Response:
        refused = self.hosts.problem(request.environ.get("HTTP_HOST"))
        if refused is not None:
            raise HttpError(421, refused)
        try:
            path = request.path_info.rstrip("/") or "/"
            request.GET  # noqa: B018 (decodes the query string)
        except UnicodeDecodeError:
            raise HttpError(400, "the URL is not valid UTF-8") from None
        try:
            found = self.router.match(path, request.method)
        except MethodNotAllowedError as error:
            allow = ", ".join(error.allow)
            message = f"method {request.method[:20]} not allowed; use {allow}"
            raise HttpError(405, message, headers={"Allow": allow}) from None
        if found is None:
            raise HttpError(404, f"no resource {path[:100]}")
        _, endpoint, ident = found
        try:
            self._authorize(request, endpoint)
        except auth.AuthError as error:
            raise HttpError(error.status, error.message, headers=error.headers) from None
        request.environ[ENDPOINT_KEY] = endpoint
        handler = getattr(self, endpoint.handler)
        return handler(request) if ident is None else handler(request, ident)

    def _authorize(self, request: Request, endpoint: Endpoint) -> None:
        """AuthError unless the request has the token it needs: a write the write token
        (if there is one), a read the write or read token (if there is a read token; the
        dashboard's files need none)."""
        header = request.headers.get("Authorization")
        if request.method in READ_METHODS:
            if self.read_token is not None and not endpoint.public:
                auth.check(header, self.read_token, *([self.token] if self.token else []))
            return
        if self.token is None:
            return
        others = [self.read_token] if self.read_token else []
        if auth.check(header, self.token, *others) != self.token:
            raise auth.AuthError(403, "the read token allows reads only: writes need the "
                                 "write token")

    # -- handlers --------------------------------------------------------

    def _path_id(self, text: str) -> int:
        if not _is_id(text):
            raise HttpError(404, f"no path {text[:40]}")
        return int(text)

    def _class_id(self, text: str) -> int:
        if not _is_id(text) or int(text) >= MAX_CLASSES:
            raise HttpError(404, f"no class {text[:40]}")
        return int(text)

    def _input(self, request: Request) -> Any:
        """The request's body (a write) or query parameters (a read) as its endpoint's model
        (routing.py); 400 naming the first bad field."""
        endpoint: Endpoint = request.environ[ENDPOINT_KEY]
        try:
            if endpoint.body is not None:
                data = read_json_object(request, endpoint.where)
                return parse(endpoint.body, data, endpoint.where)
            fields = endpoint.query.model_fields
            return parse(endpoint.query, {k: v for k, v in request.GET.items() if k in fields})
        except FieldError as error:
            raise HttpError(400, error.message, error.field) from None

    def _call(self, fn: Callable, *args: Any) -> Any:
        try:
            return fn(*args)
        except NotFoundError as error:
            raise HttpError(404, str(error)) from None
        except FieldError as error:
            raise HttpError(400, error.message, error.field) from None
        except UnavailableError as error:
            raise HttpError(503, f"not acknowledged by every switch: {error}") from None
        except (NotPrimaryError, NotHereError) as error:
            raise HttpError(409, str(error)) from None

    def index(self, request: Request) -> Response:
        return json_response(
            {
                "paths": "/paths",
                "telemetry": "/telemetry?since=<t>",
                "switches": "/switches",
                "classes": "/classes",
                "params": "/params",
                "decisions": "/decisions?since=<t>&limit=<n>",
                "mptcp": "/mptcp/connections",
                "state": "/state",
                "openapi": "/openapi.yaml",
            }
        )

    def openapi(self, request: Request) -> Response:
        text = openapi.document()  # generated from ROUTES and the models
        return Response(body=text.encode(), content_type="application/yaml", charset=None)

    def get_paths(self, request: Request) -> Response:
        return json_response(self._call(self.backend.paths))

    def get_path(self, request: Request, path_id: str) -> Response:
        return json_response(self._call(self.backend.path, self._path_id(path_id)))

    def put_weight(self, request: Request, path_id: str) -> Response:
        pid = self._path_id(path_id)
        body: WeightBody = self._input(request)
        return json_response(self._call(self.backend.set_weight, pid, body.weight))

    def get_telemetry(self, request: Request, path_id: str) -> Response:
        return json_response(self._call(self.backend.telemetry, self._path_id(path_id)))

    def put_admin(self, request: Request, path_id: str) -> Response:
        pid = self._path_id(path_id)
        body: AdminBody = self._input(request)
        return json_response(self._call(self.backend.set_admin, pid, body.up))

    def get_telemetry_since(self, request: Request) -> Response:
        query: TelemetryQuery = self._input(request)
        return json_response(
            self._call(self.backend.telemetry_since, query.since, query.direction))

    def get_switches(self, request: Request) -> Response:
        return json_response(self._call(self.backend.switches))

    def get_classes(self, request: Request) -> Response:
        return json_response(self._call(self.backend.classes))

    def put_classes(self, request: Request) -> Response:
        body: ClassesBody = self._input(request)
        return json_response(self._call(self.backend.set_classes, body.classes))

    def get_class(self, request: Request, class_id: str) -> Response:
        return json_response(self._call(self.backend.traffic_class, self._class_id(class_id)))

    def get_class_policy(self, request: Request, class_id: str) -> Response:
        return json_response(self._call(self.backend.class_policy, self._class_id(class_id)))

    def put_class_policy(self, request: Request, class_id: str) -> Response:
        cid = self._class_id(class_id)
        body: PolicyChanges = self._input(request)
        changes = {key: getattr(body, key) for key in sorted(body.model_fields_set)}
        if "params" in changes:
            changes["params"] = thaw(changes["params"])
        return json_response(self._call(self.backend.set_class_policy, cid, changes))

    def get_class_adaptive(self, request: Request, class_id: str) -> Response:
        return json_response(self._call(self.backend.adaptive, self._class_id(class_id)))

    def get_params(self, request: Request) -> Response:
        return json_response(self._call(self.backend.params))

    def put_params(self, request: Request) -> Response:
        # the body's model (routing.py) is applied by the backend: GlobalParams.updated checks
        # a change against it, then merges it over the current values (cross-field checks)
        changes = read_json_object(request)
        return json_response(self._call(self.backend.set_params, changes))

    def get_decisions(self, request: Request) -> Response:
        query: DecisionsQuery = self._input(request)
        return json_response(
            self._call(self.backend.decisions, query.since, query.limit, query.pair)
        )

    def get_mptcp_connections(self, request: Request) -> Response:
        return json_response(self._call(self.backend.mptcp_connections))

    def get_mptcp_connection(self, request: Request, conn_id: str) -> Response:
        if not _is_id(conn_id):
            raise HttpError(404, f"no MPTCP connection {conn_id[:40]}")
        return json_response(self._call(self.backend.mptcp_connection, int(conn_id)))

    def get_state(self, request: Request) -> Response:
        return json_response(self._call(self.backend.state))

    def get_links(self, request: Request) -> Response:
        return json_response(self._call(self.backend.links))

    def put_link_admin(self, request: Request, name: str) -> Response:
        body: AdminBody = self._input(request)
        return json_response(self._call(self.backend.set_link_admin, name[:64], body.up))

    def get_pairs(self, request: Request) -> Response:
        return json_response(self._call(self.backend.pairs))

    def get_pair(self, request: Request, key: str) -> Response:
        return json_response(self._call(self.backend.pair, key[:64]))

    # -- the operator dashboard (static files of ui/, no token: they only read) --

    def get_ui_index(self, request: Request) -> Response:
        if not request.path_info.endswith("/"):
            response = Response(status=302, location="/ui/")
            response.content_type = None
            return response
        return ui_file("index.html")

    def get_ui_file(self, request: Request, name: str) -> Response:
        return ui_file(name)


UI_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
    ".png": "image/png",
}
UI_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]*\.[a-z]+$")


def ui_file(name: str) -> Response:
    """A file of the ui directory beside this module, by its plain name (no directories, no
    dot files, only the types of `UI_TYPES`); anything else is 404."""
    suffix = name[name.rfind(".") :] if "." in name else ""
    if not UI_NAME.match(name) or suffix not in UI_TYPES:
        raise HttpError(404, f"no UI file {name[:40]}")
    files = {f.name: f for f in resources.files(__package__).joinpath("ui").iterdir()}
    if name not in files or not files[name].is_file():
        raise HttpError(404, f"no UI file {name[:40]}")
    response = Response(body=files[name].read_bytes(), charset=None)
    response.headers["Content-Type"] = UI_TYPES[suffix]
    response.headers["Cache-Control"] = "no-cache"
    return response
