"""Which Python objects grow (src/mpsched/controller/runtime/memobjects.py)."""

from __future__ import annotations

from collections import Counter, deque

from mpsched.controller.runtime import memobjects


class Keeper:
    def __init__(self) -> None:
        self.history: deque[float] = deque()


def test_type_growth_names_the_types_that_grew_most():
    base = Counter({"dict": 10, "list": 5, "Flow": 1})
    now = Counter({"dict": 12, "list": 5, "Flow": 40, "Path": 3})
    assert memobjects.type_growth_lines(base, now, 2) == [
        "memtrace type Flow +39 (40)", "memtrace type Path +3 (3)"]


def test_a_growing_container_is_named_by_its_holder():
    keeper = Keeper()
    keeper.history.extend(float(i) for i in range(200_000))  # among the largest containers
    watch = memobjects.ObjectWatch()
    first = watch.sample(4)
    assert first[0].startswith("memtrace gc_objects=")
    keeper.history.extend(float(i) for i in range(1000))  # floats: no type count moves
    lines = watch.sample(4)
    assert "memtrace container deque Keeper.history len=201000 +1000" in lines


def test_a_container_that_did_not_grow_is_not_named():
    keeper = Keeper()
    keeper.history.extend(range(300_000))
    watch = memobjects.ObjectWatch()
    watch.sample(4)
    assert not [line for line in watch.sample(4) if "Keeper.history" in line]


def test_holder_names_a_dict_key():
    table = {"flows": list(range(10))}
    assert memobjects.holder(table["flows"]) == "dict['flows']"
