"""The files the simulator hands to a display: a service-account JSON and a ready config TOML."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

from lobby_display.config import load_config

CREDENTIALS_NAME: Final = "service-account.json"
CONFIG_NAME: Final = "config.toml"
#: Locales a generated config shows by default: the place's language and English.
DEFAULT_LOCALES: Final = ("fr_FR", "en_US")


def toml_value(value: object) -> str:
    """One TOML value: a string, number, boolean, path, or an array of those."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, Path):
        value = str(value)
    if isinstance(value, str):
        # JSON string escapes (\", \\, \n, \uXXXX) are TOML basic-string escapes too.
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(toml_value(item) for item in value) + "]"
    raise TypeError(f"cannot write {type(value).__name__} to TOML")


def toml_document(tables: Mapping[str, Mapping[str, object]], header: str = "") -> str:
    """A TOML document of one level of tables."""
    lines = [f"# {line}" for line in header.splitlines()]
    for name, table in tables.items():
        if lines:
            lines.append("")
        lines.append(f"[{name}]")
        lines.extend(f"{key} = {toml_value(value)}" for key, value in table.items())
    return "\n".join(lines) + "\n"


def write_config(
    directory: Path,
    *,
    url: str,
    company: str,
    place_id: str,
    credentials: Path | None,
    api_key: str | None = None,
    locales: list[str] | tuple[str, ...] | None = None,
    sections: Mapping[str, Mapping[str, Any]] | None = None,
) -> Path:
    """Write `config.toml` for a display of the simulated place and check that it loads.

    `sections` add or override keys (`{"display": {"rotation_seconds": 5}}`). The state
    directory is `state/` inside `directory`. Raises `config.ConfigError` if the result is not
    a valid config (a misspelt override, say).
    """
    directory.mkdir(parents=True, exist_ok=True)
    service: dict[str, Any] = {"display_url": url}
    if api_key is not None:
        service["api_key"] = api_key
    else:
        service["credentials"] = credentials
        service["company"] = company
    state = directory / "state"
    state.mkdir(mode=0o700, exist_ok=True)
    tables: dict[str, dict[str, Any]] = {
        "service": service,
        "place": {"id": place_id},
        "display": {"locales": list(locales or DEFAULT_LOCALES)},
        "state": {"directory": state},
    }
    for name, values in (sections or {}).items():
        tables.setdefault(name, {}).update(values)
    path = directory / CONFIG_NAME
    header = "lobby-display configuration for the embedded display service simulator.\n"
    header += "Written by the simulator; valid while it runs (its key pair changes every run)."
    text = toml_document(tables, header)
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
        handle.write(text)
    load_config(path, environ={})
    return path
