"""A ticket label drawn large in block characters (`K017`, `BX-12`), sized to the space it has.

Textual's `Digits` draws only hexadecimal digits and a few symbols large, so a `K` in `K017`
would stay one cell high. This module carries its own bitmap fonts for A-Z, 0-9, "-" and space
(a 5-pixel-high one and a 7-pixel-high one) and draws them with half blocks ("▀", "▄", "█"), so
one text row holds two pixel rows. Fonts are scaled by whole numbers in both directions until
the label fills the space: 3 rows on an 80x24 screen, 11 rows on a 160x45 one.

`render_big` is pure. `BigLabel` is the widget; it falls back to plain bold text when the label
has characters outside the fonts (a Chinese or Thai label) or the space is too small, so a label
is never drawn garbled.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from textual.app import RenderResult
from textual.content import Content
from textual.reactive import reactive
from textual.strip import Strip
from textual.style import Style as VisualStyle
from textual.visual import Visual, visualize
from textual.widget import Widget

# Glyphs as rows of "#" (ink) and "." (paper). Every glyph of a font has the font's height;
# letters and digits share one width so the digits of successive tickets line up.
_FONT_5: Final[Mapping[str, str]] = {
    "A": ".###. #...# ##### #...# #...#",
    "B": "####. #...# ####. #...# ####.",
    "C": ".#### #.... #.... #.... .####",
    "D": "####. #...# #...# #...# ####.",
    "E": "##### #.... ####. #.... #####",
    "F": "##### #.... ####. #.... #....",
    "G": ".#### #.... #..## #...# .###.",
    "H": "#...# #...# ##### #...# #...#",
    "I": ".###. ..#.. ..#.. ..#.. .###.",
    "J": "..### ...#. ...#. #..#. .##..",
    "K": "#...# #..#. ###.. #..#. #...#",
    "L": "#.... #.... #.... #.... #####",
    "M": "#...# ##.## #.#.# #...# #...#",
    "N": "#...# ##..# #.#.# #..## #...#",
    "O": ".###. #...# #...# #...# .###.",
    "P": "####. #...# ####. #.... #....",
    "Q": ".###. #...# #.#.# #..#. .##.#",
    "R": "####. #...# ####. #..#. #...#",
    "S": ".#### #.... .###. ....# ####.",
    "T": "##### ..#.. ..#.. ..#.. ..#..",
    "U": "#...# #...# #...# #...# .###.",
    "V": "#...# #...# #...# .#.#. ..#..",
    "W": "#...# #...# #.#.# ##.## #...#",
    "X": "#...# .#.#. ..#.. .#.#. #...#",
    "Y": "#...# .#.#. ..#.. ..#.. ..#..",
    "Z": "##### ...#. ..#.. .#... #####",
    # A slashed zero: ticket labels mix letters and digits ("KO17" or "K017"?).
    "0": ".###. #..## #.#.# ##..# .###.",
    "1": "..#.. .##.. ..#.. ..#.. .###.",
    "2": "####. ....# .###. #.... #####",
    "3": "####. ....# .###. ....# ####.",
    "4": "#..#. #..#. ##### ...#. ...#.",
    "5": "##### #.... ####. ....# ####.",
    "6": ".###. #.... ####. #...# .###.",
    "7": "##### ....# ...#. ..#.. ..#..",
    "8": ".###. #...# .###. #...# .###.",
    "9": ".###. #...# .#### ....# .###.",
    "-": "... ... ### ... ...",
    " ": "... ... ... ... ...",
}

_FONT_7: Final[Mapping[str, str]] = {
    "A": ".###. #...# #...# ##### #...# #...# #...#",
    "B": "####. #...# #...# ####. #...# #...# ####.",
    "C": ".###. #...# #.... #.... #.... #...# .###.",
    "D": "####. #...# #...# #...# #...# #...# ####.",
    "E": "##### #.... #.... ####. #.... #.... #####",
    "F": "##### #.... #.... ####. #.... #.... #....",
    "G": ".###. #...# #.... #.### #...# #...# .####",
    "H": "#...# #...# #...# ##### #...# #...# #...#",
    "I": ".###. ..#.. ..#.. ..#.. ..#.. ..#.. .###.",
    "J": "..### ...#. ...#. ...#. ...#. #..#. .##..",
    "K": "#...# #..#. #.#.. ##... #.#.. #..#. #...#",
    "L": "#.... #.... #.... #.... #.... #.... #####",
    "M": "#...# ##.## #.#.# #.#.# #...# #...# #...#",
    "N": "#...# #...# ##..# #.#.# #..## #...# #...#",
    "O": ".###. #...# #...# #...# #...# #...# .###.",
    "P": "####. #...# #...# ####. #.... #.... #....",
    "Q": ".###. #...# #...# #...# #.#.# #..#. .##.#",
    "R": "####. #...# #...# ####. #.#.. #..#. #...#",
    "S": ".#### #.... #.... .###. ....# ....# ####.",
    "T": "##### ..#.. ..#.. ..#.. ..#.. ..#.. ..#..",
    "U": "#...# #...# #...# #...# #...# #...# .###.",
    "V": "#...# #...# #...# #...# #...# .#.#. ..#..",
    "W": "#...# #...# #...# #.#.# #.#.# #.#.# .#.#.",
    "X": "#...# #...# .#.#. ..#.. .#.#. #...# #...#",
    "Y": "#...# #...# .#.#. ..#.. ..#.. ..#.. ..#..",
    "Z": "##### ....# ...#. ..#.. .#... #.... #####",
    "0": ".###. #...# #..## #.#.# ##..# #...# .###.",
    "1": "..#.. .##.. ..#.. ..#.. ..#.. ..#.. .###.",
    "2": ".###. #...# ....# ...#. ..#.. .#... #####",
    "3": "##### ...#. ..#.. ...#. ....# #...# .###.",
    "4": "...#. ..##. .#.#. #..#. ##### ...#. ...#.",
    "5": "##### #.... ####. ....# ....# #...# .###.",
    "6": "..##. .#... #.... ####. #...# #...# .###.",
    "7": "##### ....# ...#. ..#.. .#... .#... .#...",
    "8": ".###. #...# #...# .###. #...# #...# .###.",
    "9": ".###. #...# #...# .#### ....# ...#. .##..",
    "-": "... ... ... ### ... ... ...",
    " ": "... ... ... ... ... ... ...",
}

#: Every character the fonts draw (lowercase letters are drawn as capitals).
CHARACTERS: Final = frozenset(_FONT_5)

# A condensed glyph may be at most this many times taller than wide (pixels are about square).
_MAX_CONDENSING: Final = 2


@dataclass(frozen=True, slots=True)
class _Font:
    """A bitmap font: each glyph a tuple of rows of booleans, all `height` rows high."""

    height: int
    glyphs: Mapping[str, tuple[tuple[bool, ...], ...]]


def _font(source: Mapping[str, str]) -> _Font:
    glyphs = {
        char: tuple(tuple(cell == "#" for cell in row) for row in rows.split())
        for char, rows in source.items()
    }
    heights = {len(rows) for rows in glyphs.values()}
    if len(heights) != 1:
        raise ValueError("every glyph of a font must have the same height")
    for char, rows in glyphs.items():
        if len({len(row) for row in rows}) != 1:
            raise ValueError(f"glyph {char!r}: rows of different widths")
    return _Font(heights.pop(), glyphs)


# Larger font first: at a tie in rows, the 7-pixel font is the more legible.
_FONTS: Final = (_font(_FONT_7), _font(_FONT_5))


@dataclass(frozen=True, slots=True)
class _Size:
    font: _Font
    scale_x: int
    scale_y: int
    rows: int
    width: int


def _sizes(text: str, max_width: int, max_height: int) -> list[_Size]:
    """Every (font, scale) whose drawing of `text` fits in `max_width` x `max_height` cells."""
    sizes = []
    for font in _FONTS:
        pixels_wide = sum(len(font.glyphs[char][0]) for char in text) + len(text) - 1
        scale_y = 1
        while (rows := math.ceil(font.height * scale_y / 2)) <= max_height:
            for scale_x in range(scale_y, 0, -1):
                if scale_y > scale_x * _MAX_CONDENSING:
                    break
                width = pixels_wide * scale_x
                if width <= max_width:
                    sizes.append(_Size(font, scale_x, scale_y, rows, width))
                    break
            scale_y += 1
    return sizes


def _draw(text: str, size: _Size) -> list[str]:
    """Draw `text` at `size`: pixels scaled, then two pixel rows per text row in half blocks."""
    font = size.font
    pixel_rows: list[list[bool]] = [[] for _ in range(font.height)]
    for index, char in enumerate(text):
        glyph = font.glyphs[char]
        for row, line in zip(pixel_rows, glyph, strict=True):
            if index:
                row.extend([False] * size.scale_x)  # one pixel of space between glyphs
            for cell in line:
                row.extend([cell] * size.scale_x)
    scaled = [row for row in pixel_rows for _ in range(size.scale_y)]
    if len(scaled) % 2:
        scaled.append([False] * len(scaled[0]))
    lines = []
    for top, bottom in zip(scaled[::2], scaled[1::2], strict=True):
        lines.append(
            "".join(_HALF_BLOCKS[upper, lower] for upper, lower in zip(top, bottom, strict=True))
        )
    return lines


_HALF_BLOCKS: Final[Mapping[tuple[bool, bool], str]] = {
    (False, False): " ",
    (True, False): "▀",
    (False, True): "▄",
    (True, True): "█",
}


def render_big(label: str, max_width: int, max_height: int) -> list[str] | None:
    """Draw `label` in block characters, as large as fits in `max_width` x `max_height` cells.

    Returns the rows (all of the same width, at most `max_width` cells, at most `max_height`
    rows), or None when the label is empty, has a character outside A-Z, 0-9, "-" and space
    (lowercase is drawn as capitals), or does not fit even at the smallest size (3 rows).
    """
    rows = _render_big(label.strip().upper(), max_width, max_height)
    return list(rows) if rows is not None else None


# During a burst each call moves from card to card, at the same sizes: drawn once, reused.
@functools.lru_cache(maxsize=256)
def _render_big(text: str, max_width: int, max_height: int) -> tuple[str, ...] | None:
    if not text or max_width <= 0 or max_height <= 0:
        return None
    if any(char not in CHARACTERS for char in text):
        return None
    sizes = _sizes(text, max_width, max_height)
    if not sizes:
        return None
    # Tallest first; then the widest (glyphs closest to square); then the 7-pixel font.
    best = max(sizes, key=lambda size: (size.rows, size.width, size.font.height))
    return tuple(_draw(text, best))


class BigLabel(Widget):
    """A ticket label in big block letters, filling the widget; plain bold text otherwise."""

    DEFAULT_CSS = """
    BigLabel {
        width: 1fr;
        height: 1fr;
        content-align: center middle;
        text-style: bold;
    }
    """

    label: reactive[str] = reactive("")
    """The text shown (a ticket label such as `K017`); rendered literally, never as markup."""

    def __init__(
        self,
        label: str = "",
        *,
        name: str | None = None,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.set_reactive(BigLabel.label, label)

    @property
    def big_rows(self) -> list[str] | None:
        """The block rows drawn for the current size, or None when plain text is shown."""
        size = self.content_size
        return render_big(self.label, size.width, size.height)

    def render(self) -> RenderResult:
        """Block letters when the label fits the fonts and the space; else the text itself."""
        rows = self.big_rows
        if rows is None:
            # Content(...) keeps "[bold]" and the like literal: a label is data, not markup.
            return Content(self.label)
        return Content("\n".join(rows))

    def render_line(self, y: int) -> Strip:
        """Line `y` of the label as drawn at this size and in these colours.

        Drawn lines are shared by every big label: during a burst of calls each label moves
        from card to card at the same size, and drawing it costs more than the rest of a frame.
        """
        width, height = self.size
        style = self.visual_style
        key = (self.label, width, height, style)
        lines = _DRAWN.get(key)
        if lines is None:
            if len(_DRAWN) >= _MAX_DRAWN:
                _DRAWN.clear()
            visual = visualize(self, self.render(), markup=False)
            lines = _DRAWN[key] = Visual.to_strips(self, visual, width, height, style)
        if y < len(lines):
            return lines[y]
        return Strip.blank(width, style.rich_style)


#: Lines of big labels already drawn, by label, size and style (see `BigLabel.render_line`).
_DRAWN: Final[dict[tuple[str, int, int, VisualStyle], list[Strip]]] = {}
_MAX_DRAWN: Final = 32


def _check_fonts(fonts: Sequence[_Font]) -> None:
    """Both fonts draw the same characters (a label fits in both or in neither)."""
    first = set(fonts[0].glyphs)
    for font in fonts[1:]:
        if set(font.glyphs) != first:
            raise ValueError("the fonts do not draw the same characters")


_check_fonts(_FONTS)

__all__ = ["CHARACTERS", "BigLabel", "render_big"]
