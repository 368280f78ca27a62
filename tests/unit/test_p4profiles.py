"""src/mpsched/p4profiles.py: the profiles' defines and features, its Makefile lines, and that the
Makefile and p4src/include/defines.p4 agree with it."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from mpsched import p4profiles as pp
from mpsched.p4rt.pipeline import OPTIONAL_FEATURES
from mpsched.proc.layout import REPO_ROOT


def test_profiles_defines_and_features():
    assert pp.profile(pp.FULL).defines == () and pp.profile(pp.FULL).features == pp.ALL_FEATURES
    assert pp.profile("no-mptcp").defines == ("-DNO_MPTCP",)
    assert pp.profile("no-mptcp").features == pp.ALL_FEATURES - {pp.FEATURE_MPTCP}
    lean = pp.profile("lean")
    assert lean.features == frozenset()
    assert lean.defines == ("-DNO_FLOW_ORDER", "-DNO_MPTCP", "-DNO_RTT_MONITOR", "-DNO_CONGESTION")
    assert [p.name for p in pp.REDUCED] == [p.name for p in pp.PROFILES if p.name != pp.FULL]
    # every single-feature profile exists once, and names are unique
    singles = sorted(next(iter(p.omits)) for p in pp.PROFILES if len(p.omits) == 1)
    assert singles == sorted(pp.ALL_FEATURES)
    assert len(pp.BY_NAME) == len(pp.PROFILES)


def test_unknown_profile_names_the_known_ones():
    with pytest.raises(KeyError, match="not one of full .*lean"):
        pp.profile("tiny")


def test_pipeline_takes_its_defines_from_here():
    assert {f: d for f, (d, _) in OPTIONAL_FEATURES.items()} == pp.FEATURE_DEFINES


def test_every_define_is_documented_in_defines_p4():
    text = (REPO_ROOT / "p4src" / "include" / "defines.p4").read_text()
    for define in pp.FEATURE_DEFINES.values():
        assert re.search(rf"^//\s+{define}\s", text, re.M), define


def test_make_lines(capsys):
    assert pp.main(["--make"]) == 0
    lines = capsys.readouterr().out.splitlines()
    reduced = "no-flow-order no-mptcp no-rtt-monitor no-congestion lean"
    assert lines[0] == f"P4_PROFILES := full {reduced}"
    assert lines[1] == f"P4_PROFILES_REDUCED := {reduced}"
    assert "P4_PROFILE_DEFS_full :=" in lines
    assert "P4_PROFILE_DEFS_no-congestion := -DNO_CONGESTION" in lines
    assert lines[-1] == f"P4_SCALE_EDGES := {pp.SCALE_EDGES}"
    assert len(lines) == 3 + len(pp.PROFILES)


def _make_variables() -> dict[str, str]:
    """The Makefile's variables as make evaluates them (its database, nothing run)."""
    done = subprocess.run(["make", "-pnq", "-C", str(REPO_ROOT), "__no_such_target__"],
                          capture_output=True, text=True, timeout=60, check=False)
    out = {}
    for line in done.stdout.splitlines():
        m = re.match(r"^(P4_PROFILE\S*|P4_SCALE_EDGES) :?= ?(.*)$", line)
        if m:
            out[m.group(1)] = m.group(2).strip()
    return out


def test_the_makefile_agrees():
    if shutil.which("make") is None:
        pytest.skip("make: not installed")
    got = _make_variables()
    defs = {k.removeprefix("P4_PROFILE_DEFS_"): v for k, v in got.items()
            if k.startswith("P4_PROFILE_DEFS_")}
    assert defs == {p.name: " ".join(p.defines) for p in pp.PROFILES}
    assert got["P4_SCALE_EDGES"] == str(pp.SCALE_EDGES)


def test_the_makefile_and_bench_scale_take_the_scale_edges_from_here():
    """One definition: the Makefile does not set P4_SCALE_EDGES itself, bench-scale imports it."""
    from mpsched.bench import scale

    makefile = (REPO_ROOT / "Makefile").read_text()
    assert not re.search(r"^P4_SCALE_EDGES\s*[:?]?=", makefile, re.M)
    assert scale.SCALE_EDGES is pp.SCALE_EDGES
    assert scale.artifacts().bmv2_json.parent.name == f"p4-{pp.SCALE_EDGES}edges"
