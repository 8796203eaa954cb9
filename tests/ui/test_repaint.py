"""A call's widgets reach the screen together: told by the app in one go (`RepaintsAtOnce`), not
each through a message of its own. That they still come in one frame with the layout they need
is `test_screen_calls.test_a_call_that_changes_the_number_of_cards_lays_the_screen_out_once`."""

from __future__ import annotations

from rich.text import Text
from textual.app import App, ComposeResult
from textual.widget import Widget

from lobby_display.widgets.repaint import RepaintsAtOnce
from tests.helpers.boards import screen_text


class _Word(RepaintsAtOnce):
    """A word that changes."""

    def __init__(self, word: str) -> None:
        super().__init__()
        self.word = word

    def render(self) -> Text:
        return Text(self.word)


class _Words(App[None]):
    def compose(self) -> ComposeResult:
        yield _Word("before")


async def test_a_widget_on_screen_is_repainted_without_a_message_of_its_own() -> None:
    """Its own message queue is not prompted (a turn of the loop for each of a dozen widgets a
    call changes); the app tells the screen, and the next frame shows the new text."""
    app = _Words()
    async with app.run_test(size=(20, 3)) as pilot:
        await pilot.pause()
        word = app.query_one(_Word)
        assert "before" in screen_text(app)
        word.word = "after"
        word.refresh()
        assert word._message_queue.empty(), "the widget's own queue was prompted"
        await pilot.pause()
        assert "after" in screen_text(app)


def test_containers_keep_their_textual_styles() -> None:
    """The containers of the screen are Textual's, told at once: their CSS type (and so their
    default layout) is still `Horizontal` / `Vertical`."""
    from lobby_display.widgets.repaint import RepaintedHorizontal, RepaintedVertical

    widget: Widget
    for widget, name in ((RepaintedHorizontal(), "Horizontal"), (RepaintedVertical(), "Vertical")):
        assert name in widget._css_type_names
        assert isinstance(widget, RepaintsAtOnce)
