"""How the queue board arranges its rows (pure: no terminal): which columns at which widths,
how many column groups side by side, which queues on which page.

`arrange` gives the `BoardLayout`: the board uses its width, then drops columns, before it
pages (the order: docs/architecture.md, the screen); a queue is never split from its sub-rows.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Final, Literal, NamedTuple

from rich.cells import cell_len

#: How a row's status is coloured.
Tone = Literal["open", "busy", "closed", "unknown"]


class Column(Enum):
    """The board's columns, in the order they are shown."""

    NAME = "name"
    STATUS = "status"
    WAITING = "waiting"
    NEXT = "next_available"
    """The next free slot."""
    TODAY = "today"
    """Today's opening hours."""


class ColumnTexts(NamedTuple):
    """One text per column: the headings, or the cells of a row."""

    name: str
    status: str
    waiting: str
    next_available: str
    today: str

    def of(self, column: Column) -> str:
        """The text of `column`."""
        match column:
            case Column.NAME:
                return self.name
            case Column.STATUS:
                return self.status
            case Column.WAITING:
                return self.waiting
            case Column.NEXT:
                return self.next_available
            case Column.TODAY:
                return self.today


#: Every column, in order.
ALL_COLUMNS: Final = tuple(Column)
#: Columns are given up before a queue's name is cut below this many cells (a longer name is
#: cut with an ellipsis).
_NAME_WIDTH: Final = 24
#: What the board gives up, step by step, when the width runs short: (columns kept, the name
#: always first; whether the waiting column is compact: tickets only, without the people). The
#: most complete first.
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
    widths: tuple[int, ...] = field(init=False, compare=False, repr=False)
    """The width of the row's text in each of `_VARIANTS`, measured when the row is made: the
    board lays its rows out at every redraw, and most of them did not change since the last."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "widths", _row_widths(self))

    def cells(self, compact: bool = False, hours_inline: bool = False) -> ColumnTexts:
        """The text of each column (`compact`: the waiting tickets without the people;
        `hours_inline`: today's hours on one line)."""
        waiting = self.waiting_short or self.waiting if compact else self.waiting
        hours = self.hours.replace("\n", HOURS_SEPARATOR) if hours_inline else self.hours
        return ColumnTexts(self.name, self.status, waiting, self.next_available, hours)

    def lines(self, columns: Sequence[Column], hours_inline: bool = False) -> int:
        """How many lines the row takes with `columns` shown."""
        if Column.TODAY in columns and not hours_inline:
            return self.hours.count("\n") + 1
        return 1


@dataclass(frozen=True, slots=True)
class ColumnLayout:
    """Which columns the board shows and how wide each is."""

    columns: tuple[Column, ...]
    """The columns shown, in order (the name first)."""
    compact: bool
    """True when the waiting column gives the tickets without the people."""
    widths: tuple[int, ...]
    """The width of each shown column, in cells, in the order of `columns`."""
    headings: tuple[str, ...] = ()
    """The heading of each shown column (a long one may be on two lines)."""
    hours_inline: bool = False
    """True when today's hours share one line (a wider column, fewer lines)."""

    def width(self, column: Column) -> int:
        """The width of `column`, in cells (0 when it is not shown)."""
        return self.widths[self.columns.index(column)] if column in self.columns else 0

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


@dataclass(frozen=True, slots=True)
class _Measure:
    """How wide a column's text is, for some rows: their widest text in each of `_VARIANTS`.

    Hashable, so the layouts that fit are worked out once per set of widths: an event changes
    a number on the board, seldom a column's width, and the board is arranged at each event.
    """

    widest: tuple[int, ...]

    def __call__(self, column: Column, compact: bool, inline: bool, heading: str) -> int:
        """The cells `column` needs (compact waiting, hours on one line) under `heading`."""
        key = (column, compact and column is Column.WAITING, inline and column is Column.TODAY)
        return max(_widest_line(heading), self.widest[_VARIANT_INDEX[key]])


#: The variants of a column whose width is measured: only the waiting column differs when
#: compact, only "Today" when its hours are on one line.
_VARIANTS: Final = (
    (Column.NAME, False, False),
    (Column.STATUS, False, False),
    (Column.WAITING, False, False),
    (Column.WAITING, True, False),
    (Column.NEXT, False, False),
    (Column.TODAY, False, False),
    (Column.TODAY, False, True),
)
_VARIANT_INDEX: Final = {variant: index for index, variant in enumerate(_VARIANTS)}


def _row_widths(row: QueueRow) -> tuple[int, ...]:
    """The width of `row`'s text in each of `_VARIANTS`."""
    widths = []
    for column, compact, inline in _VARIANTS:
        if column is Column.NAME:
            cell = SUB_INDENT + row.name if row.sub else row.name
        else:
            cell = row.cells(compact, inline).of(column)
        widths.append(_widest_line(cell) if cell else 0)
    return tuple(widths)


def _measure(rows: Sequence[QueueRow]) -> _Measure:
    """The natural width of each column for `rows`."""
    widths = [row.widths for row in rows]
    if not widths:
        return _Measure((0,) * len(_VARIANTS))
    return _Measure(tuple(max(column) for column in zip(*widths, strict=True)))


def column_layouts(
    headings: ColumnTexts, rows: Sequence[QueueRow], width: int
) -> list[ColumnLayout]:
    """Every way of showing the columns in `width` cells, the most complete first.

    Each column gets the width of its longest line. Today's hours share one line only where
    that cuts no name. Names are never cut below `_NAME_WIDTH` cells while something else can
    give way: first the hours go on two lines and headings wider than their column go on two
    lines, then the people leave the waiting column, then "Today" goes, then the waiting, then
    the next slot. Only when nothing fits are names cut (with an ellipsis).
    """
    measure = _measure(rows)
    return list(_fitting_layouts(measure, headings, width)) or [
        _cut_names(measure, headings, width)
    ]


@functools.lru_cache(maxsize=64)
def _fitting_layouts(
    measure: _Measure, headings: ColumnTexts, width: int
) -> tuple[ColumnLayout, ...]:
    """The layouts of `column_layouts` that fit without cutting names below `_NAME_WIDTH`."""
    wrapped = _wrapped(headings)
    layouts: list[ColumnLayout] = []
    for columns, compact in _LAYOUTS:
        # With "Today": its hours on one line first (wider, fewer lines), then stacked.
        inline_choices = (True, False) if Column.TODAY in columns else (False,)
        for inline in inline_choices:
            layout = _first_fit(measure, columns, compact, inline, (headings, wrapped), width)
            if layout is not None:
                layouts.append(layout)
                break
    return tuple(layouts)


def _first_fit(
    measure: _Measure,
    columns: tuple[Column, ...],
    compact: bool,
    inline: bool,
    choices: tuple[ColumnTexts, ColumnTexts],
    width: int,
) -> ColumnLayout | None:
    for shown in choices:
        name, others = _natural_widths(measure, columns, compact, inline, shown)
        room = _name_room(width, others)
        # Hours on one line never cost a name any cell: stacked hours come first.
        if room >= (name if inline else min(name, _NAME_WIDTH)):
            return _layout(columns, compact, inline, name, others, room, shown)
    return None


def _cut_names(measure: _Measure, headings: ColumnTexts, width: int) -> ColumnLayout:
    """The plainest layout, names cut to what is left."""
    columns, compact = _LAYOUTS[-1]
    wrapped = _wrapped(headings)
    name, others = _natural_widths(measure, columns, compact, False, wrapped)
    return _layout(columns, compact, False, name, others, _name_room(width, others), wrapped)


def _wrapped(headings: ColumnTexts) -> ColumnTexts:
    return ColumnTexts._make(wrap_heading(heading) for heading in headings)


def _natural_widths(
    measure: _Measure,
    columns: tuple[Column, ...],
    compact: bool,
    inline: bool,
    headings: ColumnTexts,
) -> tuple[int, list[int]]:
    """The natural width of the name column, and of each other column shown, in order."""
    name = measure(Column.NAME, compact, inline, headings.name)
    others = [
        measure(column, compact, inline, headings.of(column))
        for column in columns
        if column is not Column.NAME
    ]
    return name, others


def _name_room(width: int, others: Sequence[int]) -> int:
    """The cells left for the name beside columns of widths `others`: two cells between
    columns (one each side), none at the edges."""
    return width - sum(others) - 2 * len(others)


def _layout(
    columns: tuple[Column, ...],
    compact: bool,
    inline: bool,
    name: int,
    others: list[int],
    room: int,
    headings: ColumnTexts,
) -> ColumnLayout:
    name = max(min(name, room), 1)
    spare = room - name
    if spare > 0 and others:
        extra = min(spare // len(others), _MAX_EXTRA)
        others = [value + extra for value in others]
    return ColumnLayout(
        columns,
        compact,
        (name, *others),
        tuple(headings.of(column) for column in columns),
        hours_inline=inline,
    )


#: An empty line between two queues, when the board has room for it.
SPACER: Final = QueueRow("", "", "unknown", "", "", "")
#: Before the name of an appointment type's row (under its queue's).
SUB_INDENT: Final = "  "
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
    fitted = [_rows_that_fit(group, lines, layout) for group in groups]
    blocks = [block for block, _ in fitted]
    heights = [height for _, height in fitted]
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
) -> tuple[tuple[QueueRow, ...], int]:
    """The queue's rows, or the first of them that fit in `lines` lines, and the lines they
    take."""
    used = 0
    for index, row in enumerate(group):
        taken = layout.row_lines(row)
        if used + taken > lines:
            return group[:index], used
        used += taken
    return group, used


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
    low, high = max(heights), lines
    if low > high or _columns_filled(heights, high, spacing) > side_by_side:
        return None
    # Taller columns never need more of them (each column ends at or after the queue it ended
    # at before): the fewest lines are found by halving, not by trying every height (this ran
    # for every layout tried at every redraw of a large board).
    while low < high:
        middle = (low + high) // 2
        if _columns_filled(heights, middle, spacing) <= side_by_side:
            high = middle
        else:
            low = middle + 1
    return low


def _columns_filled(heights: Sequence[int], height: int, spacing: int) -> int:
    """How many columns of `height` lines the queues of `heights` fill, in order, with
    `spacing` lines between two queues of a column."""
    columns, used = 1, 0
    for queue in heights:
        gap = spacing if used else 0
        if used and used + gap + queue > height:
            columns, used, gap = columns + 1, 0, 0
        used += gap + queue
    return columns


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

    @classmethod
    def empty(cls, width: int) -> BoardLayout:
        """A board without rows, `width` cells wide."""
        return cls(_FULL, 1, width, (((),),))


def arrange(
    headings: ColumnTexts,
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
            layouts = list(_fitting_layouts(measure, headings, group_width)) or [
                _cut_names(measure, headings, group_width)
            ]
        for layout in layouts:
            pages = paginate(groups, height - layout.header_lines, layout, count)
            key = (len(pages), layout.rank, count)
            if best is None or key < best[0]:
                best = (key, BoardLayout(layout, count, group_width, tuple(pages)))
    assert best is not None
    return best[1]


__all__ = [
    "ALL_COLUMNS",
    "GROUP_GAP",
    "HOURS_SEPARATOR",
    "MAX_GROUPS",
    "SPACER",
    "SUB_INDENT",
    "BoardLayout",
    "Column",
    "ColumnLayout",
    "ColumnTexts",
    "Page",
    "QueueRow",
    "Tone",
    "arrange",
    "column_layouts",
    "paginate",
    "wrap_heading",
]
