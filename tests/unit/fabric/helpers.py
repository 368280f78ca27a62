"""Fabric sections the fabric tests share."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from mpsched.fabric.files import parse_fabric
from mpsched.fabric.model import Fabric
from mpsched.proc.layout import REPO_ROOT

SCENARIOS = REPO_ROOT / "scenarios"
EXAMPLES = SCENARIOS / "fabric"  # the description's examples for `mpsched fabric`


def example_path(name: str) -> Path:
    """scenarios/fabric/<name>.yaml, else the runnable scenarios/fabric-<name>.yaml."""
    own = EXAMPLES / f"{name}.yaml"
    return own if own.exists() else SCENARIOS / f"fabric-{name}.yaml"


def leaf_spine(leaves: int = 4, spines: int = 2, **extra: Any) -> dict:
    return {"leaf_spine": {"leaves": leaves, "spines": spines,
                           "link": {"rate_mbps": 10, "delay_ms": 1}, **extra}}


def example(name: str) -> dict:
    """The `fabric` section of `example_path(name)`."""
    return yaml.safe_load(example_path(name).read_text())["fabric"]


def build(section: dict, **limits: int) -> Fabric:
    return parse_fabric(section, "f.yaml", **limits)
