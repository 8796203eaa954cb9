"""The BigLabel widget on a real (headless) Textual screen: big glyphs, resizing, literal text."""

from __future__ import annotations

from textual.app import App, ComposeResult

from lobby_display.widgets.big_label import BigLabel, render_big


class LabelApp(App[None]):
    """One BigLabel in a box of a given size, as the now-calling area would give it."""

    CSS = """
    BigLabel { width: 100; height: 12; }
    BigLabel.small { width: 50; height: 5; }
    BigLabel.fill { width: 1fr; height: 1fr; }
    """

    def __init__(self, label: str, classes: str = "") -> None:
        super().__init__()
        self.label = label
        self.label_classes = classes

    def compose(self) -> ComposeResult:
        yield BigLabel(self.label, classes=self.label_classes)


def screen_lines(widget: BigLabel) -> list[str]:
    """The text the widget puts on the screen, line by line."""
    return [widget.render_line(y).text for y in range(widget.size.height)]


async def test_a_ticket_label_is_drawn_in_big_glyphs() -> None:
    app = LabelApp("K017")
    async with app.run_test(size=(160, 45)) as pilot:
        await pilot.pause()
        widget = app.query_one(BigLabel)
        expected = render_big("K017", 100, 12)
        assert expected is not None
        assert len(expected) >= 7
        lines = screen_lines(widget)
        # Centred in its box: each glyph row appears, in order, on consecutive lines.
        first = next(i for i, line in enumerate(lines) if expected[0] in line)
        for offset, row in enumerate(expected):
            assert row in lines[first + offset]
        assert "K017" not in "".join(lines)


async def test_a_small_screen_gets_a_smaller_drawing() -> None:
    app = LabelApp("K017", classes="small")
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        widget = app.query_one(BigLabel)
        rows = widget.big_rows
        assert rows is not None
        assert 3 <= len(rows) <= 5
        assert rows == render_big("K017", 50, 5)
        assert rows[0] in "\n".join(screen_lines(widget))


async def test_the_drawing_follows_the_terminal_size() -> None:
    app = LabelApp("BX-12", classes="fill")
    async with app.run_test(size=(60, 10)) as pilot:
        await pilot.pause()
        widget = app.query_one(BigLabel)
        small = widget.big_rows
        await pilot.resize_terminal(160, 45)
        await pilot.pause()
        large = widget.big_rows
        assert small is not None
        assert large is not None
        assert len(large) > len(small)
        assert large[0] in "\n".join(screen_lines(widget))


async def test_a_new_label_is_drawn_when_set() -> None:
    app = LabelApp("A001")
    async with app.run_test(size=(160, 45)) as pilot:
        await pilot.pause()
        widget = app.query_one(BigLabel)
        widget.label = "Z999"
        await pilot.pause()
        expected = render_big("Z999", 100, 12)
        assert expected is not None
        assert expected[0] in "\n".join(screen_lines(widget))


async def test_a_hostile_label_is_shown_literally_not_as_markup() -> None:
    hostile = "[bold red]X[/] [link='https://x']Y[/link]"
    app = LabelApp(hostile)
    async with app.run_test(size=(160, 45)) as pilot:
        await pilot.pause()
        widget = app.query_one(BigLabel)
        assert widget.big_rows is None
        assert hostile in "\n".join(screen_lines(widget))


async def test_a_label_in_another_script_falls_back_to_text() -> None:
    app = LabelApp("札017")
    async with app.run_test(size=(160, 45)) as pilot:
        await pilot.pause()
        widget = app.query_one(BigLabel)
        assert widget.big_rows is None
        assert "札017" in "\n".join(screen_lines(widget))
