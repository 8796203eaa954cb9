"""Sixel encoding of a label's coverage mask in two colours, for terminals that show images.

The palette is known in advance (`LEVELS` steps from paper to ink), so the encoder works on
whole rows with integer arithmetic and keeps the encoded ink for the next placing; paper is
painted or left transparent. Why: docs/architecture.md (the screen).
"""

from __future__ import annotations

import functools
import re
from typing import Final

from PIL import Image

#: Steps from paper to ink. Sixteen: eight looked as smooth to the eye on the TV and encoded a
#: new label in 40 % less time (2.64 -> 1.56 ms for a 540x324-pixel card), but at 4K the
#: kiosk chain's OCR from afar then read a highlighted A031 as AOQ31, every run: the edges'
#: shades are part of what tells a 0 from an O at a distance.
LEVELS: Final = 16

_BAND: Final = 6
_START: Final = b"\x1bP0;1;0q"  # P2=1: pixels not painted keep what is under them
_END: Final = b"\x1b\\"
#: Runs worth a repeat: gaps (no pixel of the step) and full columns. Other runs are short and
#: rare in a label; a pattern that starts with a literal is searched for fast.
_GAPS = re.compile(rb"(\?{4,})")
_FULLS = re.compile(rb"(~{4,})")
#: Coverage 0-255 -> step 0-(LEVELS-1).
_STEP_OF: Final = [(value * (LEVELS - 1) + 127) // 255 for value in range(256)]

#: For each step, three translation tables, one per pair of rows of a band: a byte that holds
#: the steps of two rows (the upper row in the low four bits) -> that step's sixel bits there.
_PAIRS: Final = [
    [
        bytes(
            (((pair & 15) == step) | ((pair >> 4) == step) << 1) << (2 * index)
            for pair in range(256)
        )
        for index in range(3)
    ]
    for step in range(LEVELS)
]
_STEP_BYTE: Final = [bytes((step,)) for step in range(LEVELS)]

RGB = tuple[int, int, int]
#: A picture's bands, each a tuple of (step, columns before its first pixel, sixels from there).
_Bands = tuple[tuple[tuple[int, int, bytes], ...], ...]
_NO_INK: _Bands = ()


def palette(background: RGB, ink: RGB) -> list[RGB]:
    """The `LEVELS` colours from `background` (step 0) to `ink` (the last step)."""
    last = LEVELS - 1
    return [
        tuple(round(b + (i - b) * step / last) for b, i in zip(background, ink, strict=True))  # type: ignore[misc]
        for step in range(LEVELS)
    ]


def encode(mask: Image.Image, background: RGB, ink: RGB, paint_background: bool = True) -> bytes:
    """The sixel sequence (DCS ... ST) that draws `mask` (mode "L") in `background` and `ink`.

    The picture is exactly the mask's size: a last band shorter than six rows paints only the
    rows the mask has, so nothing spills below the box. Without `paint_background`, paper
    (no coverage at all) is left transparent: what is under it shows, exactly in its colour.
    """
    return encode_ink(mask, 0, 0, mask.size, background, ink, paint_background)


def encode_ink(
    drawing: Image.Image,
    left: int,
    top: int,
    size: tuple[int, int],
    background: RGB,
    ink: RGB,
    paint_background: bool = True,
) -> bytes:
    """What `encode` makes of a mask of `size` (width, height) that is paper but for
    `drawing` (mode "L") at `left`, `top` (a label's `raster.PlacedInk`): the same sequence,
    without a mask of the whole box to make and search for the ink."""
    return header(size, background, ink) + body(drawing, left, top, size, paint_background)


def header(size: tuple[int, int], background: RGB, ink: RGB) -> bytes:
    """The start of a picture of `size` in `background` and `ink`: its size and palette. What
    follows (`body`) does not depend on the colours."""
    width, height = size
    out = [_START, b'"1;1;%d;%d' % (width, height)]
    for index, (red, green, blue) in enumerate(palette(background, ink)):
        out.append(b"#%d;2;%d;%d;%d" % (index, *(round(c * 100 / 255) for c in (red, green, blue))))
    return b"".join(out)


def body(
    drawing: Image.Image, left: int, top: int, size: tuple[int, int], paint_background: bool = True
) -> bytes:
    """The rest of `encode_ink`'s sequence after its `header`: the pixels, in the palette's
    steps, and the end of the sequence. The expensive part, and the same in any colours, so it
    can be made ahead or elsewhere (`graphics.pictures`)."""
    width, height = size
    # The ink is encoded apart, from the band where it starts: the same label at the same size
    # in another box (a card of another width), in other colours or with paper painted or not
    # is the same ink at another place, and only its place is written again.
    box = drawing.getbbox()
    ink_left, first_band, bands = 0, 0, _NO_INK
    if box is not None:
        x0, y0, x1, y1 = box
        ink_left, ink_top = left + x0, top + y0
        first_band = ink_top // _BAND
        # From the top of the band the ink starts in: rows above the drawing are paper.
        above = ink_top - first_band * _BAND
        crop = drawing.crop((x0, y0 - above, x1, y1)).point(_STEP_OF)
        bands = _ink_bands(crop.tobytes(), x1 - x0)
    # The colours are all in the palette above: a label recoloured (a highlight ending) is
    # the same picture after it, and only the palette is written again.
    return _picture(bands, width, height, ink_left, first_band, paint_background) + _END


@functools.lru_cache(maxsize=64)
def _picture(
    bands: _Bands, width: int, height: int, left: int, first_band: int, paint_background: bool
) -> bytes:
    """The sixel data of a picture of `width` x `height` with `bands` placed at `left` from
    band `first_band`: every band, paper first (when painted), then each step."""
    out = []
    for index, band_top in enumerate(range(0, height, _BAND)):
        rows = min(_BAND, height - band_top)
        # Paper first, as one run over the band's rows; the other steps are painted over it.
        lines = [b"#0!%d%c" % (width, 0x3F + (1 << rows) - 1)] if paint_background else []
        if 0 <= index - first_band < len(bands):
            for step, gap, drawn in bands[index - first_band]:
                gap += left
                lead = b"!%d?" % gap if gap > 3 else b"?" * gap
                lines.append(b"#%d%s%s" % (step, lead, drawn))
        out.append(b"$".join(lines))
        out.append(b"-")
    return b"".join(out)


@functools.lru_cache(maxsize=32)
def _ink_bands(steps: bytes, width: int) -> _Bands:
    """For each band of `steps` (rows of `width` steps), each step but paper that it holds:
    (step, columns before its first pixel, its sixels from there with runs repeated).

    Every band at once: the rows of each pair (0-1, 2-3, 4-5 of every band) are laid end to
    end, each step's sixels for the whole picture come from three translations and a few
    whole-picture integer operations, then are cut into bands."""
    size = _BAND * width
    count = -(-len(steps) // size)
    steps += bytes(count * size - len(steps))  # step 0 in the rows below: not painted
    planes = []
    for pair in range(3):
        upper = b"".join(
            steps[start : start + width] for start in range(2 * pair * width, len(steps), size)
        )
        lower = b"".join(
            steps[start : start + width]
            for start in range((2 * pair + 1) * width, len(steps), size)
        )
        both = int.from_bytes(upper, "big") | int.from_bytes(lower, "big") << 4
        planes.append(both.to_bytes(len(upper), "big"))
    offset = int.from_bytes(b"\x3f" * (count * width), "big")
    bands: list[list[tuple[int, int, bytes]]] = [[] for _ in range(count)]
    for step in range(1, LEVELS):
        if _STEP_BYTE[step] not in steps:
            continue
        first, second, third = _PAIRS[step]
        bits = (
            int.from_bytes(planes[0].translate(first), "big")
            | int.from_bytes(planes[1].translate(second), "big")
            | int.from_bytes(planes[2].translate(third), "big")
        )
        sixels = (bits + offset).to_bytes(count * width, "big")
        found, gaps, lines = [], [], []
        for band in range(count):
            line = sixels[band * width : (band + 1) * width].rstrip(b"?")
            if line:
                drawn = line.lstrip(b"?")
                found.append(band)
                gaps.append(len(line) - len(drawn))
                lines.append(drawn)
        # Runs repeated in one pass over the step's lines ('$' is in none of them).
        text = _repeat(b"$".join(lines))
        for band, gap, drawn in zip(found, gaps, text.split(b"$"), strict=True):
            bands[band].append((step, gap, drawn))
    return tuple(tuple(band) for band in bands)


def forget() -> None:
    """Drop the inks and pictures kept for placing again: a process that encodes each label
    once (the picture maker) would only grow with them."""
    _ink_bands.cache_clear()
    _picture.cache_clear()


def _repeat(text: bytes) -> bytes:
    """`text` with its runs of gaps and of full columns written as repeats (`!count` sixel)."""
    parts = _GAPS.split(text)
    parts[1::2] = [b"!%d?" % len(run) for run in parts[1::2]]
    text = b"".join(parts)
    if b"~~~~" in text:
        parts = _FULLS.split(text)
        parts[1::2] = [b"!%d~" % len(run) for run in parts[1::2]]
        text = b"".join(parts)
    return text


__all__ = ["LEVELS", "body", "encode", "encode_ink", "forget", "header", "palette"]
