"""Ticket labels drawn in block letters: every glyph, sizes that grow with space, safe fallbacks."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lobby_display.widgets.big_label import CHARACTERS, render_big

INK = frozenset("█▀▄")
GLYPHS = sorted(CHARACTERS - {" "})


def assert_well_formed(rows: list[str], max_width: int, max_height: int) -> None:
    assert 1 <= len(rows) <= max_height
    widths = {len(row) for row in rows}
    assert len(widths) == 1, "every row has the same width"
    assert widths.pop() <= max_width
    assert set("".join(rows)) <= INK | {" "}


@pytest.mark.parametrize("height", range(3, 15))
def test_every_character_renders_at_every_size(height: int) -> None:
    for char in GLYPHS:
        rows = render_big(char, 200, height)
        assert rows is not None, f"{char!r} at {height} rows"
        assert_well_formed(rows, 200, height)
        assert INK & set("".join(rows)), f"{char!r} at {height} rows has no ink"


@pytest.mark.parametrize("height", [3, 4])
def test_no_two_characters_look_the_same(height: int) -> None:
    drawings = {char: tuple(render_big(char, 20, height) or ()) for char in GLYPHS}
    assert len(set(drawings.values())) == len(GLYPHS)
    # The letter O and the digit 0 are told apart (labels mix them: "KO17", "K017").
    assert drawings["O"] != drawings["0"]


def test_space_and_hyphen_draw_inside_a_label() -> None:
    joined = render_big("A-B C", 200, 3)
    apart = render_big("AB", 200, 3)
    assert joined is not None
    assert apart is not None
    assert len(joined[0]) > len(apart[0])
    assert "▀" in "".join(joined) or "▄" in "".join(joined)


def test_size_grows_with_the_space_given() -> None:
    heights = []
    for max_height in range(3, 31):
        rows = render_big("K017", 400, max_height)
        assert rows is not None
        assert_well_formed(rows, 400, max_height)
        heights.append(len(rows))
    assert heights == sorted(heights), "more room never gives a smaller label"
    assert heights[0] == 3
    assert heights[-1] >= 28


def test_a_160_by_45_screen_gives_a_label_at_least_7_rows_tall() -> None:
    rows = render_big("K017", 100, 12)
    assert rows is not None
    assert_well_formed(rows, 100, 12)
    assert len(rows) >= 7


def test_an_80_by_24_screen_gives_a_label_at_least_3_rows_tall() -> None:
    rows = render_big("K017", 50, 5)
    assert rows is not None
    assert_well_formed(rows, 50, 5)
    assert len(rows) >= 3


@pytest.mark.parametrize("label", ["BX-12345", "AB-1234-CD", "X" * 24])
@pytest.mark.parametrize(("width", "height"), [(100, 12), (50, 5), (160, 45), (40, 3)])
def test_long_labels_stay_within_the_width(label: str, width: int, height: int) -> None:
    rows = render_big(label, width, height)
    if rows is None:
        # Only when even the smallest font (5 cells a glyph and 1 between) is too wide.
        assert len(label) * 6 - 1 > width
    else:
        assert_well_formed(rows, width, height)


def test_long_labels_are_condensed_rather_than_shrunk_too_far() -> None:
    rows = render_big("BX-12345", 100, 12)
    assert rows is not None
    assert len(rows) >= 7


def test_lowercase_is_drawn_as_capitals() -> None:
    assert render_big("k017", 50, 5) == render_big("K017", 50, 5)
    assert render_big("bx-12", 100, 12) == render_big("BX-12", 100, 12)


@pytest.mark.parametrize(
    "label",
    ["札017", "กขค", "Ä12", "K01é", "A_1", "[bold]X", "K017\x1b", "١٢٣", "", "   "],
)
def test_labels_outside_the_fonts_are_left_to_plain_text(label: str) -> None:
    assert render_big(label, 100, 12) is None


@pytest.mark.parametrize(("width", "height"), [(0, 12), (100, 0), (100, 2), (10, 5), (-1, -1)])
def test_no_drawing_when_nothing_fits(width: int, height: int) -> None:
    assert render_big("K017", width, height) is None


@given(
    label=st.text(alphabet="ABCXYZ0189- kq", min_size=1, max_size=24),
    width=st.integers(min_value=-5, max_value=300),
    height=st.integers(min_value=-5, max_value=60),
)
def test_any_drawing_fits_the_box_it_was_given(label: str, width: int, height: int) -> None:
    rows = render_big(label, width, height)
    if rows is not None:
        assert_well_formed(rows, width, height)
        assert len(rows) >= 3
