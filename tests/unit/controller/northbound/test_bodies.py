"""northbound/bodies.py: request bodies and query parameters as models, refused with the field
named."""

from __future__ import annotations

import pytest

from mpsched.controller.model.errors import FieldError
from mpsched.controller.northbound.bodies import (
    DEFAULT_DECISIONS,
    MAX_DECISIONS,
    AdminBody,
    DecisionsQuery,
    TelemetryQuery,
    WeightBody,
    parse,
)


def test_weight_and_admin_bodies():
    assert parse(WeightBody, {"weight": 0}).weight == 0
    assert parse(AdminBody, {"state": "down"}).up is False
    with pytest.raises(FieldError) as raised:
        parse(WeightBody, {"weight": 1, "x": 2})
    assert raised.value.field == "x"
    with pytest.raises(FieldError) as raised:
        parse(WeightBody, {"weight": True})
    assert raised.value.field == "weight"


def test_query_since_and_limit():
    assert parse(TelemetryQuery, {"since": "1.5"}).since == 1.5
    assert parse(DecisionsQuery, {}).limit == DEFAULT_DECISIONS
    for bad in ("0", str(MAX_DECISIONS + 1), "x"):
        with pytest.raises(FieldError) as raised:
            parse(DecisionsQuery, {"limit": bad})
        assert raised.value.field == "limit"
