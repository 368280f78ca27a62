"""The unit tests mirror the code: every module of src/mpsched/controller/ (the package
mpsched.controller) has its test module,
src/mpsched/controller/x/y.py -> tests/unit/controller/x/test_y.py,
so a reader finds the tests of a module in one place. The few exceptions are listed with the
reason; an exception that no longer holds fails too, so the list stays true."""

from __future__ import annotations

from pathlib import Path

from mpsched.proc.layout import REPO_ROOT

CODE = REPO_ROOT / "src" / "mpsched" / "controller"
TESTS = REPO_ROOT / "tests" / "unit" / "controller"

# module (relative to src/mpsched/controller/) -> why it has no test module of its own
EXCLUDED = {
    "__main__.py": "the command line; its tests are test_main.py (named after the command, "
    "not test___main__.py), and the entry point is being reworked",
    "northbound/server.py": "the REST servers are being rewritten; their tests come with them "
    "(today in northbound/test_rest_abuse.py)",
    "northbound/auth.py": "rewritten with the REST servers; tested today through the REST "
    "layer (northbound/test_rest.py)",
}


def mirror_of(module: Path) -> Path:
    """src/mpsched/controller/x/y.py -> tests/unit/controller/x/test_y.py."""
    rel = module.relative_to(CODE)
    return TESTS / rel.parent / f"test_{rel.name}"


def modules() -> list[Path]:
    return sorted(p for p in CODE.rglob("*.py") if p.name != "__init__.py")


def test_every_controller_module_has_its_test_module():
    missing = [
        f"{m.relative_to(REPO_ROOT)} -> {mirror_of(m).relative_to(REPO_ROOT)}"
        for m in modules()
        if m.relative_to(CODE).as_posix() not in EXCLUDED and not mirror_of(m).is_file()
    ]
    assert missing == [], "modules without a test module: " + "; ".join(missing)


def test_the_exclusions_still_hold():
    for rel in EXCLUDED:
        module = CODE / rel
        assert module.is_file(), f"{rel}: excluded but gone: drop it from EXCLUDED"
        assert not mirror_of(module).is_file(), (
            f"{rel}: has {mirror_of(module).relative_to(REPO_ROOT)} now: drop it from EXCLUDED"
        )


def test_the_mapping():
    assert mirror_of(CODE / "scheduling" / "params.py") == (
        TESTS / "scheduling" / "test_params.py"
    )
    assert mirror_of(CODE / "app" / "app.py") == TESTS / "app" / "test_app.py"
