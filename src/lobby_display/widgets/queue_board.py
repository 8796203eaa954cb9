"""The queue board: one row per queue (name, status, waiting, next free slot, today's hours), with
a sub-row per appointment type where a queue has several.

The widget draws what `queue_layout` arranges (columns, column groups, pages) and turns pages
with the locale rotation.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import ClassVar, Final

from rich.segment import Segment
from rich.style import Style
from rich.table import Table
from rich.text import Text
from textual.reactive import reactive
from textual.strip import Strip

from lobby_display import strings
from lobby_display.queue_layout import (
    SUB_INDENT,
    BoardLayout,
    Column,
    ColumnLayout,
    ColumnTexts,
    QueueRow,
    Tone,
    arrange,
)
from lobby_display.views import (
    AppointmentTypeView,
    HealthView,
    QueueStatus,
    QueueView,
    slots_of_day,
)
from lobby_display.widgets.drawn import DrawnCache
from lobby_display.widgets.panel import MAX_DRAWN_ROWS, UNKNOWN, LineKey, LinePanel, Shown
from lobby_display.widgets.table_row import CellKey, table_row_lines

#: Cells of the board kept drawn: every queue's name, status, hours and counts in each locale.
MAX_DRAWN_CELLS: Final = 2048
#: Locales and minutes whose rows the board keeps worded: the locales a place rotates come
#: back with their rows, and the next turn's are worded ahead of it (`QueueBoard.prepare`).
MAX_WORDED: Final = 4

_STATUS_WORDS: Final = {
    QueueStatus.CLOSED: strings.CLOSED,
    QueueStatus.PAUSED: strings.PAUSED,
    QueueStatus.BOOKING_CLOSED: strings.BOOKING_CLOSED,
    QueueStatus.FULL: strings.FULL,
    QueueStatus.FULL_TODAY: strings.FULL_TODAY,
    QueueStatus.FULL_FOR_FIFO: strings.FULL_FOR_WALK_INS,
    QueueStatus.FULL_FOR_APPOINTMENTS: strings.FULL_FOR_APPOINTMENTS,
    QueueStatus.OPEN: strings.OPEN,
}

_TONES: Final[dict[QueueStatus, Tone]] = {
    QueueStatus.UNKNOWN: "unknown",
    QueueStatus.CLOSED: "closed",
    QueueStatus.OPEN: "open",
}


@dataclass(frozen=True, slots=True)
class QueueBoardText:
    """Everything the board says, in the locale on screen."""

    heading: str
    headings: ColumnTexts
    groups: tuple[tuple[QueueRow, ...], ...]
    """One group per queue: its row, then its appointment types' rows."""
    empty: str
    """What the board says when there is no row ("No queues to show", "Not available")."""


def waiting_text(
    tickets: int | None, people: int | None, shown: Shown, *, compact: bool = False
) -> str:
    """ "7 tickets", or "7 tickets · 9 people" when groups make the numbers differ (and the
    board is not `compact`)."""
    if tickets is None:
        return UNKNOWN
    text = shown.text.plural(strings.TICKETS, tickets)
    if not compact and people is not None and people != tickets:
        text = f"{text} · {shown.text.plural(strings.PEOPLE, people)}"
    return text


def availability_text(
    moment: datetime | None, size: int | None, group_size: int, shown: Shown
) -> str:
    """The first free slot in words; says the group size when it is not the configured one."""
    when = shown.text.next_slot(moment, shown.now)
    if moment is not None and size is not None and size != group_size:
        return shown.text.plural(strings.FOR_GROUP, size, when=when)
    return when


def queue_rows(queue: QueueView, shown: Shown) -> tuple[QueueRow, ...]:
    """The queue's line, and one line per appointment type when it has several."""
    text = shown.text
    status = queue.status
    if status is QueueStatus.CLOSED and queue.next_timeslot is not None:
        status_words = text.text(
            strings.OPENS, when=text.when(queue.next_timeslot.start, shown.now)
        )
    elif status is QueueStatus.UNKNOWN:
        status_words = UNKNOWN
    else:
        status_words = text.text(_STATUS_WORDS[status])
    types = queue.appointment_types
    if not types and queue.first_availability is None:
        next_available = UNKNOWN
    else:
        source = _first_type(types, queue.first_availability)
        next_available = availability_text(
            queue.first_availability,
            source.availability_group_size if source is not None else queue.group_size,
            queue.group_size,
            shown,
        )
    today = slots_of_day(queue.today_timeslots, shown.now, text.tz)
    hours = "\n".join(text.hours(slot.start, slot.end) for slot in today) if today else UNKNOWN
    rows = [
        QueueRow(
            name=shown.name(queue.names) or queue.queue_id,
            status=status_words,
            tone=_TONES.get(status, "busy"),
            waiting=waiting_text(queue.waiting_tickets, queue.waiting_people, shown),
            next_available=next_available,
            hours=hours,
            waiting_short=waiting_text(
                queue.waiting_tickets, queue.waiting_people, shown, compact=True
            ),
        )
    ]
    if len(types) > 1:
        for kind in types:
            rows.append(
                QueueRow(
                    name=shown.name(kind.names) or kind.appointment_type_id,
                    status="",
                    tone="unknown",
                    waiting=waiting_text(kind.waiting_tickets, kind.waiting_people, shown),
                    next_available=availability_text(
                        kind.first_availability,
                        kind.availability_group_size,
                        queue.group_size,
                        shown,
                    ),
                    hours="",
                    sub=True,
                    waiting_short=waiting_text(
                        kind.waiting_tickets, kind.waiting_people, shown, compact=True
                    ),
                )
            )
    return tuple(rows)


def _first_type(
    types: Sequence[AppointmentTypeView], moment: datetime | None
) -> AppointmentTypeView | None:
    """The appointment type whose first availability is the queue's."""
    return next((kind for kind in types if kind.first_availability == moment), None)


@dataclass(frozen=True, slots=True)
class _Line:
    """One line of the board: for each column group, the row drawn there (None: the headings)
    and which of its lines (None where a group has no line here)."""

    parts: tuple[tuple[QueueRow | None, int] | None, ...]


@dataclass(frozen=True, slots=True)
class _Drawing:
    """What the lines are drawn with (as `LinePanel` layout: a change redraws the whole board)."""

    columns: ColumnLayout
    group_width: int
    side_by_side: int


class QueueBoard(LinePanel[QueueBoardText, _Line, _Drawing]):
    """The queues: name, status, waiting tickets and people, next free slot, today's hours."""

    DEFAULT_CSS = """
    QueueBoard {
        height: 1fr;
    }
    QueueBoard > .queue-board--heading {
        color: $text-muted;
        text-style: bold;
    }
    QueueBoard > .queue-board--name {
        text-style: bold;
    }
    QueueBoard > .queue-board--sub {
        color: $text-muted;
    }
    QueueBoard > .queue-board--open {
        color: $success;
        text-style: bold;
    }
    QueueBoard > .queue-board--busy {
        color: $warning;
        text-style: bold;
    }
    QueueBoard > .queue-board--closed {
        color: $text-muted;
        text-style: bold;
    }
    QueueBoard > .queue-board--message {
        text-style: bold;
    }
    QueueBoard > .queue-board--rule {
        color: $primary 60%;
    }
    """

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "queue-board--heading",
        "queue-board--name",
        "queue-board--sub",
        "queue-board--open",
        "queue-board--busy",
        "queue-board--closed",
        "queue-board--message",
        "queue-board--rule",
    }
    MESSAGE_COMPONENT: ClassVar[str] = "queue-board--message"

    page_slot: reactive[int] = reactive(0, repaint=False)
    """Advances with time; the page shown is this modulo the number of pages."""

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self._arranged = BoardLayout.empty(1)
        # The rows of each queue as worded in the last few locales and minutes (see
        # `_queue_rows`), the newest last.
        self._worded: dict[Hashable, dict[str, tuple[QueueView, tuple[QueueRow, ...]]]] = {}
        # Each row (None: the headings) drawn at the width of its group, for the lines that
        # show it.
        self._row_strips: DrawnCache[QueueRow | None, list[Strip]] = DrawnCache(MAX_DRAWN_ROWS)
        self._row_strips_with: Hashable = None
        # Each cell drawn, for rows that share it (never stale: the key holds all it shows).
        self._drawn_cells: DrawnCache[CellKey, list[list[Segment]]] = DrawnCache(MAX_DRAWN_CELLS)
        self._lines = 0
        """Lines of the page shown."""

    def show(self, queues: Sequence[QueueView], health: HealthView, shown: Shown) -> None:
        """Show the rows of `queues`, marked with their part's health."""
        text = shown.text
        self.show_health(health, shown)
        groups = () if self.withdrawn else self._queue_rows(queues, shown)
        self.show_content(
            QueueBoardText(
                heading=text.text(strings.QUEUES),
                headings=_column_headings(shown),
                groups=groups,
                empty=self.empty_text(shown, strings.NO_QUEUES),
            )
        )

    def prepare(self, queues: Sequence[QueueView], shown: Shown, page_slot: int) -> None:
        """Word and draw the rows of `queues` in `shown`'s locale and minute, on the page of
        `page_slot`, ahead of their turn: the rotation to it then words and draws only the
        queues that changed since. Wording each queue's numbers and times was a third of a
        rotation's redraw of the board, and drawing its lines half of the frame after."""
        width, height = self.content_size
        if self.withdrawn or not width:
            return
        groups = self._queue_rows(queues, shown)
        if not groups:
            return
        arranged = arrange(_column_headings(shown), groups, width, height)
        keys, drawing = self._lines_of(arranged, page_slot % len(arranged.pages))
        row_strips: dict[QueueRow | None, list[Strip]] = {}
        self.draw_ahead(
            keys, drawing, lambda line: self._draw_line(line, drawing, arranged, row_strips)
        )

    def _queue_rows(
        self, queues: Sequence[QueueView], shown: Shown
    ) -> tuple[tuple[QueueRow, ...], ...]:
        """The rows of each queue; a queue that did not change keeps its rows of this locale
        and minute (the rows of the last few locales and minutes are kept).

        Relative times ("in 12 min") are worded to the minute, as between two minutes of a
        quiet screen; formatting every queue's numbers and times for each event was the largest
        cost of a quiet day on a large board.
        """
        minute = shown.now.replace(second=0, microsecond=0)
        key = (id(shown.text), shown.fallback, minute)
        known = self._worded.pop(key, {})
        worded: dict[str, tuple[QueueView, tuple[QueueRow, ...]]] = {}
        groups = []
        for queue in queues:
            before = known.get(queue.queue_id)
            if before is not None and before[0] == queue:
                rows = before[1]
            else:
                rows = queue_rows(queue, shown)
            worded[queue.queue_id] = (queue, rows)
            groups.append(rows)
        self._worded[key] = worded
        while len(self._worded) > MAX_WORDED:
            del self._worded[next(iter(self._worded))]
        return tuple(groups)

    def watch_page_slot(self) -> None:
        self._update_heading()
        self.show_rows()

    @property
    def pages(self) -> int:
        """How many pages the rows take at the current size."""
        return len(self._arranged.pages)

    @property
    def page(self) -> int:
        """The page shown (from 0)."""
        return self.page_slot % self.pages

    @property
    def visible_rows(self) -> list[QueueRow]:
        """The rows on the page shown, group after group."""
        return [row for group in self._arranged.pages[self.page] for row in group]

    @property
    def columns(self) -> tuple[Column, ...]:
        """The columns shown at the current size."""
        return self._arranged.columns.columns

    @property
    def side_by_side(self) -> int:
        """How many column groups of queues share the width."""
        return self._arranged.side_by_side

    def fit_content(self) -> None:
        """Arrange the rows for the current size (columns, groups, pages)."""
        content = self.content
        width, height = self.content_size
        if content is not None and content.groups:
            self._arranged = arrange(content.headings, content.groups, width, height)
        else:
            self._arranged = BoardLayout.empty(width)
        self._update_heading()

    def _update_heading(self) -> None:
        if self.content is None:
            return
        heading = self.content.heading
        if self.pages > 1:
            heading = f"{heading}  {self.page + 1}/{self.pages}"
        self.set_heading(heading)

    def lines_of(self, content: QueueBoardText) -> tuple[list[LineKey[_Line]], _Drawing] | None:
        """The headings and the rows of the page shown, group beside group, or the message when
        there is no row.

        Each row is drawn as a one-row table of the page's column widths, which is the same as
        the same row in one whole table (the widths are fixed, nothing spans rows), and kept: a
        change in one queue redraws its lines only, not the 40 or so of a page (Rich measures
        every cell of a table again on each render, 20 ms for a board of 30 queues).
        """
        if not content.groups:
            return None
        keys, drawing = self._lines_of(self._arranged, self.page)
        self._lines = len(keys)
        return keys, drawing

    @staticmethod
    def _lines_of(arranged: BoardLayout, page: int) -> tuple[list[LineKey[_Line]], _Drawing]:
        """The lines of `page` of the rows `arranged`, and what they are drawn with."""
        layout = arranged.columns
        groups: list[list[tuple[QueueRow | None, int]]] = []
        for rows in arranged.pages[page]:
            lines: list[tuple[QueueRow | None, int]] = []
            if rows:
                lines += [(None, y) for y in range(layout.header_lines)]
            for row in rows:
                lines += [(row, y) for y in range(layout.row_lines(row))]
            groups.append(lines)
        height = max(len(lines) for lines in groups)
        keys = [
            (_Line(tuple(lines[y] if y < len(lines) else None for lines in groups)), 0)
            for y in range(height)
        ]
        return keys, _Drawing(layout, arranged.group_width, arranged.side_by_side)

    def draw_row(self, row: _Line, layout: _Drawing) -> list[Strip]:
        """One line of the board: each group's part of it, a rule between two groups."""
        return self._draw_line(row, layout, self._arranged, None)

    def _draw_line(
        self,
        row: _Line,
        layout: _Drawing,
        arranged: BoardLayout,
        row_strips: dict[QueueRow | None, list[Strip]] | None,
    ) -> list[Strip]:
        """One line of the board drawn with `arranged`; its rows' lines kept in `row_strips`
        (None: the board's own store, for the rows on screen)."""
        width = layout.group_width
        base = self.visual_style.rich_style
        rule = Strip([Segment(" │ ", base + self._style("rule"))])
        parts: list[Strip] = []
        for index, part in enumerate(row.parts):
            if index:
                parts.append(rule)
            if part is None:
                parts.append(Strip.blank(width, base))
                continue
            key, y = part
            if row_strips is None:
                strips = self._strips(key)
            elif key in row_strips:
                strips = row_strips[key]
            else:
                strips = row_strips[key] = self._draw_row(key, arranged)
            strip = strips[y] if y < len(strips) else Strip.blank(width, base)
            parts.append(strip.crop_extend(0, width, base))
        return [Strip.join(parts)]

    def _strips(self, row: QueueRow | None) -> list[Strip]:
        """The lines of the headings (None) or of one queue row, at the width of a group; kept
        until the layout, the size, the styles or the theme change."""
        drawn_with = self.drawn_key(self.row_layout)
        # Beyond four rows a line, most were drawn for rows that changed long ago.
        if drawn_with != self._row_strips_with or len(self._row_strips) > 4 * self._lines:
            self._row_strips.clear()
            self._row_strips_with = drawn_with
        strips = self._row_strips.get(row)
        if strips is None:
            strips = self._draw_row(row, self._arranged)
            self._row_strips.set(row, strips)
        return strips

    def notify_style_update(self) -> None:
        # A new theme or freshness changes the colours the rows were drawn with.
        self._row_strips_with = None
        super().notify_style_update()

    def _draw_row(self, queue_row: QueueRow | None, arranged: BoardLayout) -> list[Strip]:
        """The headings (None), or one row of the board, at the width of a group."""
        width = arranged.group_width
        options = self.app.console_options.update(highlight=False, width=width)
        header = queue_row is None
        layout = arranged.columns
        lines = table_row_lines(
            self.app.console,
            options,
            self._texts(queue_row, layout),
            layout.widths,
            self._style("heading") if header else Style.null(),
            header=header,
            drawn_cells=self._drawn_cells,
        )
        if lines is None:  # wider than the group: Rich's table shares the width out
            return self.render_rows(self._table(queue_row, layout), width)
        return self.strips(lines)

    def _texts(self, row: QueueRow | None, layout: ColumnLayout) -> list[Text]:
        """The cells of `row` (None: the headings), one per column of `layout`."""
        if row is None:
            return [Text(heading) for heading in layout.headings]
        pick = self._style
        cells = row.cells(layout.compact, layout.hours_inline)
        texts = []
        for column in layout.columns:
            if column is Column.NAME:
                name = SUB_INDENT + row.name if row.sub else row.name
                texts.append(Text(name, style=pick("sub" if row.sub else "name")))
            elif column is Column.STATUS:
                texts.append(Text(cells.status, style=pick(row.tone)))
            else:
                texts.append(Text(cells.of(column), style=pick("sub") if row.sub else Style()))
        return texts

    def _table(self, row: QueueRow | None, layout: ColumnLayout) -> Table:
        """A table of `layout`'s columns holding `row` alone, or the headings alone (None)."""
        table = Table(
            box=None,
            expand=False,
            show_edge=False,
            pad_edge=False,
            padding=(0, 1),
            header_style=self._style("heading"),
            show_header=row is None,
        )
        for heading, width in zip(layout.headings, layout.widths, strict=True):
            table.add_column(Text(heading), width=width, no_wrap=True, overflow="ellipsis")
        if row is not None:
            table.add_row(*self._texts(row, layout))
        return table

    def _style(self, name: str) -> Style:
        if name == "unknown":
            name = "closed"
        return self.get_component_rich_style(f"queue-board--{name}", partial=True)


def _column_headings(shown: Shown) -> ColumnTexts:
    """The column headings in `shown`'s locale."""
    text = shown.text
    return ColumnTexts(
        name=text.text(strings.QUEUE),
        status=text.text(strings.STATUS),
        waiting=text.text(strings.WAITING),
        next_available=text.text(strings.NEXT_AVAILABLE),
        today=text.text(strings.TODAY),
    )


__all__ = [
    "QueueBoard",
    "QueueBoardText",
    "availability_text",
    "queue_rows",
    "waiting_text",
]
