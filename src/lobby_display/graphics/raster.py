"""A ticket label rasterised from a TrueType font of the system, as large as fits its box.

The drawing is a coverage mask (0 paper, 255 ink), bold and centred on its ink; colours come
later. The font follows the label's script (docs/architecture.md: the screen).
"""

from __future__ import annotations

import functools
import logging
import math
import subprocess
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from PIL import Image, ImageDraw, ImageFont

from lobby_display.children import child_environment

log = logging.getLogger(__name__)

#: Longest label drawn as a picture (ticket labels are short; a longer text stays text).
MAX_LABEL_LENGTH: Final = 12

#: Space kept free around the ink, as a fraction of the box's height (top and bottom) and width.
MARGIN: Final = 0.06

#: Where Debian's font packages put the fonts (fonts-dejavu-core, fonts-thai-tlwg,
#: fonts-noto-cjk); fontconfig is asked only when a file is not there.
_LATIN: Final = ("/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf", "DejaVu Sans:bold")
_THAI: Final = ("/usr/share/fonts/truetype/tlwg/Loma-Bold.ttf", "Loma:bold")
_CJK: Final = ("/usr/share/fonts/opentype/noto/NotoSansCJK-Bold.ttc", "Noto Sans CJK JP:bold")

#: The Noto Sans CJK face for each CJK locale (the .ttc holds one face per region).
CJK_FACES: Final = {
    "ja_JP": "Noto Sans CJK JP",
    "ko_KR": "Noto Sans CJK KR",
    "zh_CN": "Noto Sans CJK SC",
    "zh_TW": "Noto Sans CJK TC",
}


@dataclass(frozen=True, slots=True)
class FontChoice:
    """A font file and the face in it (a .ttc holds several)."""

    path: str
    index: int = 0


def script_of(label: str) -> str:
    """ "cjk", "thai" or "latin": which of the fonts draws `label`."""
    if any(_is_cjk(char) for char in label):
        return "cjk"
    if any("\u0e00" <= char <= "\u0e7f" for char in label):
        return "thai"
    return "latin"


def _is_cjk(char: str) -> bool:
    code = ord(char)
    return (
        0x1100 <= code <= 0x11FF  # Hangul Jamo
        or 0x2E80 <= code <= 0x9FFF  # radicals, kana, CJK symbols, unified ideographs
        or 0xAC00 <= code <= 0xD7AF  # Hangul syllables
        or 0xF900 <= code <= 0xFAFF  # compatibility ideographs
        or 0xFF00 <= code <= 0xFFEF  # full-width forms
        or 0x20000 <= code <= 0x3FFFF
    )


@functools.cache
def font_for(script: str, cjk_locale: str = "") -> FontChoice | None:
    """The font file that draws `script`, or None when the system has none (said once)."""
    path, pattern = {"cjk": _CJK, "thai": _THAI}.get(script, _LATIN)
    if script == "cjk":
        pattern = CJK_FACES.get(cjk_locale, "Noto Sans CJK JP") + ":bold"
    if not Path(path).is_file():
        found = _fontconfig(pattern)
        if found is None:
            log.warning("no font for %s labels (%s); they are shown as text", script, pattern)
            return None
        path = found
    index = _face_index(path, pattern.split(":")[0]) if path.endswith(".ttc") else 0
    return FontChoice(path, index)


def _fontconfig(pattern: str) -> str | None:
    """The file fontconfig picks for `pattern`, when it is a real match and not a substitute."""
    try:
        found = subprocess.run(  # noqa: S603 (a fixed program; the pattern is ours)
            ["fc-match", "--format=%{file}\n%{family}", pattern],  # noqa: S607
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
            env=child_environment(),
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    path, _, families = found.partition("\n")
    family = pattern.split(":")[0]
    return path if path and family in families.split(",") else None


def _face_index(path: str, family: str) -> int:
    """The index of `family`'s face in the collection at `path` (0 when not found)."""
    for index in range(16):
        try:
            name, _style = ImageFont.truetype(path, 10, index=index).getname()
        except OSError:
            break
        if name == family:
            return index
    return 0


@functools.lru_cache(maxsize=64)
def _font(choice: FontChoice, size: int) -> ImageFont.FreeTypeFont:
    return ImageFont.truetype(choice.path, size, index=choice.index)


def drawable(label: str) -> bool:
    """Whether `label` can be drawn as a picture: 1 to `MAX_LABEL_LENGTH` printable characters."""
    text = label.strip()
    return 0 < len(text) <= MAX_LABEL_LENGTH and all(
        unicodedata.category(char)[0] in "LMNPS" or char == " " for char in text
    )


@dataclass(frozen=True, slots=True)
class PlacedInk:
    """A label's ink and where it lies in its box: a drawing without the paper around it (a
    sixel image encodes the ink only; `mask` lays it on paper)."""

    ink: Image.Image
    """The coverage of the ink (mode "L"), cut to its edges (unless scaled down to fit)."""
    left: int
    top: int
    width: int
    """The box's width, in pixels."""
    height: int

    def mask(self) -> Image.Image:
        """The whole box: paper (0) with the ink in its place."""
        image = Image.new("L", (self.width, self.height), 0)
        image.paste(self.ink, (self.left, self.top))
        return image


def rasterise(
    label: str, width: int, height: int, cjk_locale: str = "", max_size: int = 0
) -> Image.Image | None:
    """`label` drawn as large as fits `width` x `height` pixels, and no larger than `max_size`
    pixels when given (labels shown together share one size): a coverage mask (mode "L").

    None when the label cannot be drawn (empty, too long, not printable), the box is too small
    for legible ink (under 8 pixels high), or no font for its script is installed.
    """
    placed = place_ink(label, width, height, cjk_locale, max_size)
    return None if placed is None else placed.mask()


def place_ink(
    label: str, width: int, height: int, cjk_locale: str = "", max_size: int = 0
) -> PlacedInk | None:
    """What `rasterise` draws, as the ink and its place in the box: a call's sixel picture is
    encoded from its ink alone (`sixel.encode_ink`), so no box of paper is made for it only to
    be searched for the ink again."""
    found = _text_and_font(label, width, height, cjk_locale)
    return None if found is None else _place_ink(*found, width, height, max_size)


def fitted_size(label: str, width: int, height: int, cjk_locale: str = "") -> int:
    """The font size (pixels) `rasterise` draws `label` at in `width` x `height`; 0: not drawn."""
    found = _text_and_font(label, width, height, cjk_locale)
    return 0 if found is None else _fit(*found, width, height)


def _text_and_font(
    label: str, width: int, height: int, cjk_locale: str
) -> tuple[str, FontChoice] | None:
    """The label's text and its script's font, when it can be drawn in the box at all."""
    text = label.strip()
    if not drawable(text) or width < 8 or height < 8:
        return None
    choice = font_for(script_of(text), cjk_locale)
    return None if choice is None else (text, choice)


# A new call's label is fitted to every card box the panel weighs (how many cards, how many
# columns): measured at 100 px once, not once a box.
@functools.lru_cache(maxsize=64)
def _ink_at_100(text: str, choice: FontChoice) -> tuple[float, float]:
    """The width and height of the ink of `text` at 100 px."""
    left, top, right, bottom = _font(choice, 100).getbbox(text)
    return right - left, bottom - top


@functools.lru_cache(maxsize=256)
def _fit(text: str, choice: FontChoice, width: int, height: int) -> int:
    """The largest font size whose ink of `text` fits the box less its margins; 0: none."""
    room_x = width - 2 * max(1, round(width * MARGIN / 2))
    room_y = height - 2 * max(1, round(height * MARGIN))
    # The ink grows in proportion to the size: measured once at 100 px, then checked down.
    ink_width, ink_height = _ink_at_100(text, choice)
    if ink_width <= 0 or ink_height <= 0:
        return 0  # nothing to ink (spaces only)
    size = math.floor(100 * min(room_x / ink_width, room_y / ink_height))
    while size >= 4:
        left, top, right, bottom = _font(choice, size).getbbox(text)
        if right - left <= room_x and bottom - top <= room_y:
            return size
        size -= 1
    return 0


@functools.lru_cache(maxsize=16)
def _place_ink(
    text: str, choice: FontChoice, width: int, height: int, max_size: int
) -> PlacedInk | None:
    size = _fit(text, choice, width, height)
    if not size:
        return None
    if max_size:
        size = min(size, max_size)
    ink = _ink(text, size, choice)
    if ink is None:
        return None
    if ink.width > width or ink.height > height:  # a font whose own box undersells its ink
        scale = min(width / ink.width, height / ink.height)
        ink = ink.resize(
            (int(ink.width * scale), int(ink.height * scale)), Image.Resampling.LANCZOS
        )
    ink_width, ink_height = ink.size
    return PlacedInk(ink, (width - ink_width) // 2, (height - ink_height) // 2, width, height)


@functools.lru_cache(maxsize=32)
def _ink(text: str, size: int, choice: FontChoice) -> Image.Image | None:
    """`text` drawn at `size` and cut to its ink (None: no ink). Drawn apart, then pasted centred
    by the caller: the font's own box of the text is off by a few pixels (side bearings), enough
    to push a short label off centre. The same ink serves every box it is centred in (cards of
    other widths; the calls shown together share one size)."""
    font = _font(choice, size)
    left, top, right, bottom = (int(edge) for edge in font.getbbox(text))
    pad = size // 4
    ink = Image.new("L", (right - left + 2 * pad, bottom - top + 2 * pad), 0)
    ImageDraw.Draw(ink).text((pad - left, pad - top), text, fill=255, font=font)
    box = ink.getbbox()
    return None if box is None else ink.crop(box)


def forget() -> None:
    """Drop the drawings kept for drawing again (the fonts and sizes stay): a process that draws
    each label once (the picture maker) would only grow with them."""
    _place_ink.cache_clear()
    _ink.cache_clear()


__all__ = [
    "CJK_FACES",
    "MAX_LABEL_LENGTH",
    "FontChoice",
    "PlacedInk",
    "drawable",
    "fitted_size",
    "font_for",
    "forget",
    "place_ink",
    "rasterise",
    "script_of",
]
