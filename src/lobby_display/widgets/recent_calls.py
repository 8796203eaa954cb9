"""The recent calls: ticket, counter and time of the last tickets called, newest first.

The call on the "now calling" area is listed too, at the top, so someone who looked away can
find their ticket here. Only as many calls as fit are listed; none is ever half drawn.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from rich.align import Align
from rich.console import RenderableType
from rich.table import Table
from rich.text import Text
from textual.reactive import reactive

from lobby_display import messages
from lobby_display.views import CallView, HealthView
from lobby_display.widgets.panel import UNKNOWN, Panel, Shown


@dataclass(frozen=True, slots=True)
class RecentCallRow:
    """One listed call, in the locale on screen."""

    label: str
    counter: str
    time: str


@dataclass(frozen=True, slots=True)
class RecentCallsText:
    """Everything the list says, in the locale on screen."""

    headings: tuple[str, str, str]
    rows: tuple[RecentCallRow, ...]
    empty: str
    """What the list says when there is nothing to list ("No calls yet", "Not available")."""


class RecentCallsPanel(Panel):
    """The last calls, newest first: label, counter, time."""

    DEFAULT_CSS = """
    RecentCallsPanel {
        height: 1fr;
    }
    RecentCallsPanel > .recent-calls--heading {
        color: $text-muted;
        text-style: bold;
    }
    RecentCallsPanel > .recent-calls--latest {
        text-style: bold;
        color: $accent;
    }
    RecentCallsPanel > .recent-calls--message {
        text-style: bold;
    }
    """

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "recent-calls--heading",
        "recent-calls--latest",
        "recent-calls--message",
    }

    content: reactive[RecentCallsText | None] = reactive(None)
    """What the list says; set by `show`."""

    def show(self, calls: Sequence[CallView], health: HealthView, shown: Shown) -> None:
        """List `calls` (newest first), marked with their part's health."""
        text = shown.text
        self.set_heading(text.text(messages.RECENT_CALLS))
        self.show_health(health, shown)
        rows = tuple(
            RecentCallRow(
                label=view.call.label,
                counter=shown.name(view.call.counter_names) or UNKNOWN,
                time=shown.moment(view.call.called_at),
            )
            for view in calls
        )
        withdrawn = self.withdrawn
        self.content = RecentCallsText(
            headings=(
                text.text(messages.TICKET),
                text.text(messages.COUNTER),
                text.text(messages.CALLED_AT),
            ),
            rows=() if withdrawn else rows,
            empty=text.text(messages.NOT_AVAILABLE if withdrawn else messages.NO_CALLS_YET),
        )

    @property
    def visible_rows(self) -> tuple[RecentCallRow, ...]:
        """The calls that fit in the panel (the newest ones)."""
        if self.content is None:
            return ()
        room = max(self.content_size.height - 1, 0)
        return self.content.rows[:room]

    def render(self) -> RenderableType:
        """A table with a heading row, or the message when there is nothing to list."""
        content = self.content
        if content is None:
            return Text("")
        if not content.rows:
            style = self.get_component_rich_style("recent-calls--message", partial=True)
            return Align.center(Text(content.empty, style=style), vertical="middle")
        heading = self.get_component_rich_style("recent-calls--heading", partial=True)
        latest = self.get_component_rich_style("recent-calls--latest", partial=True)
        table = Table(
            box=None,
            expand=True,
            show_edge=False,
            pad_edge=False,
            padding=(0, 1),
            header_style=heading,
        )
        table.add_column(Text(content.headings[0]), no_wrap=True)
        table.add_column(Text(content.headings[1]), ratio=1, no_wrap=True, overflow="ellipsis")
        table.add_column(Text(content.headings[2]), justify="right", no_wrap=True)
        for index, row in enumerate(self.visible_rows):
            table.add_row(
                Text(row.label),
                Text(row.counter),
                Text(row.time),
                style=latest if index == 0 else None,
            )
        return table


__all__ = ["RecentCallRow", "RecentCallsPanel", "RecentCallsText"]
