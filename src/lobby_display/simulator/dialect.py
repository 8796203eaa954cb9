"""How the simulated service writes what it sends: every reading of the spec, one switch each.

A `Dialect` chooses one reading per point where the spec is silent or gives two (partial
updates, envelopes, maps, legacy names, date shapes, short first pages); each field's docstring
says what it does. `Dialect.parse("partial,bare-tickets,dates=iso")` reads the command line's.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Final, Literal

DateStyle = Literal["spec", "iso", "service"]
DATE_STYLES: Final = ("spec", "iso", "service")
#: Words of `Dialect.parse`, each a change from the defaults.
WORDS: Final[dict[str, dict[str, Any]]] = {
    "partial": {"partial": True},
    "bare-tickets": {"ticket_envelope": False},
    "ticket-maps": {"ticket_map": True},
    "counter-maps": {"counter_map": True},
    "legacy-names": {"legacy_names": True},
}


@dataclass(frozen=True, slots=True)
class Dialect:
    """One reading of the spec per point (the defaults: the spec's samples)."""

    partial: bool = False
    """An update carries only the top-level fields that changed since the record's last event
    (and its id; a field that disappeared comes as null) instead of the whole record."""
    ticket_envelope: bool = True
    """Ticket events wrapped as `{resource, actionCategory, actionName, data}`, or (False) the
    bare record (a removal then says so only by its done or canceled state)."""
    ticket_map: bool = False
    """Ticket events as a map keyed by ticketId instead of one record."""
    counter_map: bool = False
    """Counter events as a bare map keyed by counterId (like the first message) instead of one
    enveloped counter."""
    legacy_names: bool = False
    """Queue states say `opened` and `full` where version 2 says `bookingIsOpened` and
    `queueIsFull`."""
    dates: DateStyle = "spec"
    """"spec": tickets, counters and time slots in the service's
    `2026-11-22T14:05:00:00,0000+0100`, queue states in ISO-8601 with `Z`; "iso": ISO-8601
    everywhere; "service": the service's shape everywhere."""
    first_page: int | None = None
    """At most this many tickets in the tickets feed's first message, whatever `pageSize` asks (a
    first page shorter than `totalCount`: the rest must be read over REST)."""

    def __post_init__(self) -> None:
        if self.dates not in DATE_STYLES:
            raise ValueError(f"dates must be one of {', '.join(DATE_STYLES)}")
        if self.first_page is not None and not 1 <= self.first_page <= 50:
            raise ValueError("first_page must be from 1 to 50")

    @classmethod
    def parse(cls, text: str) -> Dialect:
        """A dialect from a comma-separated list: `partial`, `bare-tickets`, `ticket-maps`,
        `counter-maps`, `legacy-names`, `dates=spec|iso|service`, `first-page=N`, or `all`
        (every variant at once, with ISO dates and a first page of 7). Raises ValueError."""
        changes: dict[str, Any] = {}
        for word in (part.strip() for part in text.split(",")):
            if not word:
                continue
            name, _, value = word.partition("=")
            if word == "all":
                changes.update(cls.everything_changes())
            elif word in WORDS:
                changes.update(WORDS[word])
            elif name == "dates" and value:
                changes["dates"] = value
            elif name == "first-page" and value:
                try:
                    changes["first_page"] = int(value)
                except ValueError:
                    raise ValueError("first-page must be a whole number") from None
            else:
                known = ", ".join([*WORDS, "dates=...", "first-page=N", "all"])
                raise ValueError(f"unknown dialect word {word!r}; known: {known}")
        return replace(cls(), **changes)

    @classmethod
    def everything_changes(cls) -> dict[str, Any]:
        """Every variant away from the spec's samples at once."""
        return {
            "partial": True,
            "ticket_envelope": False,
            "ticket_map": True,
            "counter_map": True,
            "legacy_names": True,
            "dates": "iso",
            "first_page": 7,
        }

    def describe(self) -> str:
        """The variants in `parse`'s words ("spec" for the defaults)."""
        default = Dialect()
        words = [
            word
            for word, change in WORDS.items()
            if all(getattr(self, key) == value for key, value in change.items())
        ]
        if self.dates != default.dates:
            words.append(f"dates={self.dates}")
        if self.first_page is not None:
            words.append(f"first-page={self.first_page}")
        return ",".join(words) or "spec"
