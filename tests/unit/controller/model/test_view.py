"""src/mpsched/controller/model/view.py: a view refuses unknown keys and takes fields by name
or by alias."""

from __future__ import annotations

import pydantic
import pytest
from pydantic import Field

from mpsched.controller.model.view import View


class Sample(View):
    value: int = Field(alias="schema")


def test_unknown_keys_are_refused():
    with pytest.raises(pydantic.ValidationError, match="other"):
        Sample(schema=1, other=2)  # type: ignore[call-arg]


def test_by_name_or_alias():
    assert Sample(value=1) == Sample(schema=1)  # type: ignore[call-arg]
    assert Sample(value=1).model_dump(by_alias=True) == {"schema": 1}
