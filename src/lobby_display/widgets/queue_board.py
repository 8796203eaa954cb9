"""The queue board: one row per queue (name, status, waiting, next free slot, today's hours), with
a sub-row per appointment type where a queue has several.

Columns take the width their text needs in the locale on screen (CJK counts two cells). The board
uses its width before it pages: today's hours go on one line when there is room, and when the
rows do not fit in height, the queues go side by side in two or more column groups (each with
its headings). When the screen is too narrow for every column, the people leave the waiting
column, then "Today" goes. Only when even that does not fit does the board show the queues a
page at a time (a queue never split from its sub-rows), turning pages with the locale rotation.

`arrange` is the pure part: which columns, how many groups, which rows on which page.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import IntEnum
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
from lobby_display.views import (
    AppointmentTypeView,
    HealthView,
    QueueStatus,
    QueueView,
    slots_of_day,
)
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


class Column(IntEnum):
    """The board's columns, in the order they are shown."""

    NAME = 0
    STATUS = 1
    WAITING = 2
    NEXT = 3
    """The next free slot."""
    TODAY = 4
    """Today's opening hours."""


#: Every column, in order.
ALL_COLUMNS: Final = tuple(Column)
#: Columns are given up before a queue's name is cut below this many cells (a longer name is
#: cut with an ellipsis).
_NAME_WIDTH: Final = 24
#: What the board gives up, step by step, when the width runs short: (columns kept, whether
#: the waiting column is compact: tickets only, without the people). The most complete first.
_LAYOUTS: Final[tuple[tuple[tuple[Column, ...], bool], ...]] = (
    (ALL_COLUMNS, False),
    (ALL_COLUMNS, True),
    ((Column.NAME, Column.STATUS, Column.WAITING, Column.NEXT), True),
    ((Column.NAME, Column.STATUS, Column.NEXT), True),
    ((Column.NAME, Column.STATUS), True),
)
#: Between today's opening hours when they share one line.
HOURS_SEPARATOR: Final = " · "


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

    def cells(
        self, compact: bool = False, hours_inline: bool = False
    ) -> tuple[str, str, str, str, str]:
        """The text of the five columns, in `Column` order (`compact`: the waiting tickets
        without the people; `hours_inline`: today's hours on one line)."""
        waiting = self.waiting_short or self.waiting if compact else self.waiting
        hours = self.hours.replace("\n", HOURS_SEPARATOR) if hours_inline else self.hours
        return (self.name, self.status, waiting, self.next_available, hours)

    def lines(self, columns: Sequence[Column], hours_inline: bool = False) -> int:
        """How many lines the row takes with `columns` shown."""
        if Column.TODAY in columns and not hours_inline:
            return self.hours.count("\n") + 1
        return 1


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
class ColumnLayout:
    """Which columns the board shows and how wide each is."""

    columns: tuple[Column, ...]
    """The columns shown, in order."""
    compact: bool
    """True when the waiting column gives the tickets without the people."""
    widths: tuple[int, ...]
    """The width of each shown column, in cells."""
    headings: tuple[str, ...] = ()
    """The heading of each shown column (a long one may be on two lines)."""
    hours_inline: bool = False
    """True when today's hours share one line (a wider column, fewer lines)."""

    @property
    def header_lines(self) -> int:
        """How many lines the headings take."""
        return max((heading.count("\n") + 1 for heading in self.headings), default=1)

    @property
    def rank(self) -> int:
        """How much the layout gives up: 0 for every column, more for plainer ones."""
        return _LAYOUTS.index((self.columns, self.compact))

    def row_lines(self, row: QueueRow) -> int:
        """How many lines `row` takes in this layout."""
        return row.lines(self.columns, self.hours_inline)


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


#: How wide a column's text is: (column, compact, hours on one line, heading) -> cells.
_Measure = Callable[[Column, bool, bool, str], int]


def _measure(rows: Sequence[QueueRow]) -> _Measure:
    """The natural width of each column for `rows` (measured once per variant of a column)."""
    widest: dict[tuple[Column, bool, bool], int] = {}

    def natural(column: Column, compact: bool, inline: bool, heading: str) -> int:
        # Only the waiting column differs when compact, only "Today" when inline.
        key = (column, compact and column is Column.WAITING, inline and column is Column.TODAY)
        if key not in widest:
            if column is Column.NAME:
                cells = [_SUB_INDENT + row.name if row.sub else row.name for row in rows]
            else:
                cells = [row.cells(compact, inline)[column] for row in rows]
            widest[key] = max((_widest_line(cell) for cell in cells if cell), default=0)
        return max(_widest_line(heading), widest[key])

    return natural


def fit_columns(headings: Sequence[str], rows: Sequence[QueueRow], width: int) -> ColumnLayout:
    """The preferred columns for `width` cells: the first of `column_layouts`."""
    return column_layouts(headings, rows, width)[0]


def column_layouts(
    headings: Sequence[str], rows: Sequence[QueueRow], width: int
) -> list[ColumnLayout]:
    """Every way of showing the columns in `width` cells, the most complete first.

    Each column gets the width of its longest line. Today's hours share one line only where
    that cuts no name. Names are never cut below `_NAME_WIDTH` cells while something else can
    give way: first the hours go on two lines and headings wider than their column go on two
    lines, then the people leave the waiting column, then "Today" goes, then the waiting, then
    the next slot. Only when nothing fits are names cut (with an ellipsis).
    """
    measure = _measure(rows)
    return _fitting_layouts(measure, headings, width) or [_cut_names(measure, headings, width)]


def _fitting_layouts(measure: _Measure, headings: Sequence[str], width: int) -> list[ColumnLayout]:
    """The layouts of `column_layouts` that fit without cutting names below `_NAME_WIDTH`."""
    wrapped = [wrap_heading(heading) for heading in headings]
    layouts: list[ColumnLayout] = []
    for columns, compact in _LAYOUTS:
        # With "Today": its hours on one line first (wider, fewer lines), then stacked.
        inline_choices = (True, False) if Column.TODAY in columns else (False,)
        for inline in inline_choices:
            layout = _first_fit(measure, columns, compact, inline, (headings, wrapped), width)
            if layout is not None:
                layouts.append(layout)
                break
    return layouts


def _first_fit(
    measure: _Measure,
    columns: tuple[Column, ...],
    compact: bool,
    inline: bool,
    choices: tuple[Sequence[str], Sequence[str]],
    width: int,
) -> ColumnLayout | None:
    for shown in choices:
        widths = [measure(column, compact, inline, shown[column]) for column in columns]
        # Two cells between columns (one each side), none at the edges.
        room = width - sum(widths[1:]) - 2 * (len(columns) - 1)
        # Hours on one line never cost a name any cell: stacked hours come first.
        if room >= (widths[0] if inline else min(widths[0], _NAME_WIDTH)):
            return _layout(columns, compact, inline, widths, room, shown)
    return None


def _cut_names(measure: _Measure, headings: Sequence[str], width: int) -> ColumnLayout:
    """The plainest layout, names cut to what is left."""
    columns, compact = _LAYOUTS[-1]
    wrapped = [wrap_heading(heading) for heading in headings]
    widths = [measure(column, compact, False, wrapped[column]) for column in columns]
    room = width - sum(widths[1:]) - 2 * (len(columns) - 1)
    return _layout(columns, compact, False, widths, room, wrapped)


def _layout(
    columns: tuple[Column, ...],
    compact: bool,
    inline: bool,
    widths: list[int],
    room: int,
    headings: Sequence[str],
) -> ColumnLayout:
    widths[0] = max(min(widths[0], room), 1)
    spare = room - widths[0]
    if spare > 0 and len(columns) > 1:
        extra = min(spare // (len(columns) - 1), _MAX_EXTRA)
        widths[1:] = [value + extra for value in widths[1:]]
    return ColumnLayout(
        columns,
        compact,
        tuple(widths),
        tuple(headings[column] for column in columns),
        hours_inline=inline,
    )


#: An empty line between two queues, when the board has room for it.
SPACER: Final = QueueRow("", "", "unknown", "", "", "")
_SUB_INDENT: Final = "  "
#: The layout of the board when nothing says otherwise: every column, hours stacked.
_FULL: Final = ColumnLayout(ALL_COLUMNS, False, (1,) * len(ALL_COLUMNS), ("",) * len(ALL_COLUMNS))

#: One page of the board: the rows of each column group, left to right.
Page = tuple[tuple[QueueRow, ...], ...]


def paginate(
    groups: Sequence[tuple[QueueRow, ...]],
    lines: int,
    layout: ColumnLayout = _FULL,
    side_by_side: int = 1,
) -> list[Page]:
    """Share the queues out among pages of `side_by_side` column groups of at most `lines` lines
    each, in reading order (down the first group, then the next), keeping each queue's lines
    together (a queue taller than a group keeps the rows that fit).

    When everything fits on one page, the groups are balanced (as short as they can be), and
    queues get an empty line between them where there is room for it: easier to read from afar.
    """
    empty: Page = ((),) * side_by_side
    if lines <= 0 or not groups:
        return [empty]
    blocks = [_rows_that_fit(group, lines, layout) for group in groups]
    heights = [sum(layout.row_lines(row) for row in block) for block in blocks]
    for spacing in (1, 0):
        height = _balanced_height(heights, lines, spacing, side_by_side)
        if height is not None:
            columns = _fill(blocks, heights, height, spacing)
            return [_page(columns, side_by_side)]
    columns = _fill(blocks, heights, lines, 0)
    return [
        _page(columns[start : start + side_by_side], side_by_side)
        for start in range(0, len(columns), side_by_side)
    ]


def _rows_that_fit(
    group: tuple[QueueRow, ...], lines: int, layout: ColumnLayout
) -> tuple[QueueRow, ...]:
    """The queue's rows, or the first of them that fit in `lines` lines."""
    used = 0
    for index, row in enumerate(group):
        used += layout.row_lines(row)
        if used > lines:
            return group[:index]
    return group


def _fill(
    blocks: Sequence[tuple[QueueRow, ...]], heights: Sequence[int], lines: int, spacing: int
) -> list[list[QueueRow]]:
    """The queues in columns of at most `lines` lines, each filled before the next, with
    `spacing` empty lines between two queues of a column."""
    columns: list[list[QueueRow]] = [[]]
    used = 0
    for block, height in zip(blocks, heights, strict=True):
        gap = spacing if columns[-1] else 0
        if columns[-1] and used + gap + height > lines:
            columns.append([])
            used, gap = 0, 0
        if gap:
            columns[-1].append(SPACER)
        columns[-1].extend(block)
        used += gap + height
    return columns


def _balanced_height(
    heights: Sequence[int], lines: int, spacing: int, side_by_side: int
) -> int | None:
    """The fewest lines per column (at most `lines`) that hold every queue in `side_by_side`
    columns, filled in order with `spacing` lines between queues; None when none does."""
    for height in range(max(heights), lines + 1):
        columns, used = 1, 0
        for queue in heights:
            gap = spacing if used else 0
            if used and used + gap + queue > height:
                columns, used, gap = columns + 1, 0, 0
            used += gap + queue
        if columns <= side_by_side:
            return height
    return None


def _page(columns: Sequence[Sequence[QueueRow]], side_by_side: int) -> Page:
    shaped = [tuple(column) for column in columns[:side_by_side]]
    return tuple(shaped + [()] * (side_by_side - len(shaped)))


#: Cells between two column groups side by side (a rule in the middle).
GROUP_GAP: Final = 3
#: Most column groups side by side, and the narrowest a group may be.
MAX_GROUPS: Final = 4
_MIN_GROUP_WIDTH: Final = 24


@dataclass(frozen=True, slots=True)
class BoardLayout:
    """How the board shows its queues at one size."""

    columns: ColumnLayout
    """The columns of every group."""
    side_by_side: int
    """How many column groups share the width."""
    group_width: int
    """The width of one group, in cells."""
    pages: tuple[Page, ...]
    """The rows of each group, page by page."""


def arrange(
    headings: Sequence[str],
    groups: Sequence[tuple[QueueRow, ...]],
    width: int,
    height: int,
) -> BoardLayout:
    """The columns, groups and pages that show the queues best in `width` x `height` cells.

    Fewest pages first; then the most complete columns; then the fewest groups side by side.
    Groups go side by side only with the waiting column and without cutting names; a single
    group may give up columns (the plainer layouts of `column_layouts`) to need fewer pages.
    """
    rows = [row for group in groups for row in group]
    measure = _measure(rows)
    best: tuple[tuple[int, int, int], BoardLayout] | None = None
    for count in range(1, MAX_GROUPS + 1):
        group_width = (width - GROUP_GAP * (count - 1)) // count
        if count > 1:
            if count > len(groups) or group_width < _MIN_GROUP_WIDTH:
                break
            layouts = [
                layout
                for layout in _fitting_layouts(measure, headings, group_width)
                if Column.WAITING in layout.columns
            ]
        else:
            layouts = _fitting_layouts(measure, headings, group_width) or [
                _cut_names(measure, headings, group_width)
            ]
        for layout in layouts:
            pages = paginate(groups, height - layout.header_lines, layout, count)
            key = (len(pages), layout.rank, count)
            if best is None or key < best[0]:
                best = (key, BoardLayout(layout, count, group_width, tuple(pages)))
    assert best is not None
    return best[1]


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


@dataclass(frozen=True, slots=True)
class _Line:
    """One line of the board: for each column group, the row drawn there and which of its
    lines (None where a group has no line here)."""

    parts: tuple[tuple[Hashable, int] | None, ...]


@dataclass(frozen=True, slots=True)
class _Drawing:
    """What the lines are drawn with (as `LinePanel` layout: a change redraws the whole board)."""

    columns: ColumnLayout
    group_width: int
    side_by_side: int


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

    page_slot: reactive[int] = reactive(0, repaint=False)
    """Advances with time; the page shown is this modulo the number of pages."""

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.content: QueueBoardText | None = None
        """What the board says; set by `show`."""
        self._arranged = BoardLayout(_FULL, 1, 1, (((),),))
        self._rows_by_queue: dict[str, tuple[QueueView, tuple[QueueRow, ...]]] = {}
        self._rows_key: object = None
        # Each row drawn at the width of its group, for the lines that show it.
        self._row_strips: dict[Hashable, list[Strip]] = {}
        self._row_strips_with: Hashable = None

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

    def _paginate(self) -> None:
        content = self.content
        width, height = self.content_size
        if content is not None and content.groups:
            self._arranged = arrange(content.headings, content.groups, width, height)
        else:
            self._arranged = BoardLayout(_FULL, 1, width, (((),),))
        self._update_heading()
        self._show_page()

    def _update_heading(self) -> None:
        if self.content is None:
            return
        heading = self.content.heading
        if self.pages > 1:
            heading = f"{heading}  {self.page + 1}/{self.pages}"
        self.set_heading(heading)

    def _show_page(self) -> None:
        """The headings and the rows of the page shown, group beside group, or the message when
        there is no row.

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
        arranged = self._arranged
        layout = arranged.columns
        groups: list[list[tuple[Hashable, int]]] = []
        for rows in arranged.pages[self.page]:
            lines: list[tuple[Hashable, int]] = []
            if rows:
                lines += [(_HEADINGS, y) for y in range(layout.header_lines)]
            for row in rows:
                lines += [(row, y) for y in range(layout.row_lines(row))]
            groups.append(lines)
        height = max(len(lines) for lines in groups)
        keys: list[LineKey] = [
            (_Line(tuple(lines[y] if y < len(lines) else None for lines in groups)), 0)
            for y in range(height)
        ]
        self.show_lines(keys, _Drawing(layout, arranged.group_width, arranged.side_by_side))

    def draw_row(self, row: Hashable) -> list[Strip]:
        """One line of the board: each group's part of it, a rule between two groups."""
        line = cast(_Line, row)
        arranged = self._arranged
        width = arranged.group_width
        base = self.visual_style.rich_style
        rule = Strip([Segment(" │ ", base + self._style("rule"))])
        parts: list[Strip] = []
        for index, part in enumerate(line.parts):
            if index:
                parts.append(rule)
            if part is None:
                parts.append(Strip.blank(width, base))
                continue
            key, y = part
            strips = self._strips(key)
            strip = strips[y] if y < len(strips) else Strip.blank(width, base)
            parts.append(strip.crop_extend(0, width, base))
        return [Strip.join(parts)]

    def _strips(self, row: Hashable) -> list[Strip]:
        """The lines of the headings or of one queue row, at the width of a group; kept until
        the layout, the size, the styles or the theme change."""
        drawn_with = (
            self.row_layout,
            self.size.width,
            self.visual_style.rich_style,
            self.app.theme,
        )
        if drawn_with != self._row_strips_with or len(self._row_strips) > 4 * len(self.line_keys):
            self._row_strips.clear()
            self._row_strips_with = drawn_with
        strips = self._row_strips.get(row)
        if strips is None:
            strips = self._row_strips[row] = self._draw_row(row)
        return strips

    def notify_style_update(self) -> None:
        # A new theme or freshness changes the colours the rows were drawn with.
        self._row_strips_with = None
        super().notify_style_update()

    def _draw_row(self, row: Hashable) -> list[Strip]:
        """The headings, or one row of the board, at the width of a group."""
        queue_row = None if row == _HEADINGS else cast(QueueRow, row)
        width = self._arranged.group_width
        options = self.app.console_options.update(highlight=False, width=width)
        header = queue_row is None
        lines = table_row_lines(
            self.app.console,
            options,
            self._texts(queue_row),
            self._arranged.columns.widths,
            self._style("heading") if header else Style.null(),
            header=header,
        )
        if lines is None:  # wider than the group: Rich's table shares the width out
            return self.render_rows(self._table(queue_row), width)
        base = self.visual_style.rich_style
        return [Strip(Segment.apply_style(line, base)) for line in lines]

    def _texts(self, row: QueueRow | None) -> list[Text]:
        """The cells of `row` (None: the headings), one per column shown."""
        layout = self._arranged.columns
        if row is None:
            return [Text(heading) for heading in layout.headings]
        pick = self._style
        cells = row.cells(layout.compact, layout.hours_inline)
        texts = []
        for column in layout.columns:
            if column is Column.NAME:
                name = _SUB_INDENT + row.name if row.sub else row.name
                texts.append(Text(name, style=pick("sub" if row.sub else "name")))
            elif column is Column.STATUS:
                texts.append(Text(cells[column], style=pick(row.tone)))
            else:
                texts.append(Text(cells[column], style=pick("sub") if row.sub else Style()))
        return texts

    def _table(self, row: QueueRow | None) -> Table:
        """A table of the page's columns holding `row` alone, or the headings alone (None)."""
        layout = self._arranged.columns
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
    "ALL_COLUMNS",
    "GROUP_GAP",
    "HOURS_SEPARATOR",
    "SPACER",
    "BoardLayout",
    "Column",
    "ColumnLayout",
    "Page",
    "QueueBoard",
    "QueueBoardText",
    "QueueRow",
    "arrange",
    "availability_text",
    "column_layouts",
    "fit_columns",
    "paginate",
    "queue_rows",
    "table_row_lines",
    "waiting_text",
    "wrap_heading",
]
