"""The dashboard's static files as the REST application serves them (no browser): the routes,
their Content-Types, the redirect, no token needed, and nothing outside the ui directory."""

from __future__ import annotations

import re
from importlib import resources

import pytest
from webob import Request

from mpsched.controller.northbound.rest import UI_TYPES, RestApi

UI_DIR = resources.files("mpsched.controller.northbound").joinpath("ui")


def get(path: str, method: str = "GET", token: str | None = "secret"):
    app = RestApi(backend=None, token=token)  # type: ignore[arg-type]  # no backend call made
    return Request.blank(path, method=method).get_response(app)


def test_ui_redirects_to_the_directory():
    r = get("/ui")
    assert r.status_int == 302
    assert r.location.endswith("/ui/")


@pytest.mark.parametrize(
    ("path", "content_type"),
    [
        ("/ui/", "text/html; charset=utf-8"),
        ("/ui/index.html", "text/html; charset=utf-8"),
        ("/ui/app.js", "text/javascript; charset=utf-8"),
        ("/ui/style.css", "text/css; charset=utf-8"),
    ],
)
def test_ui_files_are_served_with_their_type_and_no_token(path, content_type):
    r = get(path)
    assert r.status_int == 200, r.text
    assert r.headers["Content-Type"] == content_type
    assert r.headers["X-Content-Type-Options"] == "nosniff"
    name = path.rsplit("/", 1)[1] or "index.html"
    assert r.body == UI_DIR.joinpath(name).read_bytes()


@pytest.mark.parametrize(
    "path",
    [
        "/ui/../openapi.yaml",
        "/ui/..%2fopenapi.yaml",
        "/ui/%2e%2e%2frest.py",
        "/ui/..",
        "/ui/%2e%2e",
        "/ui/rest.py",  # beside ui/, and not a UI type
        "/ui/openapi.yaml",
        "/ui/.hidden.js",
        "/ui/missing.js",
        "/ui/app.js%00.css",
        "/ui/APP.JS",
        "/ui/ui/app.js",
        "/ui//etc/passwd",
    ],
)
def test_nothing_outside_the_ui_directory_is_served(path):
    r = get(path)
    assert r.status_int == 404, (path, r.status_int, r.body[:200])
    assert r.content_type == "application/json" and r.json["error"]
    assert b"openapi: 3" not in r.body and b"from __future__" not in r.body


def test_ui_is_read_only():
    r = get("/ui/app.js", method="PUT", token=None)
    assert r.status_int == 405
    assert r.headers["Allow"] == "GET"


def test_every_ui_file_has_a_served_type():
    names = [f.name for f in UI_DIR.iterdir() if f.is_file()]
    assert "index.html" in names
    for name in names:
        assert name[name.rfind(".") :] in UI_TYPES, name
        assert get(f"/ui/{name}").status_int == 200, name


def test_the_page_loads_nothing_from_the_network():
    """No CDN, no remote font or script: every src/href of the page is a file of ui/ (or an
    inline data: URL), and no file names a remote URL besides the SVG namespace."""
    html = UI_DIR.joinpath("index.html").read_text()
    refs = re.findall(r'(?:src|href)="([^"]*)"', html)
    assert refs
    for ref in refs:
        assert ref.startswith("data:") or get(f"/ui/{ref}").status_int == 200, ref
    for f in UI_DIR.iterdir():
        urls = set(re.findall(r"https?://[^\s\"'`)]+", f.read_text()))
        assert urls <= {"http://www.w3.org/2000/svg"}, (f.name, urls)
