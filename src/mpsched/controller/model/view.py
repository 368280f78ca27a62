"""The base of the typed views (pydantic) the REST API returns
(src/mpsched/controller/northbound/views.py), and of the model's views."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

Number = int | float  # an int stays an int (the JSON stays as it was)


class View(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)
