"""The layout adapts from 80x24 to 240x67 cells: every part on screen, none overlapping, the calls
given room first (on the TV's 106x30 cells: a label box 7 rows tall for one call, 3 rows for each
of six), the recent calls as tall as their calls need, the queues side by side before they page,
and shown a page at a time only when even that does not fit."""

from __future__ import annotations

from dataclasses import replace

import pytest

from lobby_display.app import LobbyApp
from lobby_display.board import Board
from lobby_display.models import Queue, QueueState, keyed, pick_name
from lobby_display.queue_layout import Column
from lobby_display.updates import QueueStatesSnapshot
from tests.helpers.boards import (
    Clock,
    at,
    board_app,
    call,
    make_board,
    make_settings,
    reference,
    screen_text,
)

#: 106x30 is the TV (foot full screen at 1920x1080, or 3840x2160 at twice the font size).
SIZES = [(80, 24), (100, 30), (106, 30), (120, 34), (160, 45), (200, 56), (240, 67)]
#: The sizes the issue asks to check.
CHECKED = [(80, 24), (106, 30), (160, 45), (240, 67)]
#: Six calls made together (the most the now-calling area shows at once).
SIX = [("A031", 1), ("B017", 2), ("C019", 3), ("D104", 4), ("E029", 1), ("K017", 2)]


def board_with_calls(labels: list[tuple[str, int]]) -> Board:
    """The fixture board, its calls long steady, then `labels` called two seconds ago."""
    settings = make_settings()
    board = make_board(settings, at(-600))
    for label, desk in labels:
        board.apply(call(f"t-{label}", label, "q-pass", desk, at(-2)), at(-2))
    return board


def label_boxes(app: LobbyApp) -> list[tuple[int, int]]:
    """Width and height of each shown card's label box, newest call first."""
    return [tuple(card.big.content_size) for card in app.now_calling.shown_cards]  # type: ignore[misc]


@pytest.mark.parametrize(("width", "height"), SIZES)
async def test_every_part_is_on_screen_and_none_overlaps(width: int, height: int) -> None:
    app = board_app(["en_US"])
    async with app.run_test(size=(width, height)) as pilot:
        await pilot.pause()
        parts = [
            app.header,
            app.now_calling,
            app.recent_calls,
            app.queue_board,
            app.counters,
            app.status_line,
        ]
        screen = app.screen.region
        for part in parts:
            assert part.region.width > 2 and part.region.height > 0, f"{part.id} has no room"
            assert screen.contains_region(part.region)
        for index, part in enumerate(parts):
            for other in parts[index + 1 :]:
                assert not part.region.overlaps(other.region), (part, other)
        text = screen_text(app)
        for heading in ("Now calling", "Recent calls", "Queues", "Counters"):
            assert heading in text
        assert "Tuesday, November 24, 2026" in text
        assert "14:05" in text
        # The newest call is listed in full, and every counter fits.
        assert "A017" in text
        for name in ("Visitors today", "People served", "Tickets this year"):
            assert name in text
        # The call just made is drawn large, never as plain text.
        big = app.now_calling.shown_cards[0].big
        assert big.mosaic_rows is not None
        assert big.content_size.height >= (7 if height >= 30 else 2)


async def test_one_call_on_the_tv_gets_a_label_box_7_rows_tall_and_wide_enough() -> None:
    app = board_app(["en_US"])  # the fixture's last call, alone in the highlight window
    async with app.run_test(size=(106, 30)) as pilot:
        await pilot.pause()
        ((width, height),) = label_boxes(app)
        assert height >= 7
        # "A031" drawn 7 rows (252 px) tall is about 4 x 0.6 x 252 px wide: 34 cells of 18 px.
        assert width >= 40


@pytest.mark.parametrize(("width", "height"), CHECKED)
async def test_six_calls_each_keep_a_label_box(width: int, height: int) -> None:
    # As on the TV, where the labels are images (a text terminal shows fewer cards, each still
    # drawn: test_screen_calls.py).
    app = board_app(["en_US"], board=board_with_calls(SIX), graphics="sixel")
    async with app.run_test(size=(width, height)) as pilot:
        await pilot.pause()
        await pilot.pause()
        boxes = label_boxes(app)
        cards = app.now_calling.shown_cards
        assert cards[0].big.label == "K017", "the call just made comes first"
        if (width, height) == (80, 24):
            assert boxes[0][1] >= 2
        else:
            assert len(boxes) == 6
            for box_width, box_height in boxes:
                assert box_height >= 3
                assert box_width >= 16
        regions = [card.region for card in cards]
        for index, region in enumerate(regions):
            assert app.now_calling.region.contains_region(region)
            for other in regions[index + 1 :]:
                assert not region.overlaps(other)


@pytest.mark.parametrize(("width", "height"), CHECKED)
async def test_the_calls_area_keeps_its_size_whatever_the_number_of_calls(
    width: int, height: int
) -> None:
    regions = []
    for labels in ([], SIX[:1], SIX[:3], SIX):
        board = board_with_calls(labels) if labels else None
        app = board_app(["en_US"], board=board)
        async with app.run_test(size=(width, height)) as pilot:
            await pilot.pause()
            regions.append(
                (app.now_calling.region, app.recent_calls.region, app.queue_board.region)
            )
    assert all(region == regions[0] for region in regions)


async def test_the_label_box_grows_with_the_screen() -> None:
    heights = []
    for size in CHECKED:
        app = board_app(["en_US"])
        async with app.run_test(size=size) as pilot:
            await pilot.pause()
            ((_, height),) = label_boxes(app)
            heights.append(height)
    assert heights == sorted(heights)
    assert heights[0] < heights[-1]


@pytest.mark.parametrize(("width", "height"), [(106, 30), (160, 45)])
@pytest.mark.parametrize("recent", [3, 6])
async def test_recent_calls_take_the_lines_their_calls_need(
    width: int, height: int, recent: int
) -> None:
    app = board_app(["en_US"], recent_calls=recent)
    async with app.run_test(size=(width, height)) as pilot:
        await pilot.pause()
        panel = app.recent_calls
        # Its frame, the headings and one line per call: no empty lines under them.
        assert panel.region.height == recent + 3
        assert len(panel.visible_rows) == recent


async def test_no_recent_calls_asked_for_leaves_their_room_to_the_rest() -> None:
    app = board_app(["en_US"], recent_calls=0)
    async with app.run_test(size=(106, 30)) as pilot:
        await pilot.pause()
        assert not app.recent_calls.display
        assert app.counters.region.height > 0


def board_of_short_queues(count: int) -> Board:
    """The fixture board with `count` open queues of short names (as many small places have),
    each with a few tickets waiting and today's hours."""
    settings = make_settings()
    board = make_board(settings, calls=())
    names = reference()
    ids = [f"q-{n:02d}" for n in range(count)]
    queues = keyed(
        Queue, {qid: {"name": {"en_US": f"Service {qid[2:]}"}} for qid in ids}, "queue_id"
    )
    board.apply(replace(names, queues=queues), at(-1))
    states = keyed(
        QueueState,
        {
            qid: {
                "bookingIsOpened": True,
                "queueIsOpened": True,
                "queueLength": {"queueTicketLength": 3, "queuePeopleLength": 3},
                "dayQueueTimeslot": [
                    {
                        "startTime": "2026-11-24T08:30:00:00,0000+0100",
                        "endTime": "2026-11-24T17:00:00:00,0000+0100",
                    }
                ],
            }
            for qid in ids
        },
        "queue_id",
    )
    board.apply(QueueStatesSnapshot(states), at(-1))
    return board


async def test_on_the_tv_queues_go_side_by_side_before_they_page() -> None:
    app = board_app(["en_US"], board=board_of_short_queues(14))
    async with app.run_test(size=(106, 30)) as pilot:
        await pilot.pause()
        board = app.queue_board
        assert board.pages == 1, "every queue on screen at once"
        assert board.side_by_side == 2
        assert Column.WAITING in board.columns
        text = screen_text(app)
        for n in range(14):
            assert f"Service {n:02d}" in text
        assert "Queues  1/" not in text


async def test_queues_that_do_not_fit_are_shown_a_page_at_a_time() -> None:
    clock = Clock()
    settings = make_settings()
    board = make_board(settings, clock.now)
    names = reference()
    queues = dict(names.queues)
    queues.update(
        keyed(
            Queue,
            {f"q-extra{n}": {"name": {"en_US": f"Extra service {n}"}} for n in range(8)},
            "queue_id",
        )
    )
    board.apply(replace(names, queues=queues), clock.now)
    app = board_app(["en_US"], clock, board=board)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        shown = app.queue_board
        assert shown.pages > 1
        seen: set[str] = set()
        for _ in range(shown.pages):
            text = screen_text(app)
            assert f"{shown.page + 1}/{shown.pages}" in text
            seen.update(row.name for row in shown.visible_rows if row.name and not row.sub)
            # Pages turn once every locale has had its turn (12 s with one locale).
            clock.advance(app.settings.display.rotation_seconds)
            app.tick()
            await pilot.pause()
        assert seen == {pick_name(queue.names, "en_US") for queue in app.board.queues()}
        assert len(seen) == 12


async def test_a_narrow_screen_drops_columns_before_cutting_names() -> None:
    app = board_app(["en_US"])
    async with app.run_test(size=(240, 67)) as pilot:
        await pilot.pause()
        assert app.queue_board.columns == tuple(Column)
        assert "7 tickets · 9 people" in screen_text(app)
        await pilot.resize_terminal(80, 24)
        await pilot.pause()
        assert Column.NAME in app.queue_board.columns
        assert Column.STATUS in app.queue_board.columns
        assert "9 people" not in screen_text(app)
        assert "Passports and ID cards" in screen_text(app)
