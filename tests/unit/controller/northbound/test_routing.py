"""src/mpsched/controller/northbound/routing.py: the router finds a request's resource, endpoint and
``{id}``; a known resource without the method raises with the methods it allows; an unknown
path matches nothing. The route table names only handlers the REST layer has."""

from __future__ import annotations

import pytest

from mpsched.controller.northbound.rest import RestApi
from mpsched.controller.northbound.routing import (
    ROUTES,
    Endpoint,
    MethodNotAllowedError,
    Resource,
    Router,
)


def test_match_finds_the_endpoint_and_the_id():
    router = Router()
    resource, endpoint, ident = router.match("/paths/3/weight", "PUT")
    assert resource.template == "/paths/{id}/weight"
    assert endpoint.handler == "put_weight"
    assert ident == "3"
    resource, endpoint, ident = router.match("/classes", "GET")
    assert (resource.template, endpoint.handler, ident) == ("/classes", "get_classes", None)
    assert router.match("/classes", "PUT")[1].handler == "put_classes"


def test_a_known_path_without_the_method_lists_the_allowed_ones():
    router = Router()
    with pytest.raises(MethodNotAllowedError) as err:
        router.match("/paths/1/weight", "GET")
    assert err.value.allow == ["PUT"]
    with pytest.raises(MethodNotAllowedError) as err:
        router.match("/classes", "DELETE")
    assert err.value.allow == ["GET", "PUT"]
    assert str(err.value) == "GET, PUT"


@pytest.mark.parametrize("path", ["/nope", "/paths/1/2", "/paths/1/weight/x", ""])
def test_an_unknown_path_matches_nothing(path):
    assert Router().match(path, "GET") is None


def test_a_router_of_its_own_resources():
    router = Router((Resource("/a/{id}", {"POST": Endpoint("post_a")}),))
    assert router.match("/a/x", "POST")[2] == "x"
    assert router.match("/paths", "GET") is None  # only the resources it was given


def test_every_handler_is_a_method_of_the_rest_api():
    handlers = {e.handler for r in ROUTES for e in r.methods.values()}
    missing = sorted(h for h in handlers if not callable(getattr(RestApi, h, None)))
    assert missing == []


def test_the_model_is_the_body_else_the_query():
    assert Endpoint("h", body=int, query=str).model is int
    assert Endpoint("h", query=str).model is str
    assert Endpoint("h").model is None
