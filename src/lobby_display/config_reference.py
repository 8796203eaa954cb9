"""The configuration reference (docs/configuration.md), generated from the settings models.

`python -m lobby_display.config_reference > docs/configuration.md` rewrites it; a test checks
that the committed file and `config.example.toml` agree with the models, so the documentation
cannot drift from what the program accepts.
"""

from __future__ import annotations

import typing
from collections.abc import Iterator
from enum import Enum
from pathlib import Path
from typing import Any

from pydantic import BaseModel, SecretStr
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from lobby_display.config import ENV_PREFIX, Settings

HEADER = """# Configuration reference

One TOML file per screen (`lobby-display run --config FILE`). This page is generated from the
settings models (`python -m lobby_display.config_reference > docs/configuration.md`); the
commented example is [`config.example.toml`](../config.example.toml).

- Unknown keys are errors, so a typo is reported instead of silently ignored.
- Any key can be set from the environment: `{prefix}<SECTION>__<KEY>`, e.g.
  `{prefix}PLACE__ID=P1`; a list is written as a TOML array,
  `{prefix}DISPLAY__LOCALES='["fr_FR", "en_US"]'`.
- `lobby-display check --config FILE` validates a file and reports every problem at once, each
  with its key, and exits with code 2 on a bad file.
"""


def sections() -> Iterator[tuple[str, type[BaseModel], FieldInfo]]:
    """Each `[section]` of the file with its model."""
    for name, field in Settings.model_fields.items():
        annotation = field.annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            yield name, annotation, field


def keys(model: type[BaseModel]) -> Iterator[tuple[str, FieldInfo]]:
    """The keys of one section."""
    yield from model.model_fields.items()


def _type_name(annotation: Any) -> str:
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is typing.Literal:
        return " \\| ".join(f'`"{arg}"`' for arg in args)
    if origin in (typing.Union, getattr(__import__("types"), "UnionType", None)):
        named = [_type_name(arg) for arg in args if arg is not type(None)]
        return " \\| ".join(named) + (" (optional)" if type(None) in args else "")
    if origin is list:
        return f"list of {_type_name(args[0])}" if args else "list"
    if annotation is SecretStr:
        return "string (secret)"
    if annotation is Path:
        return "path"
    if isinstance(annotation, type) and issubclass(annotation, Enum):
        return " \\| ".join(f'`"{member.value}"`' for member in annotation)
    return {str: "string", int: "integer", float: "number", bool: "boolean"}.get(
        annotation, getattr(annotation, "__name__", str(annotation))
    )


def _default(field: FieldInfo) -> str:
    if field.is_required():
        return "**required**"
    value = field.default
    if value is PydanticUndefined and field.default_factory is not None:
        value = field.default_factory()  # type: ignore[call-arg]
    if value is None:
        return "not set"
    if isinstance(value, Path):
        return f'`"{value}"`'
    if isinstance(value, str):
        return f'`"{value}"`'
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    if isinstance(value, list):
        return "`[" + ", ".join(f'"{item}"' for item in value) + "]`"
    return f"`{value}`"


def _constraints(field: FieldInfo) -> str:
    parts = []
    for item in field.metadata:
        for attribute, word in (("ge", "≥"), ("gt", ">"), ("le", "≤"), ("lt", "<")):
            bound = getattr(item, attribute, None)
            if bound is not None:
                parts.append(f"{word} {bound}")
        if (length := getattr(item, "min_length", None)) is not None:
            parts.append("not empty" if length == 1 else f"at least {length} long")
    return f" ({', '.join(parts)})" if parts else ""


def reference_markdown() -> str:
    """The whole reference page."""
    out = [HEADER.format(prefix=ENV_PREFIX)]
    for section, model, field in sections():
        out.append(f"\n## `[{section}]`\n")
        summary = (model.__doc__ or "").strip().split(": ", 1)[-1]
        out.append(f"{summary[:1].upper()}{summary[1:]}\n")
        if not field.is_required():
            out.append("This section may be left out.\n")
        out.append("\n| key | type | default | meaning |\n|---|---|---|---|\n")
        for key, info in keys(model):
            meaning = " ".join((info.description or "").split())
            env = f"{ENV_PREFIX}{section.upper()}__{key.upper()}"
            out.append(
                f"| `{key}` | {_type_name(info.annotation)}{_constraints(info)} | "
                f"{_default(info)} | {meaning} <br>env: `{env}` |\n"
            )
    return "".join(out)


if __name__ == "__main__":
    print(reference_markdown(), end="")
