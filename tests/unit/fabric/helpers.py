"""Fabric sections the fabric tests share."""

from __future__ import annotations

from typing import Any

import yaml

from mpsched.fabric.files import parse_fabric
from mpsched.fabric.model import Fabric
from mpsched.proc.layout import REPO_ROOT

EXAMPLES = REPO_ROOT / "scenarios" / "fabric"


def leaf_spine(leaves: int = 4, spines: int = 2, **extra: Any) -> dict:
    return {"leaf_spine": {"leaves": leaves, "spines": spines,
                           "link": {"rate_mbps": 10, "delay_ms": 1}, **extra}}


def example(name: str) -> dict:
    """The `fabric` section of scenarios/fabric/<name>.yaml."""
    return yaml.safe_load((EXAMPLES / f"{name}.yaml").read_text())["fabric"]


def build(section: dict, **limits: int) -> Fabric:
    return parse_fabric(section, "f.yaml", **limits)
