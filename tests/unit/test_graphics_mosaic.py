"""Labels as sub-cell mosaics where no image is shown: exact cells, right characters, legible."""

from __future__ import annotations

import pytest
from PIL import Image, ImageFilter

from lobby_display.graphics.mosaic import CHARACTERS, Mosaic, mosaic
from lobby_display.graphics.raster import rasterise
from tests.helpers.pictures import mosaic_bitmap, ocr_line, reads_as


def test_every_pattern_of_dots_has_its_own_character() -> None:
    for kind, characters in CHARACTERS.items():
        across, down = kind.dots
        assert len(characters) == 2 ** (across * down)
        assert len(set(characters)) == len(characters), kind
    sextants = CHARACTERS[Mosaic.SEXTANTS]
    assert all(0x1FB00 <= ord(char) <= 0x1FB3B or char in " ▌▐█" for char in sextants), (
        "sextants from the Symbols for Legacy Computing block, or the four that exist already"
    )
    assert sextants[1] == "\U0001fb00" and sextants[62] == "\U0001fb3b"


@pytest.mark.parametrize("kind", list(Mosaic))
def test_the_mosaic_fills_exactly_its_cells(kind: Mosaic) -> None:
    rows = mosaic("A031", 30, 7, kind)
    assert rows is not None
    assert len(rows) == 7
    assert {len(row) for row in rows} == {30}
    assert set("".join(rows)) <= set(CHARACTERS[kind])
    assert set("".join(rows)) - {" "}, "ink"


@pytest.mark.parametrize("label", ["7", "A031", "BX-12", "K01234", "E029"])
def test_a_seven_row_sextant_mosaic_reads_from_afar(label: str) -> None:
    assert reads_as(read_from_afar(label, Mosaic.SEXTANTS, 34, 7), label)


@pytest.mark.parametrize("label", ["7", "A031", "BX-12", "K01234"])
def test_quadrants_need_a_row_more_to_read_as_well(label: str) -> None:
    # Measured: at 7 rows tesseract takes the quadrants' "A031" for "AOQS31"; at 8 it reads it.
    assert reads_as(read_from_afar(label, Mosaic.QUADRANTS, 40, 8), label)


def read_from_afar(label: str, kind: Mosaic, columns: int, rows: int) -> str:
    """What OCR reads of the mosaic seen from afar: the dots blur together, the picture is
    scaled to a quarter (four times the distance)."""
    drawn = mosaic(label, columns, rows, kind)
    assert drawn is not None
    picture = mosaic_bitmap(drawn, kind).filter(ImageFilter.GaussianBlur(4))
    return ocr_line(picture, scale=0.25)


def test_what_cannot_be_drawn_is_left_to_plain_text() -> None:
    assert mosaic("", 30, 7, Mosaic.SEXTANTS) is None
    assert mosaic("A" * 13, 30, 7, Mosaic.SEXTANTS) is None
    assert mosaic("A031", 30, 0, Mosaic.SEXTANTS) is None


@pytest.mark.parametrize("kind", list(Mosaic))
@pytest.mark.parametrize(
    ("label", "columns", "rows"), [("A031", 30, 7), ("K01234", 23, 5), ("7", 9, 4)]
)
def test_each_cell_shows_the_dots_of_its_part_of_the_picture(
    kind: Mosaic, label: str, columns: int, rows: int
) -> None:
    # The definition, cell by cell: the label rasterised in the cells' pixels, each dot the
    # mean of its pixels, ink at half coverage; bit i of a cell's pattern is its dot i.
    across, down = kind.dots
    drawing = rasterise(label, columns * 10, rows * 20)
    assert drawing is not None
    dots = drawing.resize((columns * across, rows * down), Image.Resampling.BOX).tobytes()
    width = columns * across
    expected = [
        "".join(
            CHARACTERS[kind][
                sum(
                    (dots[(row * down + dy) * width + column * across + dx] >= 128)
                    << (dy * across + dx)
                    for dy in range(down)
                    for dx in range(across)
                )
            ]
            for column in range(columns)
        )
        for row in range(rows)
    ]
    assert mosaic(label, columns, rows, kind) == expected


def test_a_mosaic_changed_by_its_caller_is_not_the_next_one_drawn() -> None:
    first = mosaic("A031", 30, 7, Mosaic.SEXTANTS)
    assert first is not None
    drawn = list(first)
    first[0] = "changed"
    assert mosaic("A031", 30, 7, Mosaic.SEXTANTS) == drawn
