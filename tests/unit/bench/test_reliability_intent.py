"""The operator's side of `make bench-reliability` (src/mpsched/bench/reliability_intent.py):
comparing intent views, and waiting for the write a backup controller accepts."""

from __future__ import annotations

import pytest

from mpsched.bench import reliability_intent
from mpsched.bench.reliability_intent import differences, write_until_accepted
from mpsched.client.rest import ControllerError


def test_differences_names_every_changed_field():
    before = {"classes": [{"id": 0, "policy": {"name": "ecmp"}}], "paths": {1: {"weight": 3}}}
    assert differences(before, before) == []
    after = {"classes": [{"id": 0, "policy": {"name": "wcmp"}}], "paths": {1: {"weight": 1}}}
    assert differences(before, after) == [
        "classes[0].policy.name: 'ecmp' -> 'wcmp'",
        "paths.1.weight: 3 -> 1",
    ]
    assert differences({"a": [1, 2]}, {"a": [1]}) == ["a: [1, 2] -> [1]"]
    assert differences({"a": 1}, {}) == ["a: 1 -> None"]


class Refusing:
    """A REST client whose writes are refused with `statuses`, one per write, then accepted."""

    def __init__(self, statuses):
        self.statuses = list(statuses)
        self.writes = 0

    def get(self, path):
        return {"name": "ecmp"}

    def put(self, path, body):
        assert (path, body) == ("/classes/0/policy", {"name": "ecmp"})
        self.writes += 1
        if self.statuses:
            raise ControllerError("refused", self.statuses.pop(0))


def test_a_backup_is_written_to_until_it_accepts(monkeypatch):
    monkeypatch.setattr(reliability_intent, "WRITE_EVERY_S", 0)
    rest = Refusing([409, 503, None])
    assert write_until_accepted(rest, 5.0) is not None
    assert rest.writes == 4
    assert write_until_accepted(Refusing([409] * 10**6), 0.05) is None
    with pytest.raises(ControllerError):
        write_until_accepted(Refusing([400]), 5.0)
