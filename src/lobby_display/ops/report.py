"""The report of `lobby-display check`: one line per check, words first, a fix under failures."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from enum import StrEnum
from typing import Final, TextIO

from lobby_display.models import clean_text
from lobby_display.redaction import redact

#: Width of the column that names the check.
NAME_WIDTH: Final = 13
#: Longest message kept on one line (a hostile or verbose error cannot flood the terminal).
MAX_MESSAGE: Final = 400


class Status(StrEnum):
    """The outcome of one check."""

    OK = "ok"
    WARN = "warn"
    FAIL = "FAIL"
    SKIP = "skip"


_SYMBOLS: Final = {Status.OK: "✓", Status.WARN: "!", Status.FAIL: "✗", Status.SKIP: "-"}


@dataclass(frozen=True, slots=True)
class Line:
    """One check's outcome as reported."""

    status: Status
    name: str
    message: str
    fix: str = ""


def can_print_symbols(stream: TextIO) -> bool:
    """True when `stream` takes ✓ and ✗ (a UTF-8 terminal or file) and `$NO_COLOR` does not ask
    for plain output; else the words alone."""
    if os.environ.get("NO_COLOR"):
        return False
    encoding = (getattr(stream, "encoding", None) or "ascii").lower().replace("-", "")
    return encoding in ("utf8", "utf16", "utf32", "utf8sig")


class Report:
    """Prints each check's line as soon as it is known, and keeps the tally for the exit code.

    Every message goes through `redact` and `clean_text`: a secret or an escape sequence
    quoted by an error can never reach the terminal.
    """

    def __init__(self, out: TextIO | None = None) -> None:
        self.out = out if out is not None else sys.stdout
        self.symbols = can_print_symbols(self.out)
        self.lines: list[Line] = []

    def add(self, status: Status, name: str, message: str, fix: str = "") -> Line:
        """Record and print one line."""
        line = Line(status, name, _safe(message), _safe(fix))
        self.lines.append(line)
        self._print(line)
        return line

    def ok(self, name: str, message: str) -> Line:
        """A check that passed."""
        return self.add(Status.OK, name, message)

    def warn(self, name: str, message: str, fix: str = "") -> Line:
        """Something worth fixing that does not stop the display."""
        return self.add(Status.WARN, name, message, fix)

    def fail(self, name: str, message: str, fix: str = "") -> Line:
        """A problem: the display will not work as configured until it is fixed."""
        return self.add(Status.FAIL, name, message, fix)

    def skip(self, name: str, message: str) -> Line:
        """A check that could not run because an earlier one failed."""
        return self.add(Status.SKIP, name, message)

    def count(self, status: Status) -> int:
        """How many lines have `status`."""
        return sum(1 for line in self.lines if line.status is status)

    @property
    def passed(self) -> bool:
        """True when no check failed (warnings allowed)."""
        return self.count(Status.FAIL) == 0

    def summary(self) -> str:
        """The closing sentence, and print it."""
        failures, warnings = self.count(Status.FAIL), self.count(Status.WARN)
        warned = f" ({_plural(warnings, 'warning')})" if warnings else ""
        if failures == 0:
            text = f"All checks passed{warned}."
        else:
            text = (
                f"{_plural(failures, 'problem')}{warned}: the display will not work as "
                "configured until the lines marked FAIL are fixed."
            )
        print(f"\n{text}", file=self.out, flush=True)
        return text

    def _print(self, line: Line) -> None:
        word = f"{line.status.value:<4}"
        head = f"{_SYMBOLS[line.status]} {word}" if self.symbols else word
        indent = " " * (len(head) + 2 + NAME_WIDTH + 1)
        text = f"{head}  {line.name:<{NAME_WIDTH}} {line.message}"
        if line.fix:
            text += f"\n{indent}fix: {line.fix}"
        print(text, file=self.out, flush=True)


def _safe(text: str) -> str:
    return clean_text(redact(text), MAX_MESSAGE)


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"
