"""Northbound: the REST API as a WSGI application (`rest`), its route table (`routing`), its
input models (`bodies`, `jsonbody`), its write token (`auth`) and its OpenAPI description
(`openapi`, generated over `openapi-base.yaml`)."""
