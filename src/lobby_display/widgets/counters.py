"""The counters (tallies such as "Visitors today: 128"): name and value, as many columns as the
height asks for."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from rich.cells import cell_len
from rich.table import Table
from rich.text import Text
from textual.geometry import Size
from textual.strip import Strip

from lobby_display import strings
from lobby_display.views import CounterView, HealthView
from lobby_display.widgets.panel import UNKNOWN, LineKey, LinePanel, Shown


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


@dataclass(frozen=True, slots=True)
class _Columns:
    """How many name-value pairs share a line, and how wide each value column is."""

    pairs: int
    value_widths: tuple[int, ...]


#: One line of the panel: the counter of each name-value column (None where a column has no
#: counter on that line).
_Line = tuple[CounterRow | None, ...]


class CountersPanel(LinePanel[CountersText, _Line, _Columns]):
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
    MESSAGE_COMPONENT: ClassVar[str] = "counters--message"

    def show(self, counters: Sequence[CounterView], health: HealthView, shown: Shown) -> None:
        """Show `counters`, marked with their part's health."""
        self.set_heading(shown.text.text(strings.COUNTERS))
        self.show_health(health, shown)
        width = self.content_size.width
        lines_before = self.get_content_height(Size(), Size(), width)
        self.show_content(self._worded(counters, shown))
        if self.get_content_height(Size(), Size(), width) != lines_before:
            self.refresh(layout=True)  # the panel grows or shrinks

    def prepare(self, counters: Sequence[CounterView], shown: Shown) -> None:
        """Draw the lines of `counters` in `shown`'s locale ahead of its turn, which then shows
        them without drawing them (each line is a table of Rich's, measured: a rotation's
        counters took 3 to 5 ms of its queue board's frame on this project's benchmark
        machine)."""
        self.draw_content_ahead(self._worded(counters, shown))

    def _worded(self, counters: Sequence[CounterView], shown: Shown) -> CountersText:
        """What the panel says of `counters` in `shown`'s locale."""
        text = shown.text
        rows = tuple(
            CounterRow(
                name=shown.name(counter.names) or counter.counter_id,
                value=text.number(counter.value) if counter.value is not None else UNKNOWN,
            )
            for counter in counters
        )
        return CountersText(
            rows=() if self.withdrawn else rows, empty=self.empty_text(shown, strings.NO_COUNTERS)
        )

    def columns_for(self, width: int, content: CountersText | None = None) -> int:
        """How many name-value columns share a line at `width` cells (at most three), for
        `content` (None: the content shown)."""
        content = self.content if content is None else content
        if content is None or not content.rows:
            return 1
        widest = max(cell_len(row.name) + cell_len(row.value) for row in content.rows) + 4
        return max(1, min(3, width // max(widest, 1), len(content.rows)))

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        """One line per row of counters (the rows are shared among the columns)."""
        content = self.content
        if content is None or not content.rows:
            return 1
        return math.ceil(len(content.rows) / self.columns_for(width))

    def lines_of(self, content: CountersText) -> tuple[list[LineKey[_Line]], _Columns] | None:
        """Names and values in columns (down, then across), or the message when there is none;
        a new value redraws its line only."""
        if not content.rows:
            return None
        pairs = self.columns_for(self.content_size.width, content)
        count = math.ceil(len(content.rows) / pairs)
        columns = [content.rows[pair * count : (pair + 1) * count] for pair in range(pairs)]
        layout = _Columns(
            pairs, tuple(max(cell_len(row.value) for row in column) for column in columns)
        )
        lines = [
            (tuple(column[line] if line < len(column) else None for column in columns), 0)
            for line in range(count)
        ]
        return lines, layout

    def draw_row(self, row: _Line, layout: _Columns) -> list[Strip]:
        """One line of name-value pairs."""
        value_style = self.get_component_rich_style("counters--value", partial=True)
        table = Table.grid(expand=True, padding=(0, 2))
        for width in layout.value_widths:
            table.add_column(ratio=1, no_wrap=True, overflow="ellipsis")
            table.add_column(width=width, justify="right", no_wrap=True)
        cells: list[Text] = []
        for pair in row:
            if pair is None:
                cells += [Text(""), Text("")]
            else:
                cells += [Text(pair.name), Text(pair.value, style=value_style)]
        table.add_row(*cells)
        return self.render_rows(table)


__all__ = ["CounterRow", "CountersPanel", "CountersText"]
