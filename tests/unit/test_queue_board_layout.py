"""How the queue board arranges its queues (pure, no terminal): it uses its width before it pages
(hours on one line, queues side by side in column groups), pages only when even that does not
fit, never splits a queue from its sub-rows, and keeps its rules for narrow boards (the people
leave the waiting column, then "Today" goes; names are not cut while a column can give way)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lobby_display.queue_layout import (
    ALL_COLUMNS,
    HOURS_SEPARATOR,
    SPACER,
    Column,
    ColumnTexts,
    QueueRow,
    arrange,
    column_layouts,
    paginate,
)

HEADINGS = ColumnTexts("Queue", "Status", "Waiting", "Next available", "Today")


def queue(
    name: str, types: int = 0, hours: str = "08:30–12:00", people: int = 0
) -> tuple[QueueRow, ...]:
    """A queue's rows: its own line, then `types` appointment types' lines."""
    waiting = f"4 tickets · {people} people" if people else "4 tickets"
    head = QueueRow(name, "Open", "open", waiting, "in 14 min.", hours, waiting_short="4 tickets")
    subs = tuple(
        QueueRow(f"Type {n}", "", "unknown", "2 tickets", "in 14 min.", "", sub=True)
        for n in range(types)
    )
    return (head, *subs)


def queues(count: int, **kwargs: object) -> list[tuple[QueueRow, ...]]:
    return [queue(f"Service {n:02d}", **kwargs) for n in range(count)]  # type: ignore[arg-type]


def names_in(page: tuple[tuple[QueueRow, ...], ...]) -> list[str]:
    return [row.name for group in page for row in group if row.name and not row.sub]


def test_queues_that_fit_stay_in_one_group_with_a_line_between_them() -> None:
    board = queues(4)
    arranged = arrange(HEADINGS, board, 100, 12)
    assert arranged.side_by_side == 1
    assert arranged.columns.columns == ALL_COLUMNS
    assert len(arranged.pages) == 1
    (group,) = arranged.pages[0]
    assert group.count(SPACER) == 3


def test_queues_that_would_page_go_side_by_side_instead() -> None:
    board = queues(10)
    alone = arrange(HEADINGS, board, 50, 8)
    assert len(alone.pages) > 1, "one group of 50 cells pages"
    arranged = arrange(HEADINGS, board, 103, 8)
    assert len(arranged.pages) == 1
    assert arranged.side_by_side == 2
    # In reading order (down the first group, then the second), each queue once, balanced.
    assert names_in(arranged.pages[0]) == [rows[0].name for rows in board]
    left, right = arranged.pages[0]
    assert abs(len(left) - len(right)) <= 1
    assert Column.WAITING in arranged.columns.columns


def test_a_queue_is_never_split_between_groups() -> None:
    board = [queue("Passports", types=3), queue("Civil registry", types=2), queue("Reception")]
    arranged = arrange(HEADINGS, board, 103, 6)
    for page in arranged.pages:
        for group in page:
            subs_first = [row for row in group if row.name][:1]
            assert not subs_first or not subs_first[0].sub, "a group starts with a queue's line"


def test_side_by_side_never_costs_the_waiting_column_or_a_name() -> None:
    # Long names: two groups would have to cut them or drop the waiting column.
    board = [queue(f"Planning and building permits {n}") for n in range(10)]
    arranged = arrange(HEADINGS, board, 90, 8)
    assert arranged.side_by_side == 1
    assert len(arranged.pages) > 1, "pages only when even groups do not fit"
    seen = [name for page in arranged.pages for name in names_in(page)]
    assert seen == [rows[0].name for rows in board]


def test_three_groups_on_a_very_wide_board() -> None:
    board = queues(18)
    arranged = arrange(HEADINGS, board, 200, 8)
    assert len(arranged.pages) == 1
    assert arranged.side_by_side == 3


def test_more_groups_only_when_they_save_a_page() -> None:
    board = queues(6)
    arranged = arrange(HEADINGS, board, 200, 40)
    assert arranged.side_by_side == 1


def test_hours_share_a_line_when_the_width_allows() -> None:
    hours = "08:30–12:00\n13:30–17:00"
    board = [queue("Passports", hours=hours), queue("Civil registry", hours=hours)]
    wide = column_layouts(HEADINGS, [row for rows in board for row in rows], 100)[0]
    assert wide.hours_inline
    assert wide.row_lines(board[0][0]) == 1
    assert board[0][0].cells(hours_inline=True).today == f"08:30–12:00{HOURS_SEPARATOR}13:30–17:00"
    # Narrower: the hours go on two lines before a name is cut.
    narrow = column_layouts(HEADINGS, [row for rows in board for row in rows], 70)[0]
    assert Column.TODAY in narrow.columns
    assert not narrow.hours_inline
    assert narrow.row_lines(board[0][0]) == 2
    assert narrow.width(Column.NAME) == len("Civil registry")


@pytest.mark.parametrize(
    ("width", "columns", "compact"),
    [
        (100, ALL_COLUMNS, False),
        (75, ALL_COLUMNS, True),
        (60, (Column.NAME, Column.STATUS, Column.WAITING, Column.NEXT), True),
    ],
)
def test_a_narrow_board_drops_the_people_then_today(
    width: int, columns: tuple[Column, ...], compact: bool
) -> None:
    board = [queue("Passports and ID cards", people=9), queue("Civil registry")]
    layout = column_layouts(HEADINGS, [row for rows in board for row in rows], width)[0]
    assert (layout.columns, layout.compact) == (columns, compact)
    assert layout.width(Column.NAME) == len("Passports and ID cards")


def test_fewer_pages_win_over_more_columns_in_one_group() -> None:
    # Hours on two lines cost a page on a short, narrow board: "Today" gives way.
    hours = "08:30–12:00\n13:30–17:00"
    board = [queue(f"Service {n}", hours=hours) for n in range(4)]
    arranged = arrange(HEADINGS, board, 60, 6)
    assert len(arranged.pages) == 1
    assert Column.TODAY not in arranged.columns.columns


def test_a_queue_taller_than_a_page_keeps_the_rows_that_fit() -> None:
    board = [queue("Passports", types=8)]
    (page,) = paginate(board, 4)
    assert page == (board[0][:4],)


def test_pages_keep_every_queue_once_in_order() -> None:
    board = queues(9, types=1)
    pages = paginate(board, 5, side_by_side=2)
    assert len(pages) == 3
    assert all(len(page) == 2 for page in pages)
    seen = [name for page in pages for name in names_in(page)]
    assert seen == [rows[0].name for rows in board]


def test_nothing_to_show_is_one_empty_page() -> None:
    assert paginate([], 10) == [((),)]
    assert paginate(queues(2), 0, side_by_side=2) == [((), ())]


def _columns_needed(heights: list[int], height: int, spacing: int) -> int:
    """Columns of `height` lines that the queues of `heights` fill in order (a reference)."""
    columns, used = 1, 0
    for queue_lines in heights:
        gap = spacing if used else 0
        if used and used + gap + queue_lines > height:
            columns, used, gap = columns + 1, 0, 0
        used += gap + queue_lines
    return columns


@settings(max_examples=300, deadline=None)
@given(
    heights=st.lists(st.integers(1, 4), min_size=1, max_size=30),
    lines=st.integers(1, 40),
    side_by_side=st.integers(1, 4),
)
def test_a_board_on_one_page_has_columns_as_short_as_they_can_be(
    heights: list[int], lines: int, side_by_side: int
) -> None:
    # A queue of one row whose stacked hours take `n` lines.
    board = [
        queue(f"Service {index:02d}", hours="\n".join(["08:30–12:00"] * n))
        for index, n in enumerate(heights)
    ]
    pages = paginate(board, lines, side_by_side=side_by_side)
    if len(pages) > 1 or max(heights) > lines:
        return
    (page,) = pages
    spacing = 1 if any(SPACER in group for group in page) else 0
    tallest = max(sum(row.lines(ALL_COLUMNS) for row in group) for group in page)
    assert _columns_needed(heights, tallest, spacing) <= side_by_side
    if tallest > max(heights):
        # One line less per column, and the queues would need more columns than the page has.
        assert _columns_needed(heights, tallest - 1, spacing) > side_by_side
    shared = any(len([row for row in group if row is not SPACER]) > 1 for group in page)
    if spacing == 0 and shared:
        # A line between queues is kept wherever some height of the page allows it.
        assert _columns_needed(heights, lines, 1) > side_by_side
