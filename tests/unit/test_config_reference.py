"""The configuration reference and the example file stay in step with the settings models."""

from __future__ import annotations

import re
from pathlib import Path

from lobby_display.config import load_config
from lobby_display.config_reference import keys, reference_markdown, sections

ROOT = Path(__file__).resolve().parents[2]


def example_keys() -> dict[str, set[str]]:
    """Keys written in config.example.toml, commented out or not, by section."""
    found: dict[str, set[str]] = {}
    section = ""
    for line in (ROOT / "config.example.toml").read_text().splitlines():
        if match := re.match(r"^\[(\w+)\]", line):
            section = match[1]
            found.setdefault(section, set())
        elif (match := re.match(r"^#?\s?(\w+) = ", line)) and section:
            found[section].add(match[1])
    return found


def test_reference_page_is_up_to_date() -> None:
    committed = (ROOT / "docs" / "configuration.md").read_text()
    assert committed == reference_markdown(), (
        "docs/configuration.md is out of date: "
        "run python -m lobby_display.config_reference > docs/configuration.md"
    )


def test_example_file_shows_every_key() -> None:
    shown = example_keys()
    for section, model, _ in sections():
        expected = {key for key, _ in keys(model)}
        assert shown.get(section, set()) == expected, f"[{section}] in config.example.toml"


def test_every_key_has_a_docstring() -> None:
    for section, model, _ in sections():
        for key, info in keys(model):
            assert info.description, f"{section}.{key} has no docstring"


def test_example_file_loads() -> None:
    settings = load_config(ROOT / "config.example.toml", environ={})
    assert settings.place.id == "PLACE_ID"
