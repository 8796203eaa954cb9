"""Sixel pictures of labels: every pixel painted in the theme's exact colours, legible from afar."""

from __future__ import annotations

import pytest

from lobby_display.graphics import sixel
from lobby_display.graphics.raster import PlacedInk, place_ink, rasterise
from tests.helpers.pictures import decode_sixel, ocr_line, reads_as

AMBER, DARK = (255, 179, 0), (16, 20, 24)


def test_the_picture_is_the_drawing_in_the_palette_of_the_two_colours() -> None:
    mask = rasterise("K017", 120, 47)  # 47 rows: the last band is not full
    assert mask is not None
    picture = decode_sixel(sixel.encode(mask, AMBER, DARK).decode())
    assert picture.size == (120, 47)
    colours = sixel.palette(AMBER, DARK)
    # Sixel colours travel as percentages: within 2/255 of the palette.
    for y in range(47):
        for x in range(120):
            coverage = mask.getpixel((x, y))
            assert isinstance(coverage, int)
            step = (coverage * (sixel.LEVELS - 1) + 127) // 255
            got = picture.getpixel((x, y))
            assert all(abs(a - b) <= 2 for a, b in zip(got, colours[step], strict=True)), (x, y)


def test_the_palette_runs_from_the_background_to_the_ink() -> None:
    colours = sixel.palette(AMBER, DARK)
    assert colours[0] == AMBER
    assert colours[-1] == DARK
    assert len(set(colours)) == sixel.LEVELS


@pytest.mark.parametrize("label", ["7", "A031", "BX-12", "K01234"])
@pytest.mark.parametrize(("background", "ink"), [(AMBER, DARK), (DARK, AMBER)])
def test_the_label_reads_from_four_times_farther(
    label: str, background: tuple[int, int, int], ink: tuple[int, int, int]
) -> None:
    mask = rasterise(label, 34 * 18, 7 * 36)
    assert mask is not None
    picture = decode_sixel(sixel.encode(mask, background, ink).decode())
    assert reads_as(ocr_line(picture, scale=0.25), label)


@pytest.mark.parametrize(
    ("label", "box"),
    [("K017", (120, 47)), ("AB-048", (378, 216)), ("7", (90, 31)), ("ณ12", (200, 77))],
)
@pytest.mark.parametrize("paint_background", [True, False])
def test_a_call_s_ink_alone_makes_the_picture_of_its_whole_box(
    label: str, box: tuple[int, int], paint_background: bool
) -> None:
    """The screen encodes a call's ink where it lies, not a box of paper around it: the same
    sequence to the byte, wherever the ink starts within a band of six rows."""
    placed = place_ink(label, *box)
    mask = rasterise(label, *box)
    assert placed is not None and mask is not None
    assert placed.mask().tobytes() == mask.tobytes()
    for down in range(6):  # the ink's top at every row of a band
        moved = PlacedInk(placed.ink, placed.left, placed.top + down, box[0], box[1] + 6)
        expected = sixel.encode(moved.mask(), AMBER, DARK, paint_background)
        got = sixel.encode_ink(
            moved.ink,
            moved.left,
            moved.top,
            (moved.width, moved.height),
            AMBER,
            DARK,
            paint_background,
        )
        assert got == expected, down
