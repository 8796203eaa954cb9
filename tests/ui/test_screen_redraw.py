"""Redrawing in place: the panels redraw only the lines whose rows changed, so after any run of
updates the screen must be exactly (text and colours) the screen a new app draws from the same
board. A line left stale by a missed redraw would show an old number to the room."""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import replace
from typing import Any

import pytest
from textual.pilot import Pilot

from lobby_display import app as app_module
from lobby_display.app import QUEUES_REDRAW_PERIOD, LobbyApp
from lobby_display.board import Board
from lobby_display.config import Settings
from lobby_display.frames import FramePacer
from lobby_display.models import Queue, keyed
from lobby_display.widgets.panel import ROWS_AHEAD_PER_TURN
from lobby_display.widgets.queue_board import QueueBoard
from tests.helpers.boards import (
    Clock,
    FakeSource,
    at,
    call,
    make_board,
    make_settings,
    queue_states,
    reference,
    screen_lines,
    wait_for,
)
from tests.helpers.redraw import busy_morning, drawn, recorded_frames, settled, until, waiting


@pytest.mark.parametrize("size", [(160, 45), (80, 24), (120, 34)], ids=lambda s: f"{s[0]}x{s[1]}")
async def test_a_screen_redrawn_in_place_is_the_screen_drawn_afresh(size: tuple[int, int]) -> None:
    clock, source = Clock(at(10)), FakeSource()
    settings = make_settings()
    board = make_board(settings, at(-600))
    app = LobbyApp(settings, source, clock=clock, board=board)
    app.animation_level = "none"
    updates = busy_morning()
    async with app.run_test(size=size) as pilot:
        await wait_for(pilot, lambda: app.recent_calls.visible_rows != ())
        for update in updates:
            source.push(update)
            await pilot.pause(0.002)
        await wait_for(pilot, lambda: app.recent_calls.visible_rows[0].label == "B107")
        await settled(app, pilot, source)  # the queue rows' deferred redraw
        in_place = drawn(app)
        fresh = LobbyApp(settings, clock=clock, board=app.board)
        fresh.animation_level = "none"
        async with fresh.run_test(size=size) as fresh_pilot:
            await settled(fresh, fresh_pilot)
            afresh = drawn(fresh)
    assert [strip.text for strip in in_place] == [strip.text for strip in afresh]
    assert in_place == afresh, "same text, but colours or styles differ on some line"


def board_with_pages(settings: Settings) -> Board:
    """The fixture board with eight more queues: several pages on a small screen."""
    board = make_board(settings, at(-600))
    names = reference()
    queues = dict(names.queues)
    extra = {f"q-extra{n}": {"name": {"en_US": f"Extra service {n}"}} for n in range(8)}
    queues.update(keyed(Queue, extra, "queue_id"))
    board.apply(replace(names, queues=queues), at(-600))
    return board


def app_with_pages(locales: list[str] | None = None) -> tuple[LobbyApp, Clock, FakeSource]:
    """An app on `board_with_pages` (French and English taking turns every 10 s when asked),
    its clock and its source."""
    clock, source = Clock(at(10)), FakeSource()
    settings = make_settings(locales=locales or ["en_US"], rotation_seconds=10)
    app = LobbyApp(settings, source, clock=clock, board=board_with_pages(settings))
    app.animation_level = "none"
    return app, clock, source


async def test_turning_pages_and_locales_redraws_every_changed_line() -> None:
    app, clock, source = app_with_pages(["en_US", "fr_FR"])
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: app.queue_board.pages > 1)
        seen: set[tuple[str, int]] = set()
        for step in range(6):
            source.push(waiting(queue_states(), "q-pass", step))
            clock.advance(10)
            app.tick()
            await settled(app, pilot, source)
            seen.add((app.shown_locale, app.queue_board.page))
            in_place = drawn(app)
            fresh = LobbyApp(app.settings, clock=clock, board=app.board)
            fresh.animation_level = "none"
            async with fresh.run_test(size=(80, 24)) as fresh_pilot:
                await settled(fresh, fresh_pilot)
                assert fresh.shown_locale == app.shown_locale
                fresh.queue_board.page_slot = app.queue_board.page_slot
                await settled(fresh, fresh_pilot)
                afresh = drawn(fresh)
            assert in_place == afresh, (
                f"step {step}: {app.shown_locale}, page {app.queue_board.page}"
            )
        assert len(seen) >= 3, "both locales and several pages were shown"


async def test_a_page_due_with_a_rotation_held_behind_a_call_turns_with_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Pages turn when every locale has had its turn, with a rotation. When a call holds that
    rotation back for its frame, the page waits with it: turned alone, the new page was drawn
    in the locale going out by the first queue rows due meanwhile, and all over again in the
    new one a frame later (100 events/s: a 35 ms frame the calls waited for)."""
    # A wide window between the call's frame and the rotation's turn, for the rows due there.
    monkeypatch.setattr(app_module, "NETWORK_TURN", 0.3)
    monkeypatch.setattr(app_module, "QUEUES_REDRAW_PERIOD", 0.1)
    app, clock, source = app_with_pages(["en_US", "fr_FR"])
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: app.queue_board.pages > 1)
        await settled(app, pilot)
        next(timer for timer in app._timers if timer.name == "tick").pause()
        period = 2 * 10  # a page for each round of both locales
        turn = (math.floor(clock.now.timestamp() / period) + 1) * period
        if turn % 60 == 0:
            turn += period  # not at a new minute: it redraws every row in any case
        clock.advance(turn - 3 - clock.now.timestamp())
        app.tick()
        await settled(app, pilot)
        board = app.queue_board
        page, locale = board.page, app.shown_locale
        pages_shown: list[tuple[int, str]] = []
        show = board.show

        def noted(queues: Any, health: Any, shown: Any) -> None:
            show(queues, health, shown)
            pages_shown.append((board.page, shown.locale))

        board.show = noted  # type: ignore[method-assign]
        app.apply_update(call("t-p1", "P101", "q-pass", 2, clock.now))
        clock.advance(3)
        app.tick()  # the rotation and the page due, a call waiting
        assert app.shown_locale == locale, "the rotation waits for the call's frame"
        await until(lambda: any(row.label == "P101" for row in app.recent_calls.visible_rows))
        source.push(waiting(queue_states(), "q-pass", 17))  # rows due before the turn
        await wait_for(pilot, lambda: app.shown_locale != locale)
        await settled(app, pilot, source)
        assert board.page != page
        assert (board.page, locale) not in pages_shown, "the new page drawn in the old locale"
        assert (page, locale) in pages_shown, "the rows due before the turn drawn"
        assert pages_shown[-1] == (board.page, app.shown_locale)


@asynccontextmanager
async def paged_app(
    monkeypatch: pytest.MonkeyPatch, on_row: Callable[[str | None], None]
) -> AsyncIterator[tuple[LobbyApp, Pilot[Any], Clock, FakeSource]]:
    """One locale and a queue board of several pages (80 x 24), settled; every row the board
    draws is told to `on_row` (its name; None for the headings)."""
    app, clock, source = app_with_pages()
    draw_row = QueueBoard._draw_row

    def drew(board: QueueBoard, row: Any, arranged: Any) -> Any:
        on_row(None if row is None else row.name)
        return draw_row(board, row, arranged)

    monkeypatch.setattr(QueueBoard, "_draw_row", drew)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: app.queue_board.pages > 1)
        await settled(app, pilot)
        yield app, pilot, clock, source


def to_before_the_turn(app: LobbyApp, clock: Clock, seconds: float) -> None:
    """Move the clock to `seconds` before the next page turn."""
    turn = app._rotation.next_turn(clock.now.timestamp())
    clock.advance(turn - clock.now.timestamp() - seconds)


async def test_the_queue_boards_next_page_is_drawn_before_it_turns(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With one locale, a page turn drew every row of the new page in its frame (tens of
    milliseconds on a small PC: a call that came meanwhile waited for it). The screen draws
    them half a second before the turn; the turn draws again only a queue that changed since,
    and the page is then the page a new app draws."""
    rows: list[str | None] = []
    async with paged_app(monkeypatch, rows.append) as (app, pilot, clock, source):
        board = app.queue_board
        page = board.page
        coming = {
            row.name
            for group in board._arranged.pages[(page + 1) % board.pages]
            for row in group
            if row.name
        }
        to_before_the_turn(app, clock, 0.4)
        rows.clear()
        app.tick()  # the turn is 0.4 s away
        # Drawn a few rows a turn of the loop (`ROWS_AHEAD_PER_TURN`): every batch done.
        await until(lambda: coming <= set(rows))
        await settled(app, pilot)
        assert board.page == page, "not turned yet"
        ahead = set(rows)
        source.push(waiting(queue_states(), "q-pass", 17))  # a queue changes meanwhile
        await settled(app, pilot, source)
        rows.clear()
        clock.advance(0.4)
        app.tick()
        await wait_for(pilot, lambda: board.page != page)
        await settled(app, pilot)
        names = {row.name for row in board.visible_rows if row.name}
        assert names <= ahead | {None}, "the new page's rows were drawn ahead"
        assert board.content is not None
        changed = next(group for group in board.content.groups if "Passport" in group[0].name)
        assert set(rows) <= {row.name for row in changed}, f"drawn again at the turn: {rows}"
        in_place = drawn(app)
        fresh = LobbyApp(app.settings, clock=clock, board=app.board)
        fresh.animation_level = "none"
        async with fresh.run_test(size=(80, 24)) as fresh_pilot:
            await settled(fresh, fresh_pilot)
            fresh.queue_board.page_slot = board.page_slot
            await settled(fresh, fresh_pilot)
            assert in_place == drawn(fresh)


async def test_a_call_that_comes_while_the_next_page_is_drawn_ahead_goes_first(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The next page is drawn ahead a few rows a turn of the loop: a call that comes meanwhile
    is drawn after the rows under way, not after the whole page (tens of rows)."""
    happened: list[str] = []
    async with paged_app(monkeypatch, lambda _: happened.append("row")) as (app, pilot, clock, _):
        show = app.now_calling.show

        def shown(now_calling: Any, *args: Any) -> None:
            if any(view.call.label == "Z901" for view in now_calling.calls):
                happened.append("call")
            show(now_calling, *args)

        monkeypatch.setattr(app.now_calling, "show", shown)
        to_before_the_turn(app, clock, 0.4)
        await asyncio.sleep(0.05)  # no frame just made: the call is drawn at once
        happened.clear()
        app.tick()  # the next page drawn ahead from now
        app.apply_update(call("t-z1", "Z901", "q-pass", 3, clock.now))
        await until(lambda: "call" in happened)
        await settled(app, pilot)
        rows = happened.count("row")
        assert rows > ROWS_AHEAD_PER_TURN, f"a page of a few rows: {happened}"
        assert happened.index("call") < rows, f"the call drawn after the page: {happened}"
        assert "Z901" in "\n".join(screen_lines(app))


async def test_a_new_theme_after_a_reload_redraws_every_line_in_its_colours() -> None:
    clock, source = Clock(at(10)), FakeSource()
    settings = make_settings()
    app = LobbyApp(settings, source, clock=clock, board=make_board(settings, at(-600)))
    app.animation_level = "none"
    contrast = make_settings(theme="high-contrast")
    async with app.run_test(size=(120, 34)) as pilot:
        await wait_for(pilot, lambda: app.recent_calls.visible_rows != ())
        before = drawn(app)
        app.reload_settings(contrast)
        await settled(app, pilot)
        in_place = drawn(app)
    fresh = LobbyApp(contrast, clock=clock, board=app.board)
    fresh.animation_level = "none"
    async with fresh.run_test(size=(120, 34)) as fresh_pilot:
        await settled(fresh, fresh_pilot)
        afresh = drawn(fresh)
    assert in_place != before
    assert in_place == afresh


async def test_calls_between_two_frames_are_drawn_together_in_the_next_frame() -> None:
    """At most one frame per refresh interval (`FramePacer`): a call after a quiet spell is
    drawn at once, the calls that follow it within the interval wait for the next frame and are
    drawn in it, all of them, in one redraw of the calls."""
    clock, source = Clock(at(10)), FakeSource()
    settings = make_settings()
    app = LobbyApp(settings, source, clock=clock, board=make_board(settings, at(-600)))
    app.animation_level = "none"
    drawn_calls: list[tuple[str, ...]] = []
    show = app.recent_calls.show

    def counting_show(*args: Any) -> None:
        show(*args)
        drawn_calls.append(tuple(row.label for row in app.recent_calls.visible_rows))

    async with app.run_test(size=(160, 45)) as pilot:
        await wait_for(pilot, lambda: app.recent_calls.visible_rows != ())
        app.recent_calls.show = counting_show  # type: ignore[method-assign, assignment]
        # The clock's tick draws every part due, calls too: held, so the pacer alone is seen.
        next(timer for timer in app._timers if timer.name == "tick").pause()
        # A pacer that has drawn nothing yet (a quiet spell), with a refresh interval of 2 s: a
        # call drawn within the turns of the loop that bring it is drawn at once.
        app._pacer = FramePacer(interval=2.0)
        source.push(call("t-c0", "C100", "q-civil", 1, at(11)))
        await pilot.pause()
        await pilot.pause()
        assert any("C100" in labels for labels in drawn_calls)  # at once: the leading edge
        frames_before = len(drawn_calls)
        for number in range(1, 4):
            source.push(call(f"t-c{number}", f"C10{number}", "q-civil", 1, at(11)))
        await pilot.pause()
        await pilot.pause()
        assert not any("C101" in labels for labels in drawn_calls)  # held for the next frame
        await wait_for(pilot, lambda: any("C103" in labels for labels in drawn_calls))
        assert len(drawn_calls) == frames_before + 1  # the three calls in one frame
        assert drawn_calls[-1][:4] == ("C103", "C102", "C101", "C100")


async def test_a_call_just_after_a_redraw_of_the_queue_rows_alone_is_drawn_at_once() -> None:
    """The queue rows and counters are redrawn once a second at most, and such a frame does not
    hold back the call that comes next (the TV shows both at its next refresh): 4 calls of 178
    at 10 events/s waited up to a refresh interval for it. Calls still pace each other."""
    clock, source = Clock(at(10)), FakeSource()
    settings = make_settings()
    app = LobbyApp(settings, source, clock=clock, board=make_board(settings, at(-600)))
    app.animation_level = "none"
    states = queue_states()
    rows_shown: list[int | None] = []
    show = app.queue_board.show

    def counting_show(queues: Any, *args: Any) -> None:
        show(queues, *args)
        rows_shown.append(next(q.waiting_tickets for q in queues if q.queue_id == "q-pass"))

    async with app.run_test(size=(160, 45)) as pilot:
        await settled(app, pilot, source)
        next(timer for timer in app._timers if timer.name == "tick").pause()
        app.queue_board.show = counting_show  # type: ignore[method-assign, assignment]
        app._pacer = FramePacer(interval=2.0)  # a refresh interval no test waits out
        source.push(waiting(states, "q-pass", 41))
        await wait_for(pilot, lambda: 41 in rows_shown)
        source.push(call("t-c1", "C101", "q-civil", 1, at(11)))
        await pilot.pause()
        await pilot.pause()
        labels = [row.label for row in app.recent_calls.visible_rows]
        assert "C101" in labels, "the call waited behind the rows' frame"
        source.push(call("t-c2", "C102", "q-civil", 1, at(11)))
        await pilot.pause()
        await pilot.pause()
        labels = [row.label for row in app.recent_calls.visible_rows]
        assert "C102" not in labels, "a call's frame paces the next call's"


async def test_a_call_between_a_calls_redraw_and_its_frame_goes_in_that_frame(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A call that comes after another call is drawn and before that call's frame is made (two
    calls a few milliseconds apart) goes in that frame: it does not wait for a refresh interval
    and a frame of its own. One such call a frame; the next waits for the pacer."""
    clock, source = Clock(at(10)), FakeSource()
    settings = make_settings()
    app = LobbyApp(settings, source, clock=clock, board=make_board(settings, at(-600)))
    app.animation_level = "none"
    async with app.run_test(size=(160, 45)) as pilot:
        await settled(app, pilot, source)
        next(timer for timer in app._timers if timer.name == "tick").pause()
        app._pacer = FramePacer(interval=2.0)  # a refresh interval no test waits out
        frames = recorded_frames(app)
        screen = app.screen
        resume = screen._update_timer.resume
        # The frames are held from now on, as a slow host's are late (waits without a pilot).
        monkeypatch.setattr(screen._update_timer, "resume", lambda: None)

        def labels() -> list[str]:
            return [row.label for row in app.recent_calls.visible_rows]

        app.apply_update(call("t-c1", "C101", "q-civil", 1, clock.now))
        await until(lambda: "C101" in labels())
        app.apply_update(call("t-c2", "C102", "q-civil", 1, clock.now))
        assert "C102" in labels(), "the second call waited for a frame of its own"
        app.apply_update(call("t-c3", "C103", "q-civil", 1, clock.now))
        assert "C103" not in labels(), "a third call joined the same frame"
        monkeypatch.setattr(screen._update_timer, "resume", resume)
        screen.refresh()
        await wait_for(pilot, lambda: len(frames) > 0)
        assert "C102" in frames[0] and "C101" in frames[0]
        assert "C103" not in frames[0]


async def test_queue_rows_due_between_a_calls_redraw_and_its_frame_are_drawn_after_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The clock's tick (or the rows' timer) may come after a call is drawn and before its
    frame is made (one call in fifteen at 10 events/s): the queue rows it would draw wait for
    the frame after the call's, and the call's frame does not wait for them."""
    clock, source = Clock(at(10)), FakeSource()
    settings = make_settings()
    app = LobbyApp(settings, source, clock=clock, board=make_board(settings, at(-600)))
    app.animation_level = "none"
    states = queue_states()
    async with app.run_test(size=(160, 45)) as pilot:
        await settled(app, pilot, source)
        next(timer for timer in app._timers if timer.name == "tick").pause()
        frames = recorded_frames(app)
        rows_shown: list[tuple[int, int | None]] = []  # (frames written before, count)
        show = app.queue_board.show

        def counting_show(queues: Any, *args: Any) -> None:
            show(queues, *args)
            count = next(q.waiting_tickets for q in queues if q.queue_id == "q-pass")
            rows_shown.append((len(frames), count))

        app.queue_board.show = counting_show  # type: ignore[method-assign, assignment]
        screen = app.screen
        resume = screen._update_timer.resume
        # The frames are held from now on, as a slow host's are late (waits without a pilot).
        monkeypatch.setattr(screen._update_timer, "resume", lambda: None)
        app.apply_update(call("t-c1", "C101", "q-civil", 1, clock.now))
        app.apply_update(waiting(states, "q-pass", 43))
        await until(lambda: any(row.label == "C101" for row in app.recent_calls.visible_rows))
        app.tick()  # the clock's tick, between the call's redraw and its frame
        assert rows_shown == [], "the rows were drawn before the call's frame"
        monkeypatch.setattr(screen._update_timer, "resume", resume)
        screen.refresh()
        await wait_for(pilot, lambda: 43 in [count for _, count in rows_shown])
        await pilot.pause()
        first = next(index for index, frame in enumerate(frames) if "C101" in frame)
        assert all(before > first for before, _ in rows_shown), (rows_shown, first)
        row = next(line for line in frames[-1].splitlines() if "Pass" in line)
        assert " 43 " in f" {row} "


@asynccontextmanager
async def counted_rows(
    locales: list[str] | None = None,
) -> AsyncIterator[tuple[LobbyApp, Pilot[Any], Clock, FakeSource, list[tuple[float, int | None]]]]:
    """A settled app whose clock's tick is held, and the moments its queue board was shown with
    the waiting count of "q-pass" (from now on)."""
    clock, source = Clock(at(10)), FakeSource()
    settings = make_settings(locales=locales or ["en_US"], rotation_seconds=10)
    app = LobbyApp(settings, source, clock=clock, board=make_board(settings, at(-600)))
    app.animation_level = "none"
    shown: list[tuple[float, int | None]] = []
    show = app.queue_board.show

    def counting_show(queues: Any, *args: Any) -> None:
        show(queues, *args)
        count = next(view.waiting_tickets for view in queues if view.queue_id == "q-pass")
        shown.append((time.monotonic(), count))

    async with app.run_test(size=(160, 45)) as pilot:
        await settled(app, pilot, source)
        next(timer for timer in app._timers if timer.name == "tick").pause()
        app.queue_board.show = counting_show  # type: ignore[method-assign, assignment]
        yield app, pilot, clock, source, shown


async def test_waiting_counts_in_a_rush_are_redrawn_at_most_once_a_second() -> None:
    """A waiting count that changes after a quiet spell is drawn at once (`QUEUES_REDRAW_DELAY`);
    the changes that follow within `QUEUES_REDRAW_PERIOD` (a second) wait, and come in one
    redraw of the queue board, with the latest count: in a rush the counts change many times a
    second, and each redraw of the board costs a small PC dearly. (The clock's tick is held,
    so that the rows' timer alone is seen.)"""
    async with counted_rows() as (app, pilot, _, source, shown):
        states = queue_states()
        await asyncio.sleep(QUEUES_REDRAW_PERIOD)  # a quiet spell
        source.push(waiting(states, "q-pass", 41))
        await wait_for(pilot, lambda: 41 in [count for _, count in shown])
        first_at = shown[-1][0]
        source.push(waiting(states, "q-pass", 42))
        await pilot.pause(0.4)
        source.push(waiting(states, "q-pass", 43))
        await settled(app, pilot, source)
        after = [(moment, count) for moment, count in shown if moment > first_at]
        assert [count for _, count in after] == [43]  # both changes in one redraw, the latest
        assert after[0][0] - first_at >= QUEUES_REDRAW_PERIOD - 0.02  # timers' granularity
        row = next(line for line in screen_lines(app) if "Pass" in line)  # the queue's row
        assert " 43 " in f" {row} "


async def test_waiting_counts_due_at_the_clocks_tick_wait_for_their_period() -> None:
    """The clock's tick draws the parts due, but not queue rows drawn less than
    `QUEUES_REDRAW_PERIOD` ago: they wait for their timer. Drawn by whichever redraw came
    (the tick, the rows held behind a call's frame), they came as often as those did."""
    async with counted_rows() as (app, pilot, _, source, shown):
        states = queue_states()
        source.push(waiting(states, "q-pass", 41))
        await wait_for(pilot, lambda: 41 in [count for _, count in shown])
        first_at = shown[-1][0]
        source.push(waiting(states, "q-pass", 42))  # waits for the period
        await wait_for(pilot, lambda: source._queue.empty())
        await pilot.pause(0.3)
        app.tick()
        await pilot.pause()
        assert shown[-1][1] == 41, "drawn by the tick"
        await settled(app, pilot, source)
        assert shown[-1][1] == 42
        assert shown[-1][0] - first_at >= QUEUES_REDRAW_PERIOD - 0.02  # timers' granularity


async def test_waiting_counts_after_a_rotation_wait_their_period_from_it() -> None:
    """A rotation draws the queue board whole, every row, whatever their period: the rows that
    change next wait for the period from then. The timer set before drew them straight after
    the rotation's board (a 24 ms frame the calls that came with the rotation waited for)."""
    async with counted_rows(["en_US", "fr_FR"]) as (app, pilot, clock, source, shown):
        states = queue_states()
        turn = app._rotation.next_turn(clock.now.timestamp())
        clock.advance(turn - clock.now.timestamp() - 3)  # too far to draw the turn ahead
        app.tick()
        await settled(app, pilot, source)
        source.push(waiting(states, "q-pass", 41))
        await wait_for(pilot, lambda: 41 in [count for _, count in shown])
        source.push(waiting(states, "q-pass", 42))  # its timer is set
        await wait_for(pilot, lambda: source._queue.empty())
        await pilot.pause(0.3)
        clock.advance(3)
        app.tick()  # the rotation: its queue board in the frame after the calls'
        await wait_for(pilot, lambda: app.queue_board._heading.startswith("Files"))
        await wait_for(pilot, lambda: shown[-1][1] == 42)
        turned_at = shown[-1][0]
        source.push(waiting(states, "q-pass", 43))
        await settled(app, pilot, source)
        assert shown[-1][1] == 43
        assert shown[-1][0] - turned_at >= QUEUES_REDRAW_PERIOD - 0.02  # timers' granularity
