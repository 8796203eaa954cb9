"""Which pictures the terminal on screen can show: sixel images, or which sub-cell mosaic.

Asked of the terminal before the screen starts (DA1 and the cell size in pixels); sextants are
known by terminal name. `[display] graphics` overrides the guess.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import re
import select
import struct
import termios
import time
from dataclasses import dataclass
from typing import Final, Literal

from lobby_display.graphics.mosaic import Mosaic

log = logging.getLogger(__name__)

#: The values of `[display] graphics`.
GraphicsSetting = Literal["auto", "sixel", "text", "sextants", "quadrants", "half-blocks"]

#: A cell's size in pixels when the terminal does not say (a common 1:2 cell).
DEFAULT_CELL: Final = (10, 20)

#: Seconds the terminal has to answer (foot answers in a millisecond; one that never answers
#: costs the screen this much at start).
ANSWER_SECONDS: Final = 0.5

#: Terminals (by TERM) whose own drawing of sextants (U+1FB00..) is known to be right.
SEXTANT_TERMINALS: Final = ("foot", "xterm-kitty", "wezterm", "contour")

_DA1: Final = re.compile(rb"\x1b\[\?([0-9;]*)c")
_CELL: Final = re.compile(rb"\x1b\[6;([0-9]+);([0-9]+)t")


@dataclass(frozen=True, slots=True)
class Graphics:
    """How big labels are drawn: as sixel images, or as one of the mosaics."""

    sixel: bool = False
    mosaic: Mosaic = Mosaic.QUADRANTS
    """The mosaic drawn where no image is shown (and under the image, for screenshots)."""
    cell: tuple[int, int] = DEFAULT_CELL
    """A cell's width and height in pixels."""
    cjk_locale: str = ""
    """The place's CJK locale: which Noto Sans CJK face draws a CJK label."""

    @property
    def min_rows(self) -> int:
        """Fewest rows a label is drawn in rather than written: 2 for an image (twice the
        terminal's letters), the mosaic's own otherwise."""
        return 2 if self.sixel else self.mosaic.min_rows

    def legible(self, size: int) -> bool:
        """Whether a label drawn at font `size` (pixels) is worth drawing rather than writing:
        its letters at least `min_rows` high (a short label in a narrow box is drawn small)."""
        return size > 0 and size * 4 >= self.min_rows * self.cell[1] * 3

    def describe(self) -> str:
        """What the log says once at start."""
        if self.sixel:
            width, height = self.cell
            return f"sixel images ({width}x{height}-pixel cells)"
        return f"text ({self.mosaic.value})"


@dataclass(frozen=True, slots=True)
class TerminalAnswers:
    """What the terminal said about itself (None: it did not say)."""

    sixel: bool | None = None
    cell: tuple[int, int] | None = None


def choose(setting: GraphicsSetting, term: str, answers: TerminalAnswers) -> Graphics:
    """The drawing for `setting` on a terminal named `term` that gave `answers`."""
    mosaic = _mosaic_for(term)
    if setting in ("sextants", "quadrants", "half-blocks"):
        mosaic = Mosaic(setting)
    cell = answers.cell or DEFAULT_CELL
    sixel = setting == "sixel" or (setting == "auto" and bool(answers.sixel))
    return Graphics(sixel=sixel, mosaic=mosaic, cell=cell)


def _mosaic_for(term: str) -> Mosaic:
    if term == "linux" or term.startswith("linux-"):
        return Mosaic.HALF_BLOCKS
    if term.startswith(SEXTANT_TERMINALS):
        return Mosaic.SEXTANTS
    return Mosaic.QUADRANTS


def pixel_cell(fd: int) -> tuple[int, int] | None:
    """A cell's size in pixels from the pty's window size (foot sets it), when known."""
    try:
        packed = fcntl.ioctl(fd, termios.TIOCGWINSZ, b"\0" * 8)
    except OSError:
        return None
    rows, columns, width, height = struct.unpack("HHHH", packed)
    if not (rows and columns and width and height):
        return None
    return width // columns, height // rows


def ask(fd_in: int, fd_out: int, timeout: float = ANSWER_SECONDS) -> TerminalAnswers:
    """Ask the terminal on `fd_in`/`fd_out` for its attributes and cell size.

    Every terminal answers DA1, so its answer (asked last) ends the wait; a terminal that
    answers nothing costs `timeout`. Not a terminal: nothing is asked.
    """
    if not (os.isatty(fd_in) and os.isatty(fd_out)):
        return TerminalAnswers()
    cell = pixel_cell(fd_out)
    query = b"\x1b[c" if cell else b"\x1b[16t\x1b[c"
    answer = _exchange(fd_in, fd_out, query, timeout)
    attributes = _DA1.search(answer)
    if cell is None and (match := _CELL.search(answer)):
        height, width = int(match.group(1)), int(match.group(2))
        cell = (width, height) if width and height else None
    sixel = None if attributes is None else "4" in attributes.group(1).decode().split(";")
    return TerminalAnswers(sixel=sixel, cell=cell)


def _exchange(fd_in: int, fd_out: int, query: bytes, timeout: float) -> bytes:
    """Write `query` with the terminal in raw mode and read until the DA1 answer or `timeout`."""
    saved = termios.tcgetattr(fd_in)
    answer = b""
    try:
        raw = termios.tcgetattr(fd_in)
        raw[3] &= ~(termios.ICANON | termios.ECHO)  # lflag: no line editing, no echo
        termios.tcsetattr(fd_in, termios.TCSANOW, raw)
        os.write(fd_out, query)
        deadline = time.monotonic() + timeout
        while not _DA1.search(answer) and (left := deadline - time.monotonic()) > 0:
            ready, _, _ = select.select([fd_in], [], [], left)
            if not ready:
                break
            chunk = os.read(fd_in, 1024)
            if not chunk:
                break
            answer += chunk
    except OSError as error:
        log.info("the terminal could not be asked what it shows: %s", error)
    finally:
        with contextlib.suppress(OSError, termios.error):
            termios.tcsetattr(fd_in, termios.TCSANOW, saved)
    return answer


def detect(setting: GraphicsSetting, fd_in: int = 0, fd_out: int = 1) -> Graphics:
    """The drawing for `setting` on the terminal of `fd_in`/`fd_out`, said once in the log."""
    term = os.environ.get("TERM", "")
    answers = ask(fd_in, fd_out) if setting in ("auto", "sixel") else TerminalAnswers()
    graphics = choose(setting, term, answers)
    if setting == "sixel" and answers.sixel is False:
        log.warning(
            "display.graphics is sixel but the terminal (%s) does not say it shows sixel", term
        )
    elif setting == "auto" and not graphics.sixel:
        log.info(
            "the terminal (%s) shows no sixel images: ticket labels are drawn in %s",
            term or "unknown",
            graphics.mosaic.value,
        )
    if graphics.sixel and answers.cell is None:
        log.warning("the terminal does not say its cell size; %dx%d pixels assumed", *DEFAULT_CELL)
    log.info("ticket labels: %s", graphics.describe())
    return graphics


__all__ = [
    "DEFAULT_CELL",
    "Graphics",
    "GraphicsSetting",
    "TerminalAnswers",
    "ask",
    "choose",
    "detect",
    "pixel_cell",
]
