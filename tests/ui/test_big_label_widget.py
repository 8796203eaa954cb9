"""The BigLabel widget on a real (headless) Textual screen: the label as a mosaic or a sixel
image of its box, following its size, label and colours; literal text otherwise."""

from __future__ import annotations

import re
from typing import Any

from textual.app import App, ComposeResult
from textual.geometry import Region

from lobby_display.graphics.mosaic import Mosaic, mosaic
from lobby_display.graphics.terminal import Graphics
from lobby_display.widgets.big_label import BigLabel, for_screenshot
from tests.helpers.pictures import decode_sixel, ocr_line, reads_as, sent_image

AMBER, INK = (255, 179, 0), (16, 20, 24)
SIXEL = Graphics(sixel=True, mosaic=Mosaic.SEXTANTS, cell=(18, 36))
DCS = re.compile(r"\x1bP[0-9;]*q.*?\x1b\\", re.S)


class LabelApp(App[None]):
    """One BigLabel in a box of a given size, as the now-calling area would give it."""

    CSS = """
    BigLabel { width: 40; height: 8; background: #ffb300; color: #101418; }
    BigLabel.fill { width: 1fr; height: 1fr; }
    BigLabel.steady { background: #101418; color: #ffb300; }
    """

    def __init__(self, label: str, graphics: Graphics, classes: str = "") -> None:
        super().__init__()
        self.label = label
        self.graphics = graphics
        self.label_classes = classes

    def compose(self) -> ComposeResult:
        yield BigLabel(self.label, graphics=self.graphics, classes=self.label_classes)


def close(got: object, expected: tuple[int, int, int]) -> bool:
    """Sixel colours travel as percentages: a channel may be off by up to 2 of 255."""
    assert isinstance(got, tuple)
    return all(abs(a - b) <= 2 for a, b in zip(got, expected, strict=True))


def screen_lines(widget: BigLabel) -> list[str]:
    """The text the widget puts on the screen, line by line."""
    return [widget.render_line(y).text for y in range(widget.size.height)]


async def test_the_label_is_drawn_as_a_mosaic_of_its_box() -> None:
    app = LabelApp("K017", Graphics(mosaic=Mosaic.SEXTANTS))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        widget = app.query_one(BigLabel)
        assert widget.mosaic_rows == mosaic("K017", 40, 8, Mosaic.SEXTANTS)
        assert screen_lines(widget) == widget.mosaic_rows
        assert "K017" not in "".join(screen_lines(widget))
        assert sent_image(widget) is None, "no image where the terminal shows none"


async def test_with_sixel_the_image_covers_the_box_and_reads_from_afar() -> None:
    app = LabelApp("K017", SIXEL)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        widget = app.query_one(BigLabel)
        image = sent_image(widget)
        assert image is not None
        # Its paper is transparent: the cells under it are blank, in the card's colour.
        assert screen_lines(widget) == [" " * 40] * 8
        assert decode_sixel(image).getpixel((0, 0)) == (255, 0, 255), "paper left unpainted"
        picture = decode_sixel(image, under=AMBER)
        assert picture.size == (40 * 18, 8 * 36), "exactly the box's cells"
        assert reads_as(ocr_line(picture, scale=0.25), "K017")
        inked = {picture.getpixel((x, 144)) for x in range(0, 720, 3)}
        assert any(close(colour, INK) for colour in inked), "in the widget's colour"


async def test_a_screenshot_shows_the_label_as_its_mosaic() -> None:
    app = LabelApp("K017", SIXEL)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        widget = app.query_one(BigLabel)
        with for_screenshot():
            strips = widget.render_lines(Region(0, 0, 40, 8))
        assert [strip.text for strip in strips] == mosaic("K017", 40, 8, Mosaic.SEXTANTS, (18, 36))
        assert not any(segment.control for strip in strips for segment in strip)
        with for_screenshot():
            svg = app.export_screenshot()
        assert next(row for row in strips if row.text.strip()).text.split()[0] in svg.replace(
            "&#160;", " "
        )
        assert sent_image(widget) is not None, "back to the image after the screenshot"


async def test_the_image_is_placed_on_the_box_and_the_cursor_left_after_it() -> None:
    app = LabelApp("K017", SIXEL)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        widget = app.query_one(BigLabel)
        x, y = widget.content_region.offset
        strips = widget.render_lines(Region(0, 0, 40, 8))
        controls = [segment.text for segment in strips[-1] if segment.control]
        assert controls[0] == f"\x1b[{y + 1};{x + 1}H"
        assert DCS.fullmatch(controls[1])
        assert controls[2] == f"\x1b[{y + 8};{x + 41}H"
        assert all(not segment.control for strip in strips[:-1] for segment in strip)
        assert {strip.cell_length for strip in strips} == {40}


async def test_a_partial_redraw_sends_no_image_and_asks_for_a_whole_one() -> None:
    app = LabelApp("K017", SIXEL)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        widget = app.query_one(BigLabel)
        strips = widget.render_lines(Region(0, 2, 40, 6))
        assert not any(segment.control for strip in strips for segment in strip)
        assert widget._repaint_required or widget._dirty_regions


async def test_a_box_clipped_every_frame_asks_for_a_whole_redraw_once() -> None:
    app = LabelApp("K017", SIXEL)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        widget = app.query_one(BigLabel)
        asked: list[int] = []

        def ask(*args: Any, **kwargs: Any) -> BigLabel:
            asked.append(1)
            return widget

        widget.refresh = ask  # type: ignore[method-assign]
        clipped = Region(0, 0, 40, 5)
        for _ in range(3):
            strips = widget.render_lines(clipped)
        assert asked == [1], "one request, not one a frame"
        # Meanwhile the label is drawn in the cells: never a blank card.
        drawn = mosaic("K017", 40, 8, Mosaic.SEXTANTS, (18, 36))
        assert drawn is not None
        assert [strip.text for strip in strips] == drawn[:5]
        widget.render_lines(Region(0, 0, 40, 8))  # drawn whole: a later clip asks again
        widget.render_lines(clipped)
        assert asked == [1, 1]


async def test_new_colours_a_new_label_and_a_new_size_give_a_new_image() -> None:
    app = LabelApp("A001", SIXEL, classes="fill")
    async with app.run_test(size=(60, 10)) as pilot:
        await pilot.pause()
        widget = app.query_one(BigLabel)
        first = decode_sixel(sent_image(widget) or "")
        widget.add_class("steady")
        await pilot.pause()
        steady = decode_sixel(sent_image(widget) or "", under=INK)
        inked = {steady.getpixel((x, 180)) for x in range(0, 60 * 18, 3)}
        assert any(close(colour, AMBER) for colour in inked), "the steady colours: amber ink"
        assert not any(close(colour, INK) for colour in inked - {INK}), "no dark ink any more"
        widget.label = "Z999"
        await pilot.pause()
        assert reads_as(ocr_line(decode_sixel(sent_image(widget) or ""), scale=0.25), "Z999")
        await pilot.resize_terminal(120, 30)
        await pilot.pause()
        larger = decode_sixel(sent_image(widget) or "")
        assert larger.size == (120 * 18, 30 * 36)
        assert first.size == (60 * 18, 10 * 36)


async def test_a_hostile_label_is_shown_literally_not_as_markup() -> None:
    hostile = "[bold red]X[/] [link='https://x']Y[/link]"
    app = LabelApp(hostile, SIXEL, classes="fill")
    async with app.run_test(size=(160, 45)) as pilot:
        await pilot.pause()
        widget = app.query_one(BigLabel)
        assert widget.mosaic_rows is None, "too long to draw: shown as text"
        assert sent_image(widget) is None
        assert hostile in "\n".join(screen_lines(widget))


async def test_a_label_too_small_to_draw_is_plain_text_never_blank() -> None:
    app = LabelApp("K017", Graphics(mosaic=Mosaic.SEXTANTS), classes="fill")
    async with app.run_test(size=(4, 1)) as pilot:
        await pilot.pause()
        widget = app.query_one(BigLabel)
        assert widget.mosaic_rows is None
        assert "K01" in "".join(screen_lines(widget))
