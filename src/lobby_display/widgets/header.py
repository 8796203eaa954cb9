"""The top bar: the place's name, today's date and the clock, in the locale on screen."""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from rich.console import RenderableType
from rich.table import Table
from rich.text import Text
from textual.reactive import reactive

from lobby_display.widgets.panel import Shown
from lobby_display.widgets.repaint import RepaintsAtOnce


class HeaderBar(RepaintsAtOnce):
    """Place name on the left, date in the middle, clock on the right; one line of text.

    The date and clock are in the place's time zone (the `LocaleText` carries it). Long names
    are cut with an ellipsis before they can push the clock off the screen.
    """

    DEFAULT_CSS = """
    HeaderBar {
        height: 1;
        background: $panel;
        color: $foreground;
        padding: 0 1;
    }
    HeaderBar > .header-bar--place {
        text-style: bold;
    }
    HeaderBar > .header-bar--clock {
        text-style: bold;
        color: $accent;
    }
    """

    COMPONENT_CLASSES: ClassVar[set[str]] = {"header-bar--place", "header-bar--clock"}

    place: reactive[str] = reactive("")
    """The place's name in the locale on screen."""
    date: reactive[str] = reactive("")
    """Today's date, written out."""
    clock: reactive[str] = reactive("")
    """The time of day (hours and minutes)."""

    def show(self, place_names: Mapping[str, str], shown: Shown) -> None:
        """Show the place (by its names) and the date and time of `shown.now`."""
        self.place = shown.name(place_names)
        self.date = shown.text.header_date(shown.now)
        self.clock = shown.text.clock(shown.now)

    def render(self) -> RenderableType:
        """One row: name, date, clock; the name gives way first when space runs out."""
        grid = Table.grid(expand=True, padding=(0, 2))
        grid.add_column(ratio=1, no_wrap=True, overflow="ellipsis")
        grid.add_column(justify="center", no_wrap=True, overflow="ellipsis")
        grid.add_column(justify="right", no_wrap=True)
        grid.add_row(
            Text(
                self.place, style=self.get_component_rich_style("header-bar--place", partial=True)
            ),
            Text(self.date),
            Text(
                self.clock, style=self.get_component_rich_style("header-bar--clock", partial=True)
            ),
        )
        return grid


__all__ = ["HeaderBar"]
