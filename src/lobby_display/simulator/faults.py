"""Faults the simulator can inject: hostile strings, error answers, and bad SSE payloads."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final, Literal

#: Size of the huge event by default (2 MB of JSON).
HUGE_EVENT_BYTES: Final = 2 * 1024 * 1024
#: Length of the very long name among the hostile strings (100 KB).
LONG_NAME_CHARS: Final = 100 * 1024


def _markup_link(text: str) -> str:
    return f"[link='https://x']{text}[/]"


def _markup_style(text: str) -> str:
    return f"[bold red]{text}"


def _clear_screen(text: str) -> str:
    return f"\x1b[2J{text}"


def _osc_title(text: str) -> str:
    return f"\x1b]0;pwned\x07{text}"


def _c1_csi(text: str) -> str:
    return f"\x9b31m{text}"


def _bidi_override(text: str) -> str:
    return f"\u202e{text}"


def _zero_width(text: str) -> str:
    middle = len(text) // 2
    return f"{text[:middle]}\u200b\u200d\u2060{text[middle:]}\ufeff"


def _nul(text: str) -> str:
    return f"{text}\x00"


def _long(text: str) -> str:
    return (text + " ") + "W" * LONG_NAME_CHARS


def _combining_flood(text: str) -> str:
    return text[:1] + "\u0301\u0317\u0358" * 700 + text[1:]


def _line_breaks(text: str) -> str:
    # Line breaks of every kind: a client that splits lines on them breaks its SSE parsing.
    return f"{text}\r\nevent: fake\u2028data: {{}}\u2029\x85"


def _rich_escape(text: str) -> str:
    return f"{text}\\[/]\\"


#: Transformations that make a name or a label hostile, applied in turn to successive records.
HOSTILE_PATTERNS: Final[tuple[Callable[[str], str], ...]] = (
    _markup_link,
    _markup_style,
    _clear_screen,
    _osc_title,
    _c1_csi,
    _bidi_override,
    _zero_width,
    _nul,
    _long,
    _combining_flood,
    _line_breaks,
    _rich_escape,
)


def hostile_text(text: str, index: int) -> str:
    """`text` made hostile by the pattern at `index` (taken modulo the number of patterns)."""
    return HOSTILE_PATTERNS[index % len(HOSTILE_PATTERNS)](text)


#: Terminal controls put into the service's short codes (time zone, language, a ticket's lang,
#: an event's action) when the place is hostile: the clipboard (OSC 52), the window title, a
#: screen clear with a bell, a hyperlink (OSC 8), a C1 CSI.
HOSTILE_CODE_PATTERNS: Final[tuple[Callable[[str], str], ...]] = (
    lambda text: f"\x1b]52;c;cHduZWQ=\x07{text}",
    lambda text: f"\x1b]0;pwned\x1b\\{text}",
    lambda text: f"\x1b[2J\x1b[H\x07{text}",
    lambda text: f"\x1b]8;;https://x\x1b\\{text}\x1b]8;;\x1b\\",
    lambda text: f"\x9b2J{text}",
)


def hostile_code(text: str, index: int) -> str:
    """`text` (a code: a time zone, a language) with the control sequence at `index` (modulo)."""
    return HOSTILE_CODE_PATTERNS[index % len(HOSTILE_CODE_PATTERNS)](text)


FailTarget = Literal["all", "rest", "sse"]


@dataclass(slots=True)
class FailNext:
    """Answer the next `remaining` requests of `target` with HTTP `status`."""

    remaining: int = 0
    status: int = 503
    target: FailTarget = "all"

    def take(self, is_sse: bool) -> int | None:
        """The status to answer this request with, or None to serve it normally."""
        if self.remaining <= 0:
            return None
        if self.target == "rest" and is_sse:
            return None
        if self.target == "sse" and not is_sse:
            return None
        self.remaining -= 1
        return self.status


@dataclass(slots=True)
class FaultState:
    """Faults that affect requests as they come in."""

    fail: FailNext = field(default_factory=FailNext)


def malformed_payload() -> bytes:
    """An SSE data line whose JSON is cut short."""
    return b'{"resource":"ticket","actionCategory":"TICKET","actionName":"UPDATE","data":{"tick'


def unknown_payload() -> bytes:
    """An envelope of a kind no client knows (sent with an `event:` name of its own)."""
    envelope = {
        "resource": "parkingMeter",
        "actionCategory": "UNHEARD_OF",
        "actionName": "FROBNICATE",
        "data": {"meterId": "M1", "coins": 3},
    }
    return json.dumps(envelope, separators=(",", ":")).encode()


def huge_payload(resource: str, category: str, record: dict[str, Any], size: int) -> bytes:
    """An update of about `size` bytes: a real record padded with a field nobody reads."""
    padded = dict(record)
    if resource == "ticket":
        padded["extendedAttributes"] = {"padding": "x" * max(0, size)}
    else:
        padded["padding"] = "x" * max(0, size)
    envelope: dict[str, Any] = {
        "resource": resource,
        "actionCategory": category,
        "actionName": "UPDATE",
        "data": padded,
    }
    return json.dumps(envelope, separators=(",", ":"), ensure_ascii=False).encode()
