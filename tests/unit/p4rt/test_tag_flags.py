"""The path tag's flags as the controller and the tests name them
(src/mpsched/p4rt/pipeline/names.py) are the program's (p4src/include/defines.p4): P4 constants
the P4Info does not carry."""

from __future__ import annotations

import re

from mpsched.p4rt.pipeline import PATH_FLAG_COPY, PATH_FLAG_PROBE
from mpsched.proc.layout import REPO_ROOT


def test_the_tag_flags_are_the_programs():
    text = (REPO_ROOT / "p4src" / "include" / "defines.p4").read_text()
    flags = {m[1]: int(m[2], 0)
             for m in re.finditer(r"const bit<8> (PATH_FLAG_\w+) = (\w+);", text)}
    assert flags == {"PATH_FLAG_PROBE": PATH_FLAG_PROBE, "PATH_FLAG_COPY": PATH_FLAG_COPY}
