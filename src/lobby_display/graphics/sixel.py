"""Sixel encoding of a label's coverage mask in two colours, for terminals that show images.

A label is paper and ink with anti-aliased edges, so its palette is known in advance: `LEVELS`
steps from the background colour to the ink colour, each pixel taking the step nearest to its
coverage. No colour quantisation is needed, the theme's colours come out exact, and the encoder
works a band (six pixel rows) at a time with whole-row integer arithmetic instead of a loop per
pixel. Paper is painted too, or left transparent for the cells under it to show.
"""

from __future__ import annotations

import re
from typing import Final

from PIL import Image

#: Steps from paper to ink (16 keep the edges smooth; the picture stays a few tens of KB).
LEVELS: Final = 16

_BAND: Final = 6
_START: Final = b"\x1bP0;1;0q"  # P2=1: pixels not painted keep what is under them
_END: Final = b"\x1b\\"
_RUN = re.compile(rb"(.)\1{3,}")
#: Coverage 0-255 -> step 0-(LEVELS-1).
_STEP_OF: Final = [(value * (LEVELS - 1) + 127) // 255 for value in range(256)]

#: For each step, a translation table that turns that step into 1 and every other byte into 0.
_SELECT: Final = [bytes(int(value == step) for value in range(256)) for step in range(LEVELS)]

RGB = tuple[int, int, int]


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
    width, height = mask.size
    steps = mask.point(_STEP_OF).tobytes()
    out = [_START, b'"1;1;%d;%d' % (width, height)]
    for index, (red, green, blue) in enumerate(palette(background, ink)):
        out.append(b"#%d;2;%d;%d;%d" % (index, *(round(c * 100 / 255) for c in (red, green, blue))))
    offset = int.from_bytes(b"\x3f" * width, "big")
    for top in range(0, height, _BAND):
        rows = [steps[y * width : (y + 1) * width] for y in range(top, min(top + _BAND, height))]
        band = b"".join(rows)
        colours = []
        for step in range(0 if paint_background else 1, LEVELS):
            if bytes((step,)) not in band:
                continue
            select = _SELECT[step]
            bits = 0
            for shift, row in enumerate(rows):
                bits |= int.from_bytes(row.translate(select), "big") << shift
            line = (bits + offset).to_bytes(width, "big").rstrip(b"?")
            colours.append(b"#%d" % step + _RUN.sub(_repeat, line))
        out.append(b"$".join(colours))
        out.append(b"-")
    out.append(_END)
    return b"".join(out)


def _repeat(match: re.Match[bytes]) -> bytes:
    run = match.group(0)
    return b"!%d" % len(run) + run[:1]


__all__ = ["LEVELS", "encode", "palette"]
