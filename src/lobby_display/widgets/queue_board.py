"""The queue board: one row per queue (name, status, waiting, next free slot, today's hours), with
a sub-row per appointment type where a queue has several.

Columns take the width their text needs in the locale on screen (CJK counts two cells); when
the screen is too narrow for all of them, "Today" goes first. When the rows do not fit in
height, the board shows them a page at a time (a queue never split from its sub-rows), turning
pages with the locale rotation.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import ClassVar, Final, Literal, cast

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions
from rich.padding import Padding
from rich.segment import Segment
from rich.style import Style
from rich.table import Table
from rich.text import Text
from textual.reactive import reactive
from textual.strip import Strip

from lobby_display import messages
from lobby_display.views import AppointmentTypeView, HealthView, QueueStatus, QueueView
from lobby_display.widgets.panel import UNKNOWN, LineKey, LinePanel, Shown

Tone = Literal["open", "busy", "closed", "unknown"]

_STATUS_WORDS: Final = {
    QueueStatus.CLOSED: messages.CLOSED,
    QueueStatus.PAUSED: messages.PAUSED,
    QueueStatus.BOOKING_CLOSED: messages.BOOKING_CLOSED,
    QueueStatus.FULL: messages.FULL,
    QueueStatus.FULL_TODAY: messages.FULL_TODAY,
    QueueStatus.FULL_FOR_FIFO: messages.FULL_FOR_WALK_INS,
    QueueStatus.FULL_FOR_APPOINTMENTS: messages.FULL_FOR_APPOINTMENTS,
    QueueStatus.OPEN: messages.OPEN,
}

_TONES: Final[dict[QueueStatus, Tone]] = {
    QueueStatus.UNKNOWN: "unknown",
    QueueStatus.CLOSED: "closed",
    QueueStatus.OPEN: "open",
}

#: Columns are given up before a queue's name is cut below this many cells (a longer name is
#: cut with an ellipsis).
_NAME_WIDTH: Final = 24
#: What the board gives up, step by step, when the width runs short: (columns kept, whether
#: the waiting column is compact: tickets only, without the people).
_LAYOUTS: Final = (
    ((0, 1, 2, 3, 4), False),
    ((0, 1, 2, 3, 4), True),
    ((0, 1, 2, 3), True),
    ((0, 1, 3), True),
    ((0, 1), True),
)


@dataclass(frozen=True, slots=True)
class QueueRow:
    """One line of the board, in the locale on screen."""

    name: str
    status: str
    tone: Tone
    waiting: str
    next_available: str
    hours: str
    """Today's opening hours, one range a line."""
    sub: bool = False
    """True for an appointment type's line under its queue."""
    waiting_short: str = ""
    """The waiting tickets alone, for narrow screens ("" : same as `waiting`)."""

    def cells(self, compact: bool = False) -> tuple[str, str, str, str, str]:
        """The text of the five columns (`compact`: the waiting tickets without the people)."""
        waiting = self.waiting_short or self.waiting if compact else self.waiting
        return (self.name, self.status, waiting, self.next_available, self.hours)

    def lines(self, columns: Sequence[int]) -> int:
        """How many lines the row takes with `columns` shown."""
        return self.hours.count("\n") + 1 if 4 in columns else 1


@dataclass(frozen=True, slots=True)
class QueueBoardText:
    """Everything the board says, in the locale on screen."""

    heading: str
    headings: tuple[str, str, str, str, str]
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
    text = shown.text.plural(messages.TICKETS, tickets)
    if not compact and people is not None and people != tickets:
        text = f"{text} · {shown.text.plural(messages.PEOPLE, people)}"
    return text


def availability_text(
    moment: datetime | None, size: int | None, group_size: int, shown: Shown
) -> str:
    """The first free slot in words; says the group size when it is not the configured one."""
    when = shown.text.next_slot(moment, shown.now)
    if moment is not None and size is not None and size != group_size:
        return shown.text.plural(messages.FOR_GROUP, size, when=when)
    return when


def queue_rows(queue: QueueView, shown: Shown) -> tuple[QueueRow, ...]:
    """The queue's line, and one line per appointment type when it has several."""
    text = shown.text
    status = queue.status
    if status is QueueStatus.CLOSED and queue.next_timeslot is not None:
        status_words = text.text(
            messages.OPENS, when=text.when(queue.next_timeslot.start, shown.now)
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
    hours = (
        "\n".join(text.hours(slot.start, slot.end) for slot in queue.today_timeslots)
        if queue.today_timeslots
        else UNKNOWN
    )
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
class ColumnLayout:
    """Which columns the board shows and how wide each is."""

    columns: tuple[int, ...]
    """Column indexes: 0 name, 1 status, 2 waiting, 3 next available, 4 today."""
    compact: bool
    """True when the waiting column gives the tickets without the people."""
    widths: tuple[int, ...]
    """The width of each shown column, in cells."""
    headings: tuple[str, ...] = ()
    """The heading of each shown column (a long one may be on two lines)."""

    @property
    def header_lines(self) -> int:
        """How many lines the headings take."""
        return max((heading.count("\n") + 1 for heading in self.headings), default=1)


#: Extra cells a column may get when the board has room to spare (beyond that, the room stays
#: on the right: columns far apart are hard to read across).
_MAX_EXTRA: Final = 6


def wrap_heading(heading: str) -> str:
    """A heading on two lines, split at the space that makes the longer line shortest
    ("Next available" -> "Next\navailable"); a heading without a space stays as it is."""
    best = heading
    for index, char in enumerate(heading):
        if char == " ":
            candidate = heading[:index] + "\n" + heading[index + 1 :]
            if _widest_line(candidate) < _widest_line(best):
                best = candidate
    return best


def _widest_line(text: str) -> int:
    return max(cell_len(line) for line in text.split("\n"))


def fit_columns(headings: Sequence[str], rows: Sequence[QueueRow], width: int) -> ColumnLayout:
    """The preferred columns for `width` cells: the first of `column_layouts`."""
    return column_layouts(headings, rows, width)[0]


def column_layouts(
    headings: Sequence[str], rows: Sequence[QueueRow], width: int
) -> list[ColumnLayout]:
    """Every way of showing the columns in `width` cells, the most complete first.

    Each column gets the width of its longest line. Names are never cut below `_NAME_WIDTH`
    cells while something else can give way: first headings wider than their column go on two
    lines, then the people leave the waiting column, then "Today" goes, then the next slot, then
    the waiting. Only when nothing fits are names cut (with an ellipsis).
    """

    widest: dict[tuple[int, bool], int] = {}

    def natural(index: int, compact: bool, heading: str) -> int:
        # Only the waiting column differs when compact; each column is measured once.
        key = (index, compact and index == 2)
        if key not in widest:
            if index == 0:
                cells = [_SUB_INDENT + row.name if row.sub else row.name for row in rows]
            else:
                cells = [row.cells(compact)[index] for row in rows]
            widest[key] = max((_widest_line(cell) for cell in cells if cell), default=0)
        return max(_widest_line(heading), widest[key])

    wrapped = [wrap_heading(heading) for heading in headings]
    layouts: list[ColumnLayout] = []
    for columns, compact in _LAYOUTS:
        for shown in (headings, wrapped):
            widths = [natural(index, compact, shown[index]) for index in columns]
            # Two cells between columns (one each side), none at the edges.
            others = sum(widths[1:]) + 2 * (len(columns) - 1)
            room = width - others
            if room >= min(widths[0], _NAME_WIDTH):
                layouts.append(_layout(columns, compact, widths, room, room, shown))
                break
    if not layouts:
        columns, compact = _LAYOUTS[-1]
        widths = [natural(index, compact, wrapped[index]) for index in columns]
        others = sum(widths[1:]) + 2 * (len(columns) - 1)
        layouts.append(_layout(columns, compact, widths, width - others, width - others, wrapped))
    return layouts


def _layout(
    columns: tuple[int, ...],
    compact: bool,
    widths: list[int],
    room: int,
    spare_for_name: int,
    headings: Sequence[str],
) -> ColumnLayout:
    widths[0] = max(min(widths[0], room), 1)
    spare = spare_for_name - widths[0]
    if spare > 0 and len(columns) > 1:
        extra = min(spare // (len(columns) - 1), _MAX_EXTRA)
        widths[1:] = [value + extra for value in widths[1:]]
    return ColumnLayout(
        columns, compact, tuple(widths), tuple(headings[index] for index in columns)
    )


#: An empty line between two queues, when the board has room for it.
SPACER: Final = QueueRow("", "", "unknown", "", "", "")
_SUB_INDENT: Final = "  "


def paginate(
    groups: Sequence[tuple[QueueRow, ...]],
    lines: int,
    columns: Sequence[int] = (0, 1, 2, 3, 4),
) -> list[list[QueueRow]]:
    """Split the queues into pages of at most `lines` lines, keeping each queue's lines together
    (a queue taller than a page keeps the rows that fit). When everything fits with an empty
    line between queues, it gets them: one page, easier to read from afar."""
    if lines <= 0:
        return [[]]
    heights = [sum(row.lines(columns) for row in group) for group in groups]
    if groups and sum(heights) + len(groups) - 1 <= lines:
        page: list[QueueRow] = []
        for index, group in enumerate(groups):
            if index:
                page.append(SPACER)
            page.extend(group)
        return [page]
    pages: list[list[QueueRow]] = [[]]
    used = 0
    for group in groups:
        block: list[QueueRow] = []
        height = 0
        for row in group:
            if height + row.lines(columns) > lines:
                break
            block.append(row)
            height += row.lines(columns)
        if pages[-1] and used + height > lines:
            pages.append([])
            used = 0
        pages[-1].extend(block)
        used += height
    return pages


def table_row_lines(
    console: Console,
    options: ConsoleOptions,
    cells: Sequence[Text],
    widths: Sequence[int],
    style: Style,
    *,
    header: bool,
) -> list[list[Segment]] | None:
    """One row of the board's table, drawn as Rich's `Table` draws it, without measuring it.

    The table has no borders, one cell of padding between columns and none at the edges, and
    columns of fixed `widths` that cut their text with an ellipsis; headings sit at the bottom
    of their row, cells at the top. Each cell goes through the same Rich calls as in the table;
    what is skipped is the table's measuring of every cell (most of a row's cost). None when the
    columns are wider than `options` allow: Rich would then share the width out.
    """
    count = len(cells)
    padded = [width + (index > 0) + (index < count - 1) for index, width in enumerate(widths)]
    if sum(padded) > options.max_width:
        return None
    drawn = []
    for index, (text, width) in enumerate(zip(cells, padded, strict=True)):
        cell_options = options.update(
            width=width, justify="left", no_wrap=True, overflow="ellipsis", height=None
        )
        padding = (0, 1 if index < count - 1 else 0, 0, 1 if index > 0 else 0)
        drawn.append(console.render_lines(Padding(text, padding), cell_options, style=style))
    height = max(len(lines) for lines in drawn)
    align = Segment.align_bottom if header else Segment.align_top
    shaped = [
        Segment.set_shape(align(lines, width, height, style), width, height)
        for lines, width in zip(drawn, padded, strict=True)
    ]
    return [[segment for lines in shaped for segment in lines[y]] for y in range(height)]


#: The row key of the headings line(s).
_HEADINGS: Final = "headings"


class QueueBoard(LinePanel):
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
    """

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "queue-board--heading",
        "queue-board--name",
        "queue-board--sub",
        "queue-board--open",
        "queue-board--busy",
        "queue-board--closed",
        "queue-board--message",
    }

    page_slot: reactive[int] = reactive(0, repaint=False)
    """Advances with time; the page shown is this modulo the number of pages."""

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.content: QueueBoardText | None = None
        """What the board says; set by `show`."""
        self._pages: list[list[QueueRow]] = [[]]
        self._layout = ColumnLayout((0, 1, 2, 3, 4), False, (1, 1, 1, 1, 1), ("",) * 5)
        self._rows_by_queue: dict[str, tuple[QueueView, tuple[QueueRow, ...]]] = {}
        self._rows_key: object = None

    def show(self, queues: Sequence[QueueView], health: HealthView, shown: Shown) -> None:
        """Show the rows of `queues`, marked with their part's health."""
        text = shown.text
        self.show_health(health, shown)
        withdrawn = self.withdrawn
        groups = () if withdrawn else self._queue_rows(queues, shown)
        self.content = QueueBoardText(
            heading=text.text(messages.QUEUES),
            headings=(
                text.text(messages.QUEUE),
                text.text(messages.STATUS),
                text.text(messages.WAITING),
                text.text(messages.NEXT_AVAILABLE),
                text.text(messages.TODAY),
            ),
            groups=groups,
            empty=text.text(messages.NOT_AVAILABLE if withdrawn else messages.NO_QUEUES),
        )
        self._paginate()

    def _queue_rows(
        self, queues: Sequence[QueueView], shown: Shown
    ) -> tuple[tuple[QueueRow, ...], ...]:
        """The rows of each queue; a queue that did not change keeps its rows of this minute.

        Relative times ("in 12 min") are worded to the minute, as between two minutes of a
        quiet screen; formatting every queue's numbers and times for each event was the largest
        cost of a quiet day on a large board.
        """
        minute = shown.now.replace(second=0, microsecond=0)
        key = (id(shown.text), shown.fallback, minute)
        known = self._rows_by_queue if key == self._rows_key else {}
        self._rows_key = key
        self._rows_by_queue = {}
        groups = []
        for queue in queues:
            before = known.get(queue.queue_id)
            if before is not None and before[0] == queue:
                rows = before[1]
            else:
                rows = queue_rows(queue, shown)
            self._rows_by_queue[queue.queue_id] = (queue, rows)
            groups.append(rows)
        return tuple(groups)

    def watch_page_slot(self) -> None:
        self._update_heading()
        self._show_page()

    def on_resize(self) -> None:
        self._paginate()

    @property
    def pages(self) -> int:
        """How many pages the rows take at the current size."""
        return len(self._pages)

    @property
    def page(self) -> int:
        """The page shown (from 0)."""
        return self.page_slot % len(self._pages)

    @property
    def visible_rows(self) -> list[QueueRow]:
        """The rows on the page shown."""
        return self._pages[self.page]

    @property
    def columns(self) -> tuple[int, ...]:
        """The columns shown at the current width (0 name, 1 status, 2 waiting, 3 next, 4 today)."""
        return self._layout.columns

    def _paginate(self) -> None:
        content = self.content
        groups = content.groups if content is not None else ()
        rows = [row for group in groups for row in group]
        height = self.content_size.height
        if content is not None and rows:
            # The most complete layout, unless a plainer one needs fewer pages (on a short
            # screen, hours on two lines can cost a page).
            best: tuple[ColumnLayout, list[list[QueueRow]]] | None = None
            for layout in column_layouts(content.headings, rows, self.content_size.width):
                pages = paginate(groups, height - layout.header_lines, layout.columns)
                if best is None or len(pages) < len(best[1]):
                    best = (layout, pages)
                if len(pages) == 1:
                    break
            assert best is not None
            self._layout, self._pages = best
        else:
            self._pages = paginate(groups, height - 1, self._layout.columns)
        self._update_heading()
        self._show_page()

    def _update_heading(self) -> None:
        if self.content is None:
            return
        heading = self.content.heading
        if len(self._pages) > 1:
            heading = f"{heading}  {self.page + 1}/{len(self._pages)}"
        self.set_heading(heading)

    def _show_page(self) -> None:
        """The headings and the rows of the page shown, or the message when there is no row.

        Each row is drawn as a one-row table of the page's column widths, which is the same as
        the same row in one whole table (the widths are fixed, nothing spans rows), and kept: a
        change in one queue redraws its lines only, not the 40 or so of a page (Rich measures
        every cell of a table again on each render, 20 ms for a board of 30 queues).
        """
        content = self.content
        if content is None:
            return
        if not content.groups:
            self.show_message(content.empty, "queue-board--message")
            return
        layout = self._layout
        lines: list[LineKey] = [(_HEADINGS, y) for y in range(layout.header_lines)]
        for row in self.visible_rows:
            lines += [(row, y) for y in range(row.lines(layout.columns))]
        self.show_lines(lines, layout)

    def draw_row(self, row: Hashable) -> list[Strip]:
        """The headings, or one row of the board."""
        queue_row = None if row == _HEADINGS else cast(QueueRow, row)
        options = self.app.console_options.update(highlight=False, width=self.size.width)
        header = queue_row is None
        lines = table_row_lines(
            self.app.console,
            options,
            self._texts(queue_row),
            self._layout.widths,
            self._style("heading") if header else Style.null(),
            header=header,
        )
        if lines is None:  # wider than the panel: Rich's table shares the width out
            return self.render_rows(self._table(queue_row))
        base = self.visual_style.rich_style
        return [Strip(Segment.apply_style(line, base)) for line in lines]

    def _texts(self, row: QueueRow | None) -> list[Text]:
        """The cells of `row` (None: the headings), one per column shown."""
        layout = self._layout
        if row is None:
            return [Text(heading) for heading in layout.headings]
        pick = self._style
        cells = row.cells(layout.compact)
        texts = []
        for index in layout.columns:
            if index == 0:
                name = _SUB_INDENT + row.name if row.sub else row.name
                texts.append(Text(name, style=pick("sub" if row.sub else "name")))
            elif index == 1:
                texts.append(Text(cells[1], style=pick(row.tone)))
            else:
                texts.append(Text(cells[index], style=pick("sub") if row.sub else Style()))
        return texts

    def _table(self, row: QueueRow | None) -> Table:
        """A table of the page's columns holding `row` alone, or the headings alone (None)."""
        layout = self._layout
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
            table.add_row(*self._texts(row))
        return table

    def _style(self, name: str) -> Style:
        if name == "unknown":
            name = "closed"
        return self.get_component_rich_style(f"queue-board--{name}", partial=True)


__all__ = [
    "SPACER",
    "ColumnLayout",
    "QueueBoard",
    "QueueBoardText",
    "QueueRow",
    "availability_text",
    "column_layouts",
    "fit_columns",
    "paginate",
    "queue_rows",
    "table_row_lines",
    "waiting_text",
    "wrap_heading",
]
