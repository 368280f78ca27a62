"""Northbound: the REST API as a WSGI application (`rest`), its write token (`auth`) and its
OpenAPI description (`openapi.yaml`)."""
