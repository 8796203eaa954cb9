"""A label's drawing as sub-cell block characters, for terminals that do not show images.

Each cell is split into dots (2x3 sextants, 2x2 quadrants or 1x2 half blocks for the Linux
console), each dot ink or paper at half coverage, in the card's two colours.
"""

from __future__ import annotations

import enum
import functools
from typing import Final

from PIL import Image

from lobby_display.graphics.raster import rasterise


class Mosaic(enum.Enum):
    """How many dots a cell holds, and the characters that draw them."""

    SEXTANTS = "sextants"
    QUADRANTS = "quadrants"
    HALF_BLOCKS = "half-blocks"

    @property
    def dots(self) -> tuple[int, int]:
        """Dots across and down one cell."""
        return {"sextants": (2, 3), "quadrants": (2, 2), "half-blocks": (1, 2)}[self.value]

    @property
    def min_rows(self) -> int:
        """Fewest rows whose dots draw a legible letter (about 8 dots high); fewer, and the
        terminal's own letters read better."""
        return {"sextants": 3, "quadrants": 4, "half-blocks": 4}[self.value]


def _sextant(bits: int) -> str:
    # U+1FB00.. has every pattern but empty, full and the two half-cell columns, which exist
    # already (space, U+2588, U+258C, U+2590); bit 0 is the top left dot, bit 5 the bottom right.
    special = {0: " ", 21: "\u258c", 42: "\u2590", 63: "\u2588"}
    if bits in special:
        return special[bits]
    return chr(0x1FB00 + bits - 1 - (bits > 21) - (bits > 42))


#: For each mosaic, the character of each pattern of dots (bit i = dot i, row by row).
CHARACTERS: Final = {
    Mosaic.SEXTANTS: tuple(_sextant(bits) for bits in range(64)),
    Mosaic.QUADRANTS: tuple(" ▘▝▀▖▌▞▛▗▚▐▜▄▙▟█"),
    Mosaic.HALF_BLOCKS: tuple(" ▀▄█"),
}


def mosaic(
    label: str,
    columns: int,
    rows: int,
    kind: Mosaic,
    cell: tuple[int, int] = (10, 20),
    cjk_locale: str = "",
    max_size: int = 0,
) -> list[str] | None:
    """`label` drawn in `columns` x `rows` cells of `kind`, one string per row (each `columns`
    cells wide), for cells of `cell` pixels, its font at most `max_size` pixels when given; None
    when it cannot be drawn (see `rasterise`)."""
    drawn = _mosaic(label, columns, rows, kind, cell, cjk_locale, max_size)
    return None if drawn is None else list(drawn)


# A label's mosaic is asked for again in other colours (a call's highlight ends, a card drawn
# in the next locale's turn) and by every card it moves to at the same size.
@functools.lru_cache(maxsize=64)
def _mosaic(
    label: str,
    columns: int,
    rows: int,
    kind: Mosaic,
    cell: tuple[int, int],
    cjk_locale: str,
    max_size: int,
) -> tuple[str, ...] | None:
    across, down = kind.dots
    cell_width, cell_height = cell
    drawing = rasterise(label, columns * cell_width, rows * cell_height, cjk_locale, max_size)
    if drawing is None:
        return None
    dots = drawing.resize((columns * across, rows * down), Image.Resampling.BOX)
    ink = dots.point(_INKED).tobytes()
    if not any(ink):
        return None  # too small to leave any dot inked: the label as text says more
    # Each cell's pattern of dots for the whole picture at once: the dots of each place in a
    # cell (bit i = dot i, row by row), one byte a cell, added up as big integers (no carries:
    # the bits of the places differ), then a character per pattern.
    width = columns * across
    patterns = 0
    for dy in range(down):
        for dx in range(across):
            place = b"".join(
                ink[start + dx : start + width : across]
                for start in range(dy * width, len(ink), down * width)
            )
            patterns += int.from_bytes(place, "big") << (dy * across + dx)
    cells = patterns.to_bytes(columns * rows, "big").decode("latin-1").translate(_TABLES[kind])
    return tuple(cells[row * columns : (row + 1) * columns] for row in range(rows))


#: A dot is ink at half coverage or more.
_INKED: Final = [1 if value >= 128 else 0 for value in range(256)]
#: For each mosaic, the translation of a cell's pattern (a character 0-63) to its character.
_TABLES: Final = {kind: dict(enumerate(characters)) for kind, characters in CHARACTERS.items()}


__all__ = ["CHARACTERS", "Mosaic", "mosaic"]
