"""Background colours kept between frames are the ones Textual works out: after a highlight, a
stale part, an inline style or another theme, every widget is drawn on the right background."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.color import Color
from textual.containers import Container
from textual.dom import DOMNode
from textual.widgets import Static

from lobby_display.widgets.background import keep_background_colors


def worked_out(node: DOMNode) -> tuple[Color, Color]:
    """The colours as Textual 8.2.8 works them out (`DOMNode.background_colors`), afresh."""
    base_background = background = Color(0, 0, 0, 0)
    opacity = 1.0
    for ancestor in reversed(node.ancestors_with_self):
        styles = ancestor.styles
        base_background = background
        opacity *= styles.opacity
        background += styles.background.tint(styles.background_tint).multiply_alpha(opacity)
    return base_background, background


class Nested(App[None]):
    CSS = """
    #outer { background: $panel; }
    #outer.-highlight { background: $warning; }
    #inner { background: $primary 30%; }
    Static { background: $accent 20%; }
    """

    def compose(self) -> ComposeResult:
        with Container(id="outer"), Container(id="inner"):
            yield Static("A031", id="line")


async def test_a_widgets_background_follows_every_change_of_its_ancestors_styles() -> None:
    keep_background_colors()
    app = Nested()
    async with app.run_test(size=(40, 10)) as pilot:
        line = app.query_one("#line")
        seen = [line.background_colors]
        assert seen[-1] == worked_out(line)

        app.query_one("#outer").add_class("-highlight")  # a card's highlight
        await pilot.pause()
        seen.append(line.background_colors)
        assert seen[-1] == worked_out(line)

        app.query_one("#inner").styles.opacity = 0.5  # an inline style of a parent
        await pilot.pause()
        seen.append(line.background_colors)
        assert seen[-1] == worked_out(line)

        app.theme = "textual-light" if app.theme != "textual-light" else "nord"
        await pilot.pause()
        seen.append(line.background_colors)
        assert seen[-1] == worked_out(line)

        app.query_one("#outer").remove_class("-highlight")
        await pilot.pause()
        seen.append(line.background_colors)
        assert seen[-1] == worked_out(line)
        assert len(set(seen)) == len(seen), "each change moved the colours"


async def test_colours_are_kept_while_nothing_they_come_from_changes() -> None:
    keep_background_colors()
    keep_background_colors()  # twice is once
    app = Nested()
    async with app.run_test(size=(40, 10)) as pilot:
        line = app.query_one("#line")
        first = line.background_colors
        await pilot.pause()
        assert line.background_colors is first, "kept, not worked out again"
        app.query_one("#inner").styles.background = "red"
        await pilot.pause()
        assert line.background_colors is not first
        assert line.background_colors == worked_out(line)
