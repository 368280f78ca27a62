"""Southbound: one native thread per switch owns its P4Runtime session (`agent`); digests
decoded into typed reports (`reports`)."""
