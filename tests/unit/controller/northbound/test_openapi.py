"""The served REST description (GET /openapi.yaml) against the router and the models it is
generated from (src/mpsched/controller/northbound/openapi.py, routing.py, openapi-base.yaml)."""

from __future__ import annotations

import re
from typing import Any, get_args, get_origin

import pytest
import yaml
from webob import Request

from mpsched.controller.model.errors import FieldError, adapter
from mpsched.controller.northbound import openapi
from mpsched.controller.northbound.bodies import parse
from mpsched.controller.northbound.rest import RestApi
from mpsched.controller.northbound.routing import ROUTES, Resource

HTTP_METHODS = {"get", "put", "post", "delete", "patch", "head", "options", "trace"}
WRITES = [(r, m, ep) for r in ROUTES for m, ep in r.methods.items() if ep.body is not None]
QUERIES = [(r, m, ep) for r in ROUTES for m, ep in r.methods.items() if ep.query is not None]


@pytest.fixture(scope="module")
def served() -> dict[str, Any]:
    app = RestApi(backend=None)  # type: ignore[arg-type]  # the description needs no backend
    response = Request.blank("/openapi.yaml").get_response(app)
    assert response.status_int == 200 and response.content_type == "application/yaml"
    doc: dict[str, Any] = yaml.safe_load(response.body)
    return doc


def resolve(doc: dict[str, Any], ref: str) -> Any:
    assert ref.startswith("#/"), ref
    node: Any = doc
    for part in ref[2:].split("/"):
        node = node[part]
    return node


def refs(node: Any) -> list[str]:
    if isinstance(node, dict):
        found = [node["$ref"]] if isinstance(node.get("$ref"), str) else []
        return found + [r for value in node.values() for r in refs(value)]
    if isinstance(node, list):
        return [r for value in node for r in refs(value)]
    return []


def test_the_description_lists_exactly_the_routes_and_methods(served):
    app = RestApi(backend=None)  # type: ignore[arg-type]
    routed = {(r.template, m.lower()) for r in app.routes for m in r.methods}
    described = {(path, m) for path, item in served["paths"].items() for m in item
                 if m in HTTP_METHODS}
    assert described == routed
    assert list(served["paths"]) == [r.template for r in app.routes]


def test_every_request_body_schema_is_its_models(served):
    assert len(WRITES) == 6  # weight, admin, classes, a class's policy, params, link admin
    for resource, method, ep in WRITES:
        body = served["paths"][resource.template][method.lower()]["requestBody"]
        assert body["required"] is True
        ref = body["content"]["application/json"]["schema"]["$ref"]
        expected = openapi.to_openapi30(adapter(ep.body).json_schema(ref_template=openapi.REF))
        for name, schema in expected.pop("$defs", {}).items():
            assert served["components"]["schemas"][name] == schema, name
        assert resolve(served, ref) == expected, (method, resource.template)


def test_every_example_body_validates_against_its_model(served):
    for resource, method, ep in WRITES:
        media = served["paths"][resource.template][method.lower()]["requestBody"]["content"]
        example = media["application/json"]["example"]
        parse(ep.body, example, ep.where)  # raises FieldError if the example is invalid


def test_a_body_the_model_refuses_names_the_field_the_schema_declares(served):
    """The schema and the validation are the same declaration: what the schema says of a
    field (its bounds) is what the model enforces."""
    weight = resolve(served, "#/components/schemas/WeightBody")["properties"]["weight"]
    model = next(ep.body for r, _, ep in WRITES if r.template.endswith("/weight"))
    parse(model, {"weight": weight["maximum"]})
    with pytest.raises(FieldError) as caught:
        parse(model, {"weight": weight["maximum"] + 1})
    assert caught.value.field == "weight"
    assert resolve(served, "#/components/schemas/WeightBody")["additionalProperties"] is False


def test_query_parameters_are_the_query_models_fields(served):
    assert {r.template for r, _, _ in QUERIES} == {"/telemetry", "/decisions"}
    for resource, method, ep in QUERIES:
        parameters = served["paths"][resource.template][method.lower()]["parameters"]
        assert {p["name"] for p in parameters if p["in"] == "query"} == set(ep.query.model_fields)
    limit = next(p for p in served["paths"]["/decisions"]["get"]["parameters"]
                 if p["name"] == "limit")
    assert (limit["schema"]["minimum"], limit["schema"]["maximum"]) == (1, 1000)


def test_writes_carry_the_token_and_the_write_errors(served):
    """Writes need the token; reads may (--read-token), the dashboard's files never."""
    for resource in ROUTES:
        for method, endpoint in resource.methods.items():
            op = served["paths"][resource.template][method.lower()]
            if method == "GET":
                if endpoint.public:
                    assert "security" not in op and "401" not in op["responses"]
                else:
                    assert op["security"] == [{}, {"bearerAuth": []}]
                    assert set(openapi.READ_ERRORS) <= set(op["responses"])
                continue
            assert op["security"] == [{"bearerAuth": []}]
            assert set(openapi.WRITE_ERRORS) <= set(op["responses"])


def test_the_document_is_structurally_valid_openapi_3(served):
    assert served["openapi"].startswith("3.0.")
    assert served["info"]["title"] and served["info"]["version"]
    for path, item in served["paths"].items():
        variables = set(re.findall(r"\{(\w+)\}", path))
        for method, op in item.items():
            if method not in HTTP_METHODS:
                continue
            assert op["responses"], (method, path)
            assert op.get("summary"), (method, path)
            declared = [p if "$ref" not in p else resolve(served, p["$ref"])
                        for p in item.get("parameters", []) + op.get("parameters", [])]
            in_path = {p["name"] for p in declared if p["in"] == "path"}
            assert in_path == variables, (method, path)
            assert all(p["required"] for p in declared if p["in"] == "path")
    dangling = sorted({ref for ref in refs(served) if _missing(served, ref)})
    assert not dangling
    assert not [key for key in yaml.safe_dump(served).split() if key == "$defs:"]


def _missing(doc: dict[str, Any], ref: str) -> bool:
    try:
        resolve(doc, ref)
    except (KeyError, AssertionError):
        return True
    return False


def test_an_operation_the_router_does_not_serve_is_refused():
    base = openapi.load_base()
    fewer = tuple(r for r in ROUTES if r.template != "/switches")
    with pytest.raises(ValueError, match="/switches"):
        openapi.describe(fewer, base)
    renamed = (*fewer, Resource("/switches", {"PUT": ROUTES[0].methods["GET"]}))
    with pytest.raises(ValueError, match="'/switches', 'get'"):
        openapi.describe(renamed, base)


def test_a_response_model_gives_the_answers_schema(served):
    answered = [(r, m, ep) for r in ROUTES for m, ep in r.methods.items() if ep.response]
    # every JSON answer is a model (northbound/views.py): all but the index, the description
    # itself and the dashboard's files
    unanswered = {(r.template, m) for r in ROUTES for m, ep in r.methods.items() if not ep.response}
    assert unanswered == {("/", "GET"), ("/openapi.yaml", "GET"), ("/ui", "GET"),
                          ("/ui/{id}", "GET")}
    for resource, method, ep in answered:
        answer = served["paths"][resource.template][method.lower()]["responses"]["200"]
        schema = answer["content"]["application/json"]["schema"]
        model = ep.response
        if get_origin(model) is list:  # list[View]: an array of the view
            assert schema["type"] == "array"
            schema, model = schema["items"], get_args(model)[0]
        expected = openapi.to_openapi30(
            adapter(model).json_schema(ref_template=openapi.REF, mode="serialization")
        )
        expected.pop("$defs", None)
        assert resolve(served, schema["$ref"]) == expected
        assert answer["description"]  # kept from openapi-base.yaml
