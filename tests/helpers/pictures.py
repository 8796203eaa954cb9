"""Pictures back from what the display sends: a sixel decoder, mosaics as bitmaps, and OCR.

The tests read a label the way a visitor does: from the pixels the terminal would show.
"""

from __future__ import annotations

import re
import shutil
import subprocess

from PIL import Image, ImageOps
from textual.geometry import Region

from lobby_display.graphics.mosaic import CHARACTERS, Mosaic
from lobby_display.widgets.big_label import BigLabel

_DCS = re.compile(r"\x1bP([0-9;]*)q(.*?)\x1b\\", re.S)


def sent_image(widget: BigLabel) -> str | None:
    """The sixel sequence a big label sends when its whole box is drawn (None: no image)."""
    width, height = widget.size
    strips = widget.render_lines(Region(0, 0, width, height))
    sent = "".join(segment.text for strip in strips for segment in strip if segment.control)
    found = _DCS.search(sent)
    return found.group(0) if found else None


def decode_sixel(sequence: str, under: tuple[int, int, int] = (255, 0, 255)) -> Image.Image:
    """The RGB picture a terminal shows for one sixel `sequence` (DCS ... ST) drawn over cells
    of the colour `under`: the pixels it leaves unpainted (transparent) show that colour
    (magenta by default, so a test sees any hole)."""
    match = _DCS.search(sequence)
    assert match is not None, "no sixel sequence"
    body = match.group(2)
    raster = re.match(r'"1;1;(\d+);(\d+)', body)
    assert raster is not None, "no raster attributes"
    width, height = int(raster.group(1)), int(raster.group(2))
    image = Image.new("RGB", (width, height), under)
    pixels = image.load()
    assert pixels is not None
    colours: dict[int, tuple[int, int, int]] = {}
    colour, x, band = 0, 0, 0
    for token in re.finditer(
        r"#(\d+)(?:;2;(\d+);(\d+);(\d+))?|!(\d+)(.)|([?-~])|\$|-", body[raster.end() :]
    ):
        text = token.group(0)
        if text.startswith("#"):
            colour = int(token.group(1))
            if token.group(2) is not None:
                colours[colour] = tuple(round(int(token.group(i)) * 255 / 100) for i in (2, 3, 4))  # type: ignore[assignment]
        elif text == "$":
            x = 0
        elif text == "-":
            x, band = 0, band + 1
        else:
            count, char = (int(token.group(5)), token.group(6)) if token.group(5) else (1, text)
            bits = ord(char) - 0x3F
            for _ in range(count):
                for bit in range(6):
                    y = band * 6 + bit
                    if bits >> bit & 1:
                        assert x < width and y < height, f"pixel ({x}, {y}) outside the picture"
                        pixels[x, y] = colours[colour]
                x += 1  # noqa: SIM113 (runs advance x by their count)
    return image


def mosaic_bitmap(rows: list[str], kind: Mosaic, dot: int = 8) -> Image.Image:
    """The mosaic `rows` as a black-on-white bitmap, each dot `dot` pixels (cells 1:2)."""
    across, down = kind.dots
    pattern = {char: bits for bits, char in enumerate(CHARACTERS[kind])}
    cell_width, cell_height = 2 * dot, 4 * dot
    image = Image.new("L", (len(rows[0]) * cell_width, len(rows) * cell_height), 255)
    for y, row in enumerate(rows):
        for x, char in enumerate(row):
            bits = pattern[char]
            for dy in range(down):
                for dx in range(across):
                    if bits >> (dy * across + dx) & 1:
                        box = (
                            x * cell_width + dx * cell_width // across,
                            y * cell_height + dy * cell_height // down,
                            x * cell_width + (dx + 1) * cell_width // across,
                            y * cell_height + (dy + 1) * cell_height // down,
                        )
                        image.paste(0, box)
    return image


def ocr_line(image: Image.Image, scale: float = 1.0) -> str:
    """What tesseract reads in `image` as one line of text (grey, normalised, scaled)."""
    tesseract = shutil.which("tesseract")
    assert tesseract is not None, "tesseract is not installed (Debian package tesseract-ocr)"
    grey = ImageOps.autocontrast(image.convert("L"))
    if scale != 1.0:
        grey = grey.resize(
            (max(1, round(grey.width * scale)), max(1, round(grey.height * scale))),
            Image.Resampling.LANCZOS,
        )
    # A white border: tesseract reads a line best with some paper around it.
    if grey.getpixel((0, 0)) < 128:  # type: ignore[operator]
        grey = ImageOps.invert(grey)
    grey = ImageOps.expand(grey, border=20, fill=255)
    result = subprocess.run(
        [
            tesseract,
            "stdin",
            "stdout",
            "--psm",
            "7",
            "-c",
            "tessedit_char_whitelist=ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-",
        ],
        input=_png(grey),
        capture_output=True,
        check=True,
    )
    return result.stdout.decode().strip().replace(" ", "")


def reads_as(read: str, label: str) -> bool:
    """Whether OCR's `read` is `label`. DejaVu Sans Bold's O and 0 differ only in width, which
    a reader sees beside other letters and tesseract, judging a glyph alone, does not: they
    count as one. Any other misreading fails."""
    return read.replace("O", "0") == label.replace("O", "0")


def _png(image: Image.Image) -> bytes:
    import io

    buffer = io.BytesIO()
    image.save(buffer, "PNG")
    return buffer.getvalue()
