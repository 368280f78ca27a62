"""The P4 program's path count is a compile-time define (MAX_PATHS, 4 or 8):
the 8-path variant compiles and the controller's Pipeline sees 8 paths."""

from __future__ import annotations

import subprocess

import pytest

from mpsched.p4rt.p4info import P4Info
from mpsched.p4rt.pipeline import Pipeline
from mpsched.proc.layout import REPO_ROOT
from tests.conftest import require

pytestmark = pytest.mark.integration

MAIN_P4 = REPO_ROOT / "p4src" / "main.p4"


def compile_p4(out, max_paths: int) -> subprocess.CompletedProcess:
    """p4c as `make p4 P4_PATHS=max_paths` runs it, into out/."""
    return subprocess.run(
        ["p4c", "--target", "bmv2", "--arch", "v1model", "--std", "p4-16",
         f"-DMAX_PATHS={max_paths}", "-o", str(out),
         "--p4runtime-files", str(out / "main.p4info.txt"), str(MAIN_P4)],
        capture_output=True, text=True, timeout=300, check=False,
    )


@pytest.fixture(scope="module")
def pipeline8(tmp_path_factory) -> Pipeline:
    require("p4c")
    out = tmp_path_factory.mktemp("p4-8paths")
    run = compile_p4(out, 8)
    assert run.returncode == 0, run.stderr
    assert "warning" not in run.stderr.lower(), run.stderr
    assert (out / "main.json").is_file()
    return Pipeline(P4Info.from_file(out / "main.p4info.txt"))


def test_eight_paths(pipeline8):
    assert pipeline8.max_paths == 8
    assert pipeline8.weight_params == [f"end_{i}" for i in range(1, 9)]


def test_eight_path_entries(pipeline8):
    entry = pipeline8.weights(2, 0, {i: 1 for i in range(1, 9)}, "flowlet", 500)
    assert [entry.params[f"end_{i}"] for i in range(1, 9)] == [8192 * i for i in range(1, 9)]
    mvqs = pipeline8.mvqs_params(2, 0, {8: (100, 15000, 10, 2048)})
    assert mvqs.params["pad_us_8"] == 100
    assert mvqs.params["drain_1024us_8"] == 2048
    assert mvqs.params["pad_us_1"] == 0
    with pytest.raises(ValueError):
        pipeline8.weights(2, 0, {9: 1}, "flowlet", 500)


def test_unsupported_path_count_fails(tmp_path):
    require("p4c")
    run = compile_p4(tmp_path, 6)
    assert run.returncode != 0
    assert "MAX_PATHS must be 4 or 8" in run.stderr
