"""Where the project's files are: the P4 sources and the compiled artefacts."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

# src/mpsched/proc/layout.py -> the repository root (p4src/, build/, scenarios/, ptf-tests/)
REPO_ROOT = Path(__file__).resolve().parents[3]


@dataclass(frozen=True)
class P4Artifacts:
    """The outputs of `make p4`: BMv2 JSON and P4Info (text format)."""

    bmv2_json: Path
    p4info: Path

    def missing(self) -> list[Path]:
        return [p for p in (self.bmv2_json, self.p4info) if not p.is_file()]


def build_dir() -> Path:
    return Path(os.environ.get("MPSCHED_BUILD_DIR", REPO_ROOT / "build"))


def linkem_binary() -> Path:
    """The userspace link emulator built by `make linkem` from csrc/linkem.c."""
    return build_dir() / "bin" / "linkem"


def p4_artifacts() -> P4Artifacts:
    base = build_dir() / "p4"
    return P4Artifacts(bmv2_json=base / "main.json", p4info=base / "main.p4info.txt")


def plain_ecmp_artifacts() -> P4Artifacts:
    """The outputs of `make p4` for p4src/bench/plain_ecmp.p4: the fabric's plain-forwarding
    reference (`mpsched run --program plain-ecmp`, docs/fabric-lab.md)."""
    base = build_dir() / "p4-plain-ecmp"
    return P4Artifacts(bmv2_json=base / "plain_ecmp.json", p4info=base / "plain_ecmp.p4info.txt")


def p4_artifacts_for_paths(max_paths: int) -> P4Artifacts:
    """The outputs of `make p4 P4_PATHS=n` (MAX_PATHS = n, 4 or 8): build/p4 for 4
    (the same as p4_artifacts()), build/p4-<n>paths otherwise."""
    if max_paths == 4:
        return p4_artifacts()
    base = build_dir() / f"p4-{max_paths}paths"
    return P4Artifacts(bmv2_json=base / "main.json", p4info=base / "main.p4info.txt")
