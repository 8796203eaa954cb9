"""Docs that stay true: short module docstrings, every module placed in docs/architecture.md,
and no link from the README or docs/ to a file that does not exist."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "src" / "lobby_display"
ARCHITECTURE = ROOT / "docs" / "architecture.md"

#: A module docstring says what the module is for: its first line, and a few more at most. The
#: reasons and the rules' details are in docs/architecture.md, figures in docs/benchmarks.md.
MOST_LINES = 5

MODULES = sorted(
    path.relative_to(PACKAGE).as_posix()
    for path in PACKAGE.rglob("*.py")
    if "__pycache__" not in path.parts
)


@pytest.mark.parametrize("module", MODULES)
def test_every_module_says_what_it_is_for_in_a_few_lines(module: str) -> None:
    docstring = ast.get_docstring(ast.parse((PACKAGE / module).read_text()), clean=False)
    assert docstring, f"{module}: no module docstring"
    lines = docstring.strip("\n").splitlines()
    assert lines[0].strip(), f"{module}: the docstring's first line is empty"
    assert len(lines) <= MOST_LINES, (
        f"{module}: a docstring of {len(lines)} lines; say what the module is for in "
        f"{MOST_LINES} at most and move the reasons to docs/architecture.md"
    )


def _top_level_names() -> list[str]:
    """The package's modules and subpackages (what the layers contract places)."""
    names = {path.stem for path in PACKAGE.glob("*.py") if path.stem != "__init__"}
    names |= {path.parent.name for path in PACKAGE.glob("*/__init__.py")}
    return sorted(names)


@pytest.mark.parametrize("name", _top_level_names())
def test_the_architecture_page_places_every_module(name: str) -> None:
    text = ARCHITECTURE.read_text()
    assert re.search(rf"`{re.escape(name)}(?:\.py|/)?`", text), (
        f"docs/architecture.md does not name `{name}`: give it its layer there (and in "
        "pyproject's layers contract)"
    )


def _local_links() -> list[tuple[str, str]]:
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    links = []
    for page in pages:
        for target in re.findall(r"\]\(([^)\s]+)\)", page.read_text()):
            if not re.match(r"[a-z]+:", target) and not target.startswith("#"):
                links.append((page.relative_to(ROOT).as_posix(), target))
    return links


@pytest.mark.parametrize(("page", "target"), _local_links())
def test_links_between_the_pages_lead_to_files_that_exist(page: str, target: str) -> None:
    path = (ROOT / page).parent / target.split("#", 1)[0]
    assert path.exists(), f"{page} links to {target}, which does not exist"


def test_the_readme_points_to_the_architecture_page() -> None:
    assert "](docs/architecture.md)" in (ROOT / "README.md").read_text()
