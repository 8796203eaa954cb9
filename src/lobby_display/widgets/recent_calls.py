"""The recent calls: ticket, counter and time of the last tickets called, newest first.

The call on "now calling" is listed too; only whole rows are drawn, and the panel is never
taller than its `capacity` needs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar, Final

from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from rich.table import Table
from rich.text import Text
from textual.geometry import Size
from textual.strip import Strip

from lobby_display import strings
from lobby_display.views import CallView, HealthView
from lobby_display.widgets.drawn import DrawnCache
from lobby_display.widgets.panel import UNKNOWN, LineKey, LinePanel, Shown
from lobby_display.widgets.table_row import CellKey, table_row_lines


@dataclass(frozen=True, slots=True)
class RecentCallRow:
    """One listed call, in the locale on screen."""

    label: str
    counter: str
    time: str

    @property
    def texts(self) -> tuple[str, str, str]:
        """Label, counter and time."""
        return self.label, self.counter, self.time


@dataclass(frozen=True, slots=True)
class RecentCallsText:
    """Everything the list says, in the locale on screen."""

    headings: tuple[str, str, str]
    rows: tuple[RecentCallRow, ...]
    empty: str
    """What the list says when there is nothing to list ("No calls yet", "Not available")."""


#: Lines of the panel's frame (its top and bottom borders).
_FRAME_LINES: Final = 2


@dataclass(frozen=True, slots=True)
class _Columns:
    """The widths of the label and time columns (the counter takes the rest), and headings."""

    label: int
    time: int
    headings: tuple[str, str, str]


@dataclass(frozen=True, slots=True)
class _Line:
    """One line of the list: a call (the newest in the latest style), or the headings (None)."""

    call: RecentCallRow | None
    latest: bool = False


#: The line of the headings.
_HEADINGS: Final = _Line(None)

#: The narrowest label column: most places' labels ("A017", "BX-12") fit it, so the column
#: stays put as they come and go.
LABEL_WIDTH: Final = 6

#: Calls listed when nothing says how many (the default of `display.recent_calls`).
DEFAULT_CAPACITY: Final = 6
#: Cells kept drawn: labels, counters and times of the calls listed, in each locale.
MAX_DRAWN_CELLS: Final = 256
#: Cells of padding between the three columns (one on each side of the counter's).
_PADDING: Final = 4


class RecentCallsPanel(LinePanel[RecentCallsText, _Line, _Columns]):
    """The last calls, newest first: label, counter, time.

    `capacity` is how many calls the list holds: the panel is at most as tall as they need (a
    heading line and a line per call), whatever its height in the layout; none hides it.
    """

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
    MESSAGE_COMPONENT: ClassVar[str] = "recent-calls--message"

    def __init__(
        self,
        *,
        capacity: int = DEFAULT_CAPACITY,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(id=id, classes=classes)
        self._capacity = -1
        self.capacity = capacity
        # Each cell drawn, for the lines that share it: a call's label and time stay the same
        # in each locale, and come back at each rotation.
        self._drawn_cells: DrawnCache[CellKey, list[list[Segment]]] = DrawnCache(MAX_DRAWN_CELLS)

    @property
    def capacity(self) -> int:
        """How many calls the list holds (`display.recent_calls`)."""
        return self._capacity

    @capacity.setter
    def capacity(self, count: int) -> None:
        count = max(count, 0)
        if count == self._capacity:
            return
        self._capacity = count
        self.display = count > 0
        # The heading line, a line per call, and the frame.
        self.styles.max_height = count + 1 + _FRAME_LINES
        self.refresh(layout=True)

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        """With `height: auto`: the heading and `capacity` calls, within a third of the screen."""
        return max(min(self._capacity + 1, viewport.height // 3 - _FRAME_LINES), 2)

    def show(self, calls: Sequence[CallView], health: HealthView, shown: Shown) -> None:
        """List `calls` (newest first), marked with their part's health."""
        self.set_heading(shown.text.text(strings.RECENT_CALLS))
        self.show_health(health, shown)
        self.show_content(self._worded(calls, shown))

    def prepare(self, calls: Sequence[CallView], shown: Shown) -> None:
        """Draw the lines of `calls` in `shown`'s locale ahead of its turn: the rotation to it
        then draws only the calls made since. Drawing every line in the new locale was the
        largest part of a rotation's first frame (issue 16's host: 1.7 of 10.7 ms)."""
        self.draw_content_ahead(self._worded(calls, shown))

    def _worded(self, calls: Sequence[CallView], shown: Shown) -> RecentCallsText:
        """What the list says of `calls` in `shown`'s locale."""
        text = shown.text
        rows = tuple(
            RecentCallRow(
                label=view.call.label,
                counter=shown.name(view.call.counter_names) or UNKNOWN,
                time=shown.moment(view.call.called_at),
            )
            for view in calls
        )
        return RecentCallsText(
            headings=(
                text.text(strings.TICKET),
                text.text(strings.COUNTER),
                text.text(strings.CALLED_AT),
            ),
            rows=() if self.withdrawn else rows,
            empty=self.empty_text(shown, strings.NO_CALLS_YET),
        )

    @property
    def visible_rows(self) -> tuple[RecentCallRow, ...]:
        """The calls that fit in the panel (the newest ones)."""
        return () if self.content is None else self._fitting(self.content)

    def _fitting(self, content: RecentCallsText) -> tuple[RecentCallRow, ...]:
        """The calls of `content` that fit in the panel (the newest ones)."""
        room = max(self.content_size.height - 1, 0)
        return content.rows[:room]

    def lines_of(self, content: RecentCallsText) -> tuple[list[LineKey[_Line]], _Columns] | None:
        """A heading line and a line per call that fits, or the message when there is none.

        The label and time columns are as wide as their widest text on screen, the label's at
        least `LABEL_WIDTH`, so a new call moves the lines down and redraws only the rows it
        changed (a new latest, the one before): without the floor, labels of other widths
        coming and going ("A017", "BX-12") changed the column and redrew the whole list.
        """
        rows = self._fitting(content)
        if not rows:
            return None
        headings = content.headings
        columns = _Columns(
            label=max(
                LABEL_WIDTH,
                *(cell_len(text) for text in (headings[0], *(row.label for row in rows))),
            ),
            time=max(cell_len(text) for text in (headings[2], *(row.time for row in rows))),
            headings=headings,
        )
        lines = [(_HEADINGS, 0)]
        lines += [(_Line(row, latest=index == 0), 0) for index, row in enumerate(rows)]
        return lines, columns

    def draw_row(self, row: _Line, layout: _Columns) -> list[Strip]:
        """The headings, or one call (the newest in the latest style), as the panel's table
        (`table`) draws it, without the table measuring its cells again, and the cells kept
        (a rotation redraws every line; tables measured again were a fifth of that frame)."""
        width = self.size.width
        counter = width - layout.label - layout.time - _PADDING
        if counter >= 1:
            options = self.app.console_options.update(highlight=False, width=width)
            lines = table_row_lines(
                self.app.console,
                options,
                self._cells(row, layout),
                (layout.label, counter, layout.time),
                self._row_style(row),
                header=row.call is None,
                drawn_cells=self._drawn_cells,
            )
            if lines is not None:
                return self.strips(lines)
        return self.render_rows(self.table(row, layout))

    def table(self, row: _Line, layout: _Columns) -> Table:
        """The line as a table of its own: label, counter (the rest of the width) and time."""
        table = Table(
            box=None,
            expand=True,
            show_edge=False,
            pad_edge=False,
            padding=(0, 1),
            header_style=self._row_style(_HEADINGS),
            show_header=row.call is None,
        )
        headings = layout.headings
        table.add_column(Text(headings[0]), width=layout.label, no_wrap=True)
        table.add_column(Text(headings[1]), ratio=1, no_wrap=True, overflow="ellipsis")
        table.add_column(Text(headings[2]), width=layout.time, justify="right", no_wrap=True)
        call = row.call
        if call is not None:
            table.add_row(
                Text(call.label), Text(call.counter), Text(call.time), style=self._row_style(row)
            )
        return table

    def _cells(self, row: _Line, layout: _Columns) -> list[Text]:
        """The label, counter and time of the line (the headings of the headings' line)."""
        label, counter, time = layout.headings if row.call is None else row.call.texts
        return [Text(label), Text(counter), Text(time, justify="right")]

    def _row_style(self, row: _Line) -> Style:
        """The headings' style, the latest call's, or none."""
        if row.call is None:
            return self.get_component_rich_style("recent-calls--heading", partial=True)
        if row.latest:
            return self.get_component_rich_style("recent-calls--latest", partial=True)
        return Style.null()


__all__ = ["DEFAULT_CAPACITY", "RecentCallRow", "RecentCallsPanel", "RecentCallsText"]
