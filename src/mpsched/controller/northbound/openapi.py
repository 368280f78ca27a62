"""The REST description (OpenAPI 3.0), generated from the route table and the models.

``GET /openapi.yaml`` serves `document()`: the paths and methods are those of the route
table (routing.py), each request body's and query's schema is its model's JSON schema
(pydantic's ``$defs`` moved to ``components/schemas``), every write gets the bearer token
and the write errors (400, 401, 403, 409, 413, 415, 503), every read but the dashboard's the
bearer token as optional (needed with --read-token) and 401/403, and a response model, where an
endpoint names one, gives the 200 answer's schema. What is not generated (the title and
overview, each operation's summary, description and example body, the response schemas of
answers that are not models yet, path parameters) is hand-written in openapi-base.yaml; an
operation there that the router does not serve is an error, so the two stay in step.
"""

from __future__ import annotations

import copy
import functools
from importlib import resources
from typing import Any, get_args, get_origin

import yaml
from pydantic.json_schema import JsonSchemaMode

from mpsched.controller.model.errors import adapter
from mpsched.controller.northbound.routing import READ_METHODS, ROUTES, Endpoint, Resource

BASE = "openapi-base.yaml"
REF = "#/components/schemas/{model}"
JSON = "application/json"
WRITE_ERRORS = {
    "400": "Error",  # invalid input, the field named
    "401": "Unauthorized",
    "403": "Error",
    "409": "NotPrimary",
    "413": "Error",
    "415": "Error",
    "503": "Error",
}
READ_ERRORS = {"401": "Unauthorized", "403": "Error"}  # with --read-token


def load_base() -> dict[str, Any]:
    text = resources.files(__package__).joinpath(BASE).read_text()
    base: dict[str, Any] = yaml.safe_load(text)
    return base


def to_openapi30(schema: Any) -> Any:
    """pydantic's JSON Schema (2020-12) in OpenAPI 3.0's dialect: ``anyOf [X, null]`` ->
    X with ``nullable``, ``const`` -> a one-value ``enum``; `title` keys dropped (they only
    repeat the field names)."""
    if isinstance(schema, list):
        return [to_openapi30(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: to_openapi30(v) for k, v in schema.items() if k != "title"}
    for key in ("properties", "$defs"):  # names there are not keywords
        if key in schema:
            out[key] = {name: to_openapi30(sub) for name, sub in schema[key].items()}
    options = out.get("anyOf")
    if isinstance(options, list) and {"type": "null"} in options:
        rest = [o for o in options if o != {"type": "null"}]
        del out["anyOf"]
        out.update(rest[0] if len(rest) == 1 else {"anyOf": rest})
        out["nullable"] = True
    if "const" in out:
        out["enum"] = [out.pop("const")]
    return out


def model_schema(
    model: Any, schemas: dict[str, Any], mode: JsonSchemaMode = "validation"
) -> dict[str, Any]:
    """A reference to `model`'s schema (an array of them for ``list[model]``), added with its
    definitions to `schemas`; a name defined twice differently is an error. Answers are
    described as they are serialised (`mode` "serialization"), inputs as they are read."""
    if get_origin(model) is list:
        return {"type": "array", "items": model_schema(get_args(model)[0], schemas, mode)}
    schema = to_openapi30(adapter(model).json_schema(ref_template=REF, mode=mode))
    name = getattr(model, "__name__", None) or schema.get("title") or "Model"
    found = {**schema.pop("$defs", {}), name: schema}
    for key, value in found.items():
        if schemas.setdefault(key, value) != value:
            raise ValueError(f"two schemas named {key!r} in the REST description")
    return {"$ref": REF.format(model=name)}


def _query_parameters(model: Any) -> list[dict[str, Any]]:
    properties = to_openapi30(adapter(model).json_schema())["properties"]
    return [
        {
            "name": name,
            "in": "query",
            "required": False,
            "description": prop.pop("description", ""),
            "schema": prop,
        }
        for name, prop in properties.items()
    ]


def _operation(base: dict[str, Any], method: str, ep: Endpoint, schemas: dict[str, Any]) -> dict:
    op = copy.deepcopy(base)
    responses = op.setdefault("responses", {})
    if ep.body is not None:
        body = op.setdefault("requestBody", {})
        body["required"] = True
        body.setdefault("description", (ep.body.__doc__ or "").strip())
        media = body.setdefault("content", {}).setdefault(JSON, {})
        media["schema"] = model_schema(ep.body, schemas)
    if ep.query is not None:
        op["parameters"] = op.get("parameters", []) + _query_parameters(ep.query)
    if ep.response is not None:
        answer = responses.setdefault("200", {"description": "the answer"})
        answer["content"] = {
            JSON: {"schema": model_schema(ep.response, schemas, "serialization")}
        }
    if method not in READ_METHODS:
        op["security"] = [{"bearerAuth": []}]
        for status, name in WRITE_ERRORS.items():
            responses.setdefault(status, {"$ref": f"#/components/responses/{name}"})
    elif not ep.public:  # a token only with --read-token: none, or the bearer token
        op["security"] = [{}, {"bearerAuth": []}]
        for status, name in READ_ERRORS.items():
            responses.setdefault(status, {"$ref": f"#/components/responses/{name}"})
    return op


def _path_item(resource: Resource, base: dict[str, Any], schemas: dict[str, Any]) -> dict:
    item = {k: copy.deepcopy(v) for k, v in base.items() if k.upper() not in resource.methods}
    for method, ep in resource.methods.items():
        item[method.lower()] = _operation(base.get(method.lower(), {}), method, ep, schemas)
    return item


HTTP_METHODS = ("get", "put", "post", "delete", "patch", "head", "options", "trace")


def describe(routes: tuple[Resource, ...] = ROUTES, base: dict[str, Any] | None = None) -> dict:
    """The REST description of `routes` over the hand-written `base` (openapi-base.yaml)."""
    doc = copy.deepcopy(base if base is not None else load_base())
    described = doc.get("paths", {})
    served = {(r.template, m.lower()) for r in routes for m in r.methods}
    stale = sorted(
        (path, method) for path, item in described.items() for method in item
        if method in HTTP_METHODS and (path, method) not in served
    ) + sorted(path for path in described if path not in {r.template for r in routes})
    if stale:
        raise ValueError(f"{BASE} describes what is not served: {stale}")
    schemas = doc.setdefault("components", {}).setdefault("schemas", {})
    doc["paths"] = {r.template: _path_item(r, described.get(r.template, {}), schemas)
                    for r in routes}
    return doc


class _Dumper(yaml.SafeDumper):
    """Multi-line strings (the descriptions) as literal blocks, as they are written."""


def _text(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _text)


@functools.cache
def document() -> str:
    """The served description, as YAML (built once)."""
    return yaml.dump(describe(), Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=100)
