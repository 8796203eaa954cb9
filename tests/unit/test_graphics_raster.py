"""Ticket labels rasterised from a real typeface: as large as the box allows, centred, any
script."""

from __future__ import annotations

import pytest

from lobby_display.graphics.raster import (
    MAX_LABEL_LENGTH,
    fitted_size,
    font_for,
    place_ink,
    rasterise,
    script_of,
)


def ink_box(label: str, width: int, height: int) -> tuple[int, int, int, int]:
    drawing = rasterise(label, width, height)
    assert drawing is not None
    box = drawing.point(lambda value: 255 if value >= 128 else 0).getbbox()
    assert box is not None, f"{label!r} has no ink"
    return box


def test_a_short_label_fills_the_height_of_a_wide_box() -> None:
    left, top, right, bottom = ink_box("A031", 1800, 360)
    assert bottom - top >= 0.8 * 360
    # Centred on its ink, left and right as well as top and bottom.
    assert abs((left + right) / 2 - 900) <= 2
    assert abs((top + bottom) / 2 - 180) <= 2


def test_a_long_label_fills_the_width_of_its_box() -> None:
    left, _top, right, bottom = ink_box("BX-123456789", 900, 360)
    assert right - left >= 0.85 * 900
    assert bottom - _top < 360


def test_a_single_digit_sits_in_the_middle() -> None:
    left, top, right, bottom = ink_box("7", 400, 200)
    assert abs((left + right) / 2 - 200) <= 2
    assert abs((top + bottom) / 2 - 100) <= 2


@pytest.mark.parametrize(
    ("label", "script"),
    [
        ("A031", "latin"),
        ("BX-12.3", "latin"),
        ("กำ12", "thai"),
        ("中文7", "cjk"),
        ("한1", "cjk"),
        ("カナ3", "cjk"),
    ],
)
def test_every_script_is_drawn_in_its_font(label: str, script: str) -> None:
    assert script_of(label) == script
    assert font_for(script) is not None, f"the font for {script} is installed"
    left, top, right, bottom = ink_box(label, 600, 200)
    # As large as the box allows: its width or its height is filled.
    assert right - left >= 0.85 * 600 or bottom - top >= 0.8 * 200


def test_each_cjk_locale_has_its_own_face() -> None:
    faces = {locale: font_for("cjk", locale) for locale in ("ja_JP", "ko_KR", "zh_CN", "zh_TW")}
    assert len({(face.path, face.index) for face in faces.values() if face}) == 4


def test_what_cannot_be_drawn_as_a_picture_is_refused() -> None:
    assert rasterise("", 400, 200) is None
    assert rasterise("   ", 400, 200) is None
    assert rasterise("A" * (MAX_LABEL_LENGTH + 1), 400, 200) is None
    assert rasterise("A\x1b[2J", 400, 200) is None
    assert rasterise("A031", 400, 6) is None, "a box under 8 pixels high"
    assert rasterise("A" * MAX_LABEL_LENGTH, 400, 200) is not None


def test_the_fitted_size_grows_with_the_box_and_matches_the_drawing() -> None:
    sizes = [fitted_size("A031", 40 * 18, rows * 36) for rows in (1, 3, 7)]
    assert 0 < sizes[0] < sizes[1] < sizes[2]
    assert fitted_size("A031", 10, 4) == 0


def test_the_same_label_and_box_are_drawn_once() -> None:
    assert place_ink("K017", 300, 120) is place_ink("K017", 300, 120)
