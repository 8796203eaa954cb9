"""The counters (tallies such as "Visitors today: 128"): name and value, as many columns as the
height asks for."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from rich.align import Align
from rich.cells import cell_len
from rich.console import RenderableType
from rich.table import Table
from rich.text import Text
from textual.geometry import Size
from textual.reactive import reactive

from lobby_display import messages
from lobby_display.views import CounterView, HealthView
from lobby_display.widgets.panel import UNKNOWN, Panel, Shown


@dataclass(frozen=True, slots=True)
class CounterRow:
    """One counter, in the locale on screen."""

    name: str
    value: str


@dataclass(frozen=True, slots=True)
class CountersText:
    """Everything the panel says, in the locale on screen."""

    rows: tuple[CounterRow, ...]
    empty: str
    """What the panel says when there is nothing to show ("No counters", "Not available")."""


class CountersPanel(Panel):
    """The counters: each name with its value (a dash while unknown)."""

    DEFAULT_CSS = """
    CountersPanel {
        height: auto;
        max-height: 8;
    }
    CountersPanel > .counters--value {
        color: $accent;
        text-style: bold;
    }
    CountersPanel > .counters--message {
        text-style: bold;
    }
    """

    COMPONENT_CLASSES: ClassVar[set[str]] = {"counters--value", "counters--message"}

    content: reactive[CountersText | None] = reactive(None, layout=True)
    """What the panel says; set by `show`."""

    def show(self, counters: Sequence[CounterView], health: HealthView, shown: Shown) -> None:
        """Show `counters`, marked with their part's health."""
        text = shown.text
        self.set_heading(text.text(messages.COUNTERS))
        self.show_health(health, shown)
        withdrawn = self.withdrawn
        rows = tuple(
            CounterRow(
                name=shown.name(counter.names) or counter.counter_id,
                value=text.number(counter.value) if counter.value is not None else UNKNOWN,
            )
            for counter in counters
        )
        self.content = CountersText(
            rows=() if withdrawn else rows,
            empty=text.text(messages.NOT_AVAILABLE if withdrawn else messages.NO_COUNTERS),
        )

    def columns_for(self, width: int) -> int:
        """How many name-value columns share a line at `width` cells (at most three)."""
        if self.content is None or not self.content.rows:
            return 1
        widest = max(cell_len(row.name) + cell_len(row.value) for row in self.content.rows) + 4
        return max(1, min(3, width // max(widest, 1), len(self.content.rows)))

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        """One line per row of counters (the rows are shared among the columns)."""
        content = self.content
        if content is None or not content.rows:
            return 1
        return math.ceil(len(content.rows) / self.columns_for(width))

    def render(self) -> RenderableType:
        """Names and values in columns, or the message when there is nothing to show."""
        content = self.content
        if content is None:
            return Text("")
        if not content.rows:
            style = self.get_component_rich_style("counters--message", partial=True)
            return Align.center(Text(content.empty, style=style), vertical="middle")
        value_style = self.get_component_rich_style("counters--value", partial=True)
        columns = self.columns_for(self.content_size.width)
        lines = math.ceil(len(content.rows) / columns)
        table = Table.grid(expand=True, padding=(0, 2))
        for _ in range(columns):
            table.add_column(ratio=1, no_wrap=True, overflow="ellipsis")
            table.add_column(justify="right", no_wrap=True)
        for line in range(lines):
            cells: list[Text] = []
            for column in range(columns):
                index = column * lines + line
                if index < len(content.rows):
                    row = content.rows[index]
                    cells += [Text(row.name), Text(row.value, style=value_style)]
                else:
                    cells += [Text(""), Text("")]
            table.add_row(*cells)
        return table


__all__ = ["CounterRow", "CountersPanel", "CountersText"]
