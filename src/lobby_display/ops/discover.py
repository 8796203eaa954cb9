"""`lobby-display discover`: the place's queues, counters and endpoints with their ids, and a
`[place]` snippet ready to paste into the config.

Names come from the network, cleaned, and are printed as plain text, never as markup. When the
configured place does not exist, the places the account can see are listed instead.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Mapping, Sequence
from typing import Final, TextIO

from rich.cells import cell_len

from lobby_display.auth import ClockNotSynchronised, CredentialsError, DisplayServiceError
from lobby_display.client import DisplayClient, ServiceFailed
from lobby_display.config import Settings
from lobby_display.feeds import load_reference
from lobby_display.models import Place, clean_text, keyed, pick_name
from lobby_display.ops.common import client_for, config_name, quiet_logs
from lobby_display.redaction import redact
from lobby_display.updates import ReferenceData

#: Shown in a table cell the service left empty.
EMPTY: Final = "-"


def discover(settings: Settings, *, out: TextIO | None = None) -> int:
    """Print the place's reference data and a config snippet; 0 when done, 1 on a problem."""
    stream = out if out is not None else sys.stdout
    with quiet_logs():
        return asyncio.run(_discover(settings, stream))


async def _discover(settings: Settings, out: TextIO) -> int:
    file = config_name(settings)
    try:
        client = client_for(settings)
    except CredentialsError as error:
        _problem(f"credentials: {error}", f"lobby-display check --config {file} says more")
        return 1
    locales = settings.display.locales
    async with client:
        try:
            try:
                place = await client.place(settings.place.id)
            except ServiceFailed as error:
                if error.status != 404:
                    raise
                return await _other_places(client, settings, out)
            reference = await load_reference(client, place.place_id, locales)
        except (DisplayServiceError, ClockNotSynchronised) as error:
            _problem(str(error), f"lobby-display check --config {file} says more")
            return 1
    print(render(reference, locales, file), file=out, end="", flush=True)
    return 0


async def _other_places(client: DisplayClient, settings: Settings, out: TextIO) -> int:
    """The configured place does not exist: list the ones the account can see."""
    file = config_name(settings)
    locales = settings.display.locales
    try:
        places = keyed(Place, await client.get_json("/places", langs=list(locales)), "place_id")
    except (DisplayServiceError, ValueError) as error:
        places = {}
        _problem(f"cannot list the places either: {error}", "")
    _problem(
        f"no place with id {settings.place.id!r} at {settings.service.display_url}",
        f"set place.id in {file} to one of the places below, then run discover again",
    )
    if places:
        rows = [
            [place_id, *_names(place.name, locales), place.city or EMPTY]
            for place_id, place in places.items()
        ]
        print(f"Places ({len(places)})", file=out)
        print(table(["ID", *locales, "CITY"], rows), file=out, flush=True)
    return 1


def render(reference: ReferenceData, locales: Sequence[str], file: str) -> str:
    """The whole report: place, queues, counters, endpoints, then the `[place]` snippet."""
    place = reference.place
    first = locales[0]
    parts: list[str] = []
    if place is not None:
        names = _names(place.name, locales)
        details = [[locale, name] for locale, name in zip(locales, names, strict=True)]
        address = (place.address, f"{place.zip} {place.city}".strip(), place.country)
        if where := ", ".join(part for part in address if part):
            details.append(["address", where])
        if place.timezone:
            details.append(["time zone", place.timezone])
        parts += [f"Place {place.place_id}", table(None, details), ""]

    rows: list[list[str]] = []
    for queue_id, queue in reference.queues.items():
        rows.append([queue_id, *_names(queue.name, locales)])
        for type_id, kind in queue.appointment_types.items():
            rows.append([f"  type {type_id}", *_names(kind.name, locales)])
    parts.append(f"Queues ({len(reference.queues)}), with their appointment types")
    parts.append(table(["ID", *locales], rows) if rows else "  (none)")
    parts.append("")

    rows = [
        [counter_id, *_names(counter.name, locales), f"{counter.infos.value:g}"]
        for counter_id, counter in reference.counters.items()
    ]
    parts.append(f"Counters ({len(reference.counters)})")
    parts.append(table(["ID", *locales, "VALUE"], rows) if rows else "  (none)")
    parts.append("")

    rows = []
    for endpoint_id, endpoint in reference.endpoints.items():
        owner = reference.queues.get(endpoint.queue_id)
        queue_name = pick_name(owner.name, first) if owner is not None else ""
        rows.append(
            [
                endpoint_id,
                *_names(endpoint.name, locales),
                f"{endpoint.queue_id or EMPTY} {queue_name}".rstrip(),
            ]
        )
    parts.append(f"Endpoints: desks and rooms tickets are called to ({len(reference.endpoints)})")
    parts.append(table(["ID", *locales, "QUEUE"], rows) if rows else "  (none)")
    parts.append("")
    parts.append(snippet(reference, first, file))
    return "\n".join(parts)


def snippet(reference: ReferenceData, locale: str, file: str) -> str:
    """The `[place]` table to paste into the config, each id followed by its name."""
    place = reference.place
    place_id = place.place_id if place is not None else ""
    lines = [
        f"# Paste into {file}, replacing its [place] table. Keep the queues and counters",
        "# the screen should show, in the order they should appear (none: all of them).",
        "[place]",
        _entry(f"id = {toml_string(place_id)}", pick_name(place.name, locale) if place else ""),
        "queues = [",
        *(
            _entry(f"    {toml_string(queue_id)},", pick_name(queue.name, locale))
            for queue_id, queue in reference.queues.items()
        ),
        "]",
        "counters = [",
        *(
            _entry(f"    {toml_string(counter_id)},", pick_name(counter.name, locale))
            for counter_id, counter in reference.counters.items()
        ),
        "]",
    ]
    return "\n".join(lines) + "\n"


def toml_string(text: str) -> str:
    """`text` as a TOML basic string."""
    escaped = []
    for char in text:
        if char in ('"', "\\"):
            escaped.append("\\" + char)
        elif ord(char) < 0x20 or ord(char) == 0x7F:
            escaped.append(f"\\u{ord(char):04x}")
        else:
            escaped.append(char)
    return '"' + "".join(escaped) + '"'


def _entry(code: str, name: str) -> str:
    # A TOML comment may hold any character but controls, which cleaned names never contain.
    comment = "".join(char for char in name if ord(char) >= 0x20 and ord(char) != 0x7F)
    return f"{code}  # {comment}" if comment else code


def table(header: Sequence[str] | None, rows: Sequence[Sequence[str]]) -> str:
    """Columns aligned by terminal cells (a CJK character takes two), indented two spaces."""
    every = [header, *rows] if header is not None else list(rows)
    widths = [max(cell_len(row[column]) for row in every) for column in range(len(every[0]))]
    lines = []
    for row in every:
        cells = [
            cell + " " * (width - cell_len(cell)) for cell, width in zip(row, widths, strict=True)
        ]
        lines.append(("  " + "  ".join(cells)).rstrip())
    return "\n".join(lines)


def _names(names: Mapping[str, str], locales: Sequence[str]) -> list[str]:
    """The name in each locale, as the service gave it ("-" when it gave none for a locale)."""
    only = names.get("")  # a name whose locale is not known fits every column
    return [names.get(locale) or only or EMPTY for locale in locales]


def _problem(message: str, fix: str) -> None:
    # An error may quote the service: no control character of its reaches the terminal.
    print(f"lobby-display discover: {clean_text(redact(message), 600)}", file=sys.stderr)
    if fix:
        print(f"  fix: {clean_text(fix, 600)}", file=sys.stderr)
