"""Docs that stay true: what the README, the OpenAPI description and the policy docs name is
checked against what the Makefile, the REST application and the policy registry really have.

A row left out of (or left behind in) a document fails here, naming it.
"""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest
import yaml

from mpsched.controller.northbound import openapi
from mpsched.controller.northbound.rest import RestApi
from mpsched.controller.policies import REGISTRY
from mpsched.lab.scenario import POLICIES
from mpsched.proc.layout import REPO_ROOT

HTTP_METHODS = {"get", "put", "post", "delete", "patch", "head", "options"}


def readme() -> str:
    return (REPO_ROOT / "README.md").read_text()


# -- make targets --------------------------------------------------------------


def make_help_targets() -> set[str]:
    """The targets `make help` lists (the Makefile's `target: ## text` lines)."""
    if shutil.which("make") is None:
        pytest.skip("missing: make")
    out = subprocess.run(
        ["make", "--no-print-directory", "help"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return {line.split()[0] for line in out.splitlines() if line.strip()}


def readme_targets(text: str) -> set[str]:
    """The targets the README documents: its "Two commands" block (`    make X`) and the rows
    of its targets table (`| `make X` | ... |`)."""
    commands = re.findall(r"^    make ([\w-]+)", text, re.M)
    rows = re.findall(r"^\| `make ([\w-]+)`", text, re.M)
    return set(commands) | set(rows)


def test_readme_targets_parser():
    text = "    make setup    # x\n| `make p4` | y |\n| `make bench-x` | z |\nsee `make q`\n"
    assert readme_targets(text) == {"setup", "p4", "bench-x"}


def test_every_make_target_is_in_the_readme():
    missing = make_help_targets() - readme_targets(readme())
    assert not missing, f"`make help` lists targets the README does not document: {sorted(missing)}"


def test_every_target_in_the_readme_exists():
    stale = readme_targets(readme()) - make_help_targets()
    assert not stale, f"the README documents targets `make help` does not list: {sorted(stale)}"


# -- REST ----------------------------------------------------------------------


def normalised(template: str) -> str:
    """`/paths/{path_id}/weight` and `/paths/{id}/weight` alike -> `/paths/{}/weight`."""
    return re.sub(r"\{\w+\}", "{}", template)


def served_operations() -> set[tuple[str, str]]:
    """(METHOD, path) of every route the REST application serves."""
    app = RestApi(backend=None)  # type: ignore[arg-type]  # routes only, no call is made
    return {
        (method, normalised(route.template)) for route in app.routes for method in route.methods
    }


def described_operations() -> set[tuple[str, str]]:
    """(METHOD, path) of every operation the served REST description (GET /openapi.yaml,
    generated over controller/northbound/openapi-base.yaml) describes."""
    spec = yaml.safe_load(openapi.document())
    return {
        (method.upper(), normalised(path))
        for path, item in spec["paths"].items()
        for method in item
        if method in HTTP_METHODS
    }


def test_openapi_describes_every_served_route():
    missing = served_operations() - described_operations()
    assert not missing, f"served but not in /openapi.yaml: {sorted(missing)}"


def test_every_route_in_openapi_is_served():
    stale = described_operations() - served_operations()
    assert not stale, f"in /openapi.yaml but not served: {sorted(stale)}"


def readme_operations(text: str) -> set[tuple[str, str]]:
    """(METHOD, path) of the README's REST table rows (`| `GET /paths/{id}` | ...`)."""
    rows = re.findall(r"^\| `(GET|PUT|POST|DELETE) (/[^`?]*)", text, re.M)
    return {(method, normalised(path)) for method, path in rows}


def test_readme_rest_table_matches_the_served_routes():
    served = {op for op in served_operations() if op[1] not in ("/", "/openapi.yaml")}
    documented = readme_operations(readme())
    assert not served - documented, f"served, not in the README: {sorted(served - documented)}"
    assert not documented - served, f"in the README, not served: {sorted(documented - served)}"


# -- policies ------------------------------------------------------------------


@pytest.mark.parametrize("doc", ["docs/scheduling.md", "scenarios/README.md"])
def test_every_registered_policy_is_documented(doc):
    text = (REPO_ROOT / doc).read_text()
    missing = sorted(name for name in REGISTRY if f"`{name}`" not in text)
    assert not missing, f"{doc} does not name the registered policies {missing}"


def test_every_scenario_policy_name_is_in_the_scenario_reference():
    """The names a scenario may give (`policy.name`, `compare`), LM3 variants as `<name>+lm3`."""
    text = (REPO_ROOT / "scenarios/README.md").read_text()
    names = {p.removesuffix("+lm3") for p in POLICIES}
    missing = sorted(name for name in names if f"`{name}`" not in text)
    assert not missing, f"scenarios/README.md does not name {missing}"
    assert "`<name>+lm3`" in text


# -- file references -----------------------------------------------------------

DOCS = ["README.md", "docs/architecture.md", "docs/scheduling.md", "docs/mptcp.md"]
FILE_REF = re.compile(r"`((?:[\w.-]+/)+[\w.-]+\.(?:py|p4|md|yaml|c|sh))`")


@pytest.mark.parametrize("doc", [*DOCS, "scenarios/README.md"])
def test_every_file_a_doc_names_exists(doc):
    """A module moved or renamed leaves no stale `dir/file.py` behind in the docs."""
    text = (REPO_ROOT / doc).read_text()
    stale = sorted({ref for ref in FILE_REF.findall(text) if not (REPO_ROOT / ref).exists()})
    assert not stale, f"{doc} names files that do not exist: {stale}"
