"""The calm screen shown at start, before any data has arrived: "Connecting to the service…"."""

from __future__ import annotations

from textual.content import Content
from textual.reactive import reactive
from textual.widgets import Static

from lobby_display import strings
from lobby_display.widgets.panel import Shown


class ConnectingNotice(Static):
    """A centred sentence in the middle of the screen while nothing is known yet.

    What goes wrong, if anything (reconnecting, credentials refused), is said by the status
    line below it; this stays calm.
    """

    DEFAULT_CSS = """
    ConnectingNotice {
        width: 1fr;
        height: 1fr;
        content-align: center middle;
        text-align: center;
        text-style: bold;
        color: $primary;
    }
    """

    words: reactive[str] = reactive("")
    """The sentence shown."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__("", markup=False, id=id)

    def show(self, shown: Shown) -> None:
        """Say "Connecting to the service…" in the locale on screen."""
        self.words = shown.text.text(strings.CONNECTING)

    def watch_words(self, words: str) -> None:
        self.update(Content(words))


__all__ = ["ConnectingNotice"]
