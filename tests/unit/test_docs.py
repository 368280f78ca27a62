"""Docs that stay true: what the README, docs/, the OpenAPI description and the policy docs
name is checked against what the Makefile, the REST application and the policy registry really
have, and every relative link between the documents leads to a file and a heading that exist.

A row left out of (or left behind in) a document fails here, naming it. Each check reads the
document that holds its section: the make targets docs/targets.md, the `mpsched` commands
docs/targets.md, the REST calls docs/rest.md (the README links to them).
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from mpsched import cli
from mpsched.controller.northbound import openapi
from mpsched.controller.northbound.rest import RestApi
from mpsched.controller.policies import REGISTRY
from mpsched.lab.scenario import POLICIES
from mpsched.proc.layout import REPO_ROOT

HTTP_METHODS = {"get", "put", "post", "delete", "patch", "head", "options"}


def doc(name: str) -> str:
    """A document's text, by its path in the repository (`README.md`, `docs/rest.md`)."""
    return (REPO_ROOT / name).read_text()


def documents() -> list[str]:
    """The README and every document under docs/ (results included) and scenarios/."""
    found = [*REPO_ROOT.glob("docs/**/*.md"), REPO_ROOT / "scenarios/README.md"]
    return ["README.md", *sorted(str(p.relative_to(REPO_ROOT)) for p in found)]


# -- make targets --------------------------------------------------------------


def make_help_targets() -> set[str]:
    """The targets `make help` lists (the Makefile's `target: ## text` lines; not its
    `VARIABLE=value` lines)."""
    if shutil.which("make") is None:
        pytest.skip("missing: make")
    out = subprocess.run(
        ["make", "--no-print-directory", "help"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    words = [line.split()[0] for line in out.splitlines() if line.strip()]
    return {word for word in words if "=" not in word}


def table_targets(text: str) -> set[str]:
    """The targets a targets table documents: its rows `| `make X` | ... |`."""
    return set(re.findall(r"^\| `make ([\w-]+)`", text, re.M))


def named_targets(text: str) -> set[str]:
    """Every target a document names: `make X` in backticks, and command lines `make X` in its
    code blocks (fenced, or indented by four spaces). `make bench-…` names no target."""
    inline = re.findall(r"`make ([a-z0-9][\w-]*)(?=[\s`])", text)
    code = re.findall(r"^(?:    )?make ([a-z0-9][\w-]*)(?=\s|$)", "\n".join(code_lines(text)), re.M)
    return set(inline) | set(code)


def code_lines(text: str) -> list[str]:
    """The lines of a Markdown text's code blocks: inside ``` fences, or indented by four
    spaces outside them."""
    lines, fenced = [], False
    for line in text.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif fenced or line.startswith("    "):
            lines.append(line)
    return lines


def test_target_parsers():
    text = "    make setup    # x\n| `make p4` | y |\n| `make bench-x` | z |\nsee `make q`\n"
    assert table_targets(text) == {"p4", "bench-x"}
    assert named_targets(text) == {"setup", "p4", "bench-x", "q"}
    fenced = "```sh\nmake demo   # d\n```\nmake sure, `make bench-…` and `make p4 P4_PATHS=8`\n"
    assert named_targets(fenced) == {"demo", "p4"}


def test_every_make_target_is_in_the_targets_table():
    missing = make_help_targets() - table_targets(doc("docs/targets.md"))
    assert not missing, f"docs/targets.md does not document the targets {sorted(missing)}"


def test_every_target_in_the_targets_table_exists():
    stale = table_targets(doc("docs/targets.md")) - make_help_targets()
    assert not stale, f"docs/targets.md documents targets `make help` lacks: {sorted(stale)}"


def test_the_readme_shows_the_two_commands():
    commands = re.findall(r"^make ([\w-]+)", "\n".join(code_lines(doc("README.md"))), re.M)
    assert {"demo", "test"} <= set(commands), "the README's first commands are make demo, test"


@pytest.mark.parametrize("name", documents())
def test_every_target_a_document_names_exists(name):
    stale = named_targets(doc(name)) - make_help_targets()
    assert not stale, f"{name} names targets `make help` does not list: {sorted(stale)}"


# -- the mpsched command ---------------------------------------------------------


def listed_commands(text: str) -> list[str]:
    """The rows of docs/targets.md's `mpsched` command list: the indented block after the line
    that names `mpsched --help`, as `name  help` with the spacing of `mpsched --help`."""
    start = text.index("`mpsched --help` lists")
    block = text[start:].split("\n\n", 2)[1]
    return [line.strip() for line in block.splitlines()]


def test_the_mpsched_commands_are_listed_as_help_does(capsys):
    assert cli.main(["--help"]) == 0
    helped = capsys.readouterr().out
    listed = [line.strip() for line in helped.splitlines() if line.startswith("    ")]
    width = max(len(c.name) for c in cli.COMMANDS)
    assert listed == [f"{c.name:<{width}}  {c.help}" for c in cli.COMMANDS]
    documented = listed_commands(doc("docs/targets.md"))
    assert documented == listed, "docs/targets.md's command list differs from --help"


def test_the_benchmarks_are_listed_as_bench_list_does(capsys):
    """docs/benchmarks.md lists every benchmark as `mpsched bench --list` does, in the
    indented block after the line that names it."""
    assert cli.main(["bench", "--list"]) == 0
    listed = capsys.readouterr().out.splitlines()
    text = doc("docs/benchmarks.md")
    block = text[text.index("`mpsched bench --list` lists"):].split("\n\n", 2)[1]
    assert [line.strip() for line in block.splitlines()] == listed


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
    generated over src/mpsched/controller/northbound/openapi-base.yaml) describes."""
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


def documented_operations(text: str) -> set[tuple[str, str]]:
    """(METHOD, path) of a REST table's rows (`| `GET /paths/{id}` | ...`)."""
    rows = re.findall(r"^\| `(GET|PUT|POST|DELETE) (/[^`?]*)", text, re.M)
    return {(method, normalised(path)) for method, path in rows}


def test_the_rest_table_matches_the_served_routes():
    served = {op for op in served_operations() if op[1] not in ("/", "/openapi.yaml")}
    documented = documented_operations(doc("docs/rest.md"))
    assert not served - documented, f"served, not in docs/rest.md: {sorted(served - documented)}"
    assert not documented - served, f"in docs/rest.md, not served: {sorted(documented - served)}"


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

FILE_REF = re.compile(r"`((?:[\w.-]+/)+[\w.-]+\.(?:py|p4|md|yaml|c|sh))`")


@pytest.mark.parametrize("name", documents())
def test_every_file_a_doc_names_exists(name):
    """A module moved or renamed leaves no stale `dir/file.py` behind in the docs (`build/`
    holds outputs, made by the runs and benchmarks, and is not checked)."""
    refs = {ref for ref in FILE_REF.findall(doc(name)) if not ref.startswith("build/")}
    stale = sorted(ref for ref in refs if not (REPO_ROOT / ref).exists())
    assert not stale, f"{name} names files that do not exist: {stale}"


# -- links ---------------------------------------------------------------------

LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")


def anchor(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces -> `-`."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(text: str) -> set[str]:
    """The anchors of a Markdown text's headings (a repeated heading's get `-1`, `-2`, ...)."""
    found: set[str] = set()
    count: dict[str, int] = {}
    for heading in re.findall(r"^#{1,6} (.+)$", "\n".join(prose_lines(text)), re.M):
        slug = anchor(heading)
        found.add(slug if slug not in count else f"{slug}-{count[slug]}")
        count[slug] = count.get(slug, 0) + 1
    return found


def prose_lines(text: str) -> list[str]:
    """The lines of a Markdown text outside its fenced code blocks."""
    lines, fenced = [], False
    for line in text.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced:
            lines.append(line)
    return lines


def broken_links(name: str, text: str) -> list[str]:
    """The relative links of document `name` (a path in the repository) that lead to no file,
    or to no heading of the Markdown file they name (`file.md#anchor`, `#anchor`)."""
    base = (REPO_ROOT / name).parent
    prose = re.sub(r"`[^`\n]*`", "", "\n".join(prose_lines(text)))
    targets = [t for t in LINK.findall(prose) if not re.match(r"[a-z]+:", t)]  # https:, mailto:
    return [t for t in targets if not resolves(base, text, t)]


def resolves(base: Path, text: str, target: str) -> bool:
    """Whether a link from a document in `base` whose text is `text` leads somewhere."""
    path, _, fragment = target.partition("#")
    if not path:
        return fragment in anchors(text)
    file = base / path
    if not file.exists():
        return False
    return not fragment or (file.suffix == ".md" and fragment in anchors(file.read_text()))


def test_anchor_is_githubs():
    heading = "Many-flow workload on LLHD scenario #1 (19 policies, 5 runs each)"
    assert anchor(heading) == "many-flow-workload-on-llhd-scenario-1-19-policies-5-runs-each"
    assert anchor("The P4 toolchain (`make toolchain`)") == "the-p4-toolchain-make-toolchain"
    assert anchors("# A\n## A\n```\n# not a heading\n```\n") == {"a", "a-1"}


def test_broken_links_are_found():
    text = (
        "[ok](docs/setup.md) [ok](docs/setup.md#prerequisites) [ok](#top) "
        "[gone](docs/nothing.md) [no heading](docs/setup.md#nothing) [web](https://x.org/y) "
        "`[code](not/a/link.md)`\n# Top\n"
    )
    assert broken_links("README.md", text) == ["docs/nothing.md", "docs/setup.md#nothing"]


@pytest.mark.parametrize("name", documents())
def test_every_relative_link_resolves(name):
    broken = broken_links(name, doc(name))
    assert not broken, f"{name} links to files or headings that do not exist: {broken}"


# -- the operator's example files ------------------------------------------------


def test_the_example_classes_file_is_a_valid_class_table():
    """docs/operator.md applies examples/classes.yaml with `mpsched ctl classes set`: it must
    load as ctl loads it, pass the controller's class checks and name registered policies."""
    from mpsched.client.ctl import load_classes
    from mpsched.controller.scheduling.classes import check_table, classes_from_list

    classes = classes_from_list(load_classes(str(REPO_ROOT / "examples/classes.yaml")))
    check_table(classes)
    assert classes[0].id == 0 and len(classes) > 1
    unknown = [c.policy.name for c in classes if c.policy.name not in REGISTRY]
    assert not unknown, f"examples/classes.yaml names unknown policies {unknown}"
    assert "examples/classes.yaml" in doc("docs/operator.md")
