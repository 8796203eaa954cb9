"""A screen's foot.ini: the font line chosen from the place's locales, sized to fit its TV.

DejaVu Sans Mono, then the Noto Sans Mono CJK variant of the place's first CJK locale, then Tlwg
Mono for Thai (`systemd/foot.ini`'s rules); the pixel size scales with the TV's height.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Final

#: The Noto CJK variant of each CJK locale (they share code points, not glyph shapes).
CJK_VARIANT: Final = {"zh_CN": "SC", "zh_TW": "TC", "ja_JP": "JP", "ko_KR": "KR"}
#: Locales drawn with Tlwg Mono.
THAI_LOCALES: Final = frozenset({"th_TH"})
LATIN_FONT: Final = "DejaVu Sans Mono"
THAI_FONT: Final = "Tlwg Mono"
#: Debian packages of the fonts named above.
FONT_PACKAGES: Final = {
    LATIN_FONT: "fonts-dejavu-core",
    "Noto Sans Mono CJK": "fonts-noto-cjk",
    THAI_FONT: "fonts-thai-tlwg",
}
#: foot.ini's size at 1080 lines: 18x36-pixel cells (measured with foot 1.13), 106 x 30 cells.
BASE_PIXELSIZE: Final = 30
BASE_HEIGHT: Final = 1080
#: A cell's width and height as fractions of the pixel size (18x36 at 30).
CELL_WIDTH: Final = 0.6
CELL_HEIGHT: Final = 1.2
#: The smallest grid the board needs.
MIN_COLUMNS: Final = 80
MIN_ROWS: Final = 24
#: What a screen is taken to be when none can be read (most lobby TVs).
DEFAULT_RESOLUTION: Final = (1920, 1080)


def cjk_font(locales: Sequence[str]) -> str | None:
    """The Noto CJK family of the place's CJK locale (the first listed), or None."""
    for locale in locales:
        if locale in CJK_VARIANT:
            return f"Noto Sans Mono CJK {CJK_VARIANT[locale]}"
    return None


def fonts_for(locales: Sequence[str]) -> list[str]:
    """The families foot needs for `locales`, the cell-setting Latin font first."""
    fonts = [LATIN_FONT]
    if (cjk := cjk_font(locales)) is not None:
        fonts.append(cjk)
    if THAI_LOCALES.intersection(locales):
        fonts.append(THAI_FONT)
    return fonts


def font_packages(locales: Sequence[str]) -> list[str]:
    """The Debian packages of `fonts_for(locales)`."""
    packages = []
    for font in fonts_for(locales):
        family = "Noto Sans Mono CJK" if font.startswith("Noto Sans Mono CJK") else font
        packages.append(FONT_PACKAGES[family])
    return packages


def pixel_size(width: int, height: int) -> int:
    """foot's `pixelsize` for a screen of `width` x `height` pixels: 30 at 1080 lines, scaled
    with the height, and small enough that 80 x 24 cells fit (a portrait TV, say)."""
    size = round(BASE_PIXELSIZE * height / BASE_HEIGHT)
    fits_columns = int(width / (MIN_COLUMNS * CELL_WIDTH))
    fits_rows = int(height / (MIN_ROWS * CELL_HEIGHT))
    return max(6, min(size, fits_columns, fits_rows))


def grid(width: int, height: int, size: int) -> tuple[int, int]:
    """About how many columns and rows foot shows at `size` on that screen."""
    return int(width / (size * CELL_WIDTH)), int(height / (size * CELL_HEIGHT))


def font_line(locales: Sequence[str], size: int) -> str:
    """The `font=` line of foot.ini."""
    return "font=" + ", ".join(f"{font}:pixelsize={size}" for font in fonts_for(locales))


def render(template: str, locales: Sequence[str], size: int) -> str:
    """`template` (systemd/foot.ini) with its `font=` line chosen for `locales` and `size`."""
    line = font_line(locales, size)
    text, count = re.subn(r"(?m)^font=.*$", line.replace("\\", r"\\"), template, count=1)
    if count != 1:
        raise ValueError("the foot.ini template has no font= line")
    return text


def parse_resolution(text: str) -> tuple[int, int]:
    """`1920x1080` -> (1920, 1080); ValueError for anything else or an implausible size."""
    match = re.fullmatch(r"\s*(\d{3,5})\s*[xX]\s*(\d{3,5})\s*", text)
    if match is None:
        raise ValueError(f"{text!r} is not a resolution like 1920x1080")
    width, height = int(match[1]), int(match[2])
    if not (320 <= width <= 16384 and 200 <= height <= 16384):
        raise ValueError(f"{text!r}: give 320 to 16384 pixels wide and 200 to 16384 high")
    return width, height


def connected_resolution(
    output: str = "", sysfs: Path = Path("/sys/class/drm")
) -> tuple[str, tuple[int, int]] | None:
    """The preferred mode of a connected video output from the kernel's DRM connectors
    (`card0-HDMI-A-1/modes`, the preferred mode first): the one named `output` (sway's name,
    as in `[display] output`), else the first connected one. None when nothing is known."""
    for connector in _connectors(sysfs):
        name = connector.name.split("-", 1)[1]
        if output and name != output:
            continue
        try:
            if connector.joinpath("status").read_text().strip() != "connected":
                continue
            modes = connector.joinpath("modes").read_text().split()
        except OSError:
            continue
        for mode in modes:
            try:
                return name, parse_resolution(mode.rstrip("i"))
            except ValueError:
                continue
    return None


def _connectors(sysfs: Path) -> Iterable[Path]:
    try:
        entries = sorted(sysfs.iterdir())
    except OSError:
        return []
    return [entry for entry in entries if re.fullmatch(r"card\d+-.+", entry.name)]
