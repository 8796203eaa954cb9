"""The layout adapts from 80x24 to 240x67 cells: every part on screen, none overlapping, the
call's label growing with the space, queues that do not fit shown a page at a time."""

from __future__ import annotations

from dataclasses import replace

import pytest
from boards import Clock, board_app, make_board, make_settings, reference, screen_text

from lobby_display.models import Queue, keyed, pick_name

SIZES = [(80, 24), (100, 30), (120, 34), (160, 45), (200, 56), (240, 67)]


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
            assert part.region.area > 0, f"{type(part).__name__} is not on screen"
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
        rows = app.now_calling.shown_cards[0].big.big_rows
        assert rows is not None
        assert len(rows) >= (7 if height >= 45 else 3)


async def test_the_label_grows_with_the_screen() -> None:
    heights = []
    for size in [(80, 24), (160, 45), (240, 67)]:
        app = board_app(["en_US"])
        async with app.run_test(size=size) as pilot:
            await pilot.pause()
            rows = app.now_calling.shown_cards[0].big.big_rows
            assert rows is not None
            heights.append(len(rows))
    assert heights == sorted(heights)
    assert heights[0] < heights[-1]


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
            "queueId",
        )
    )
    board.apply(replace(names, queues=queues), clock.now)
    app = board_app(["en_US"], clock, board=board)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        board = app.queue_board
        assert board.pages > 1
        seen: set[str] = set()
        for _ in range(board.pages):
            text = screen_text(app)
            assert f"{board.page + 1}/{board.pages}" in text
            seen.update(row.name for row in board.visible_rows if row.name and not row.sub)
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
        assert app.queue_board.columns == (0, 1, 2, 3, 4)
        assert "7 tickets · 9 people" in screen_text(app)
        await pilot.resize_terminal(80, 24)
        await pilot.pause()
        assert 0 in app.queue_board.columns and 1 in app.queue_board.columns
        assert "9 people" not in screen_text(app)
