"""Honest freshness: a calm "Connecting" screen before any data, then each part says when its
feed is reconnecting, is dimmed and dated when stale, and withdraws its numbers when too old;
the time alone moves a part from one state to the next."""

from __future__ import annotations

from lobby_display.app import LobbyApp
from lobby_display.updates import Feed, FeedHealth, FeedStatus
from lobby_display.views import Freshness
from lobby_display.widgets.panel import Panel
from tests.helpers.boards import (
    Clock,
    FakeSource,
    Recorder,
    at,
    board_app,
    counters,
    live,
    make_settings,
    queue_states,
    reference,
    screen_text,
    wait_for,
)


def freshness(panel: Panel) -> Freshness:
    """What `panel` shows now: read through a call, so that mypy does not keep the value an
    assert before an await narrowed it to."""
    return panel.freshness


async def test_before_any_data_the_screen_calmly_says_it_is_connecting() -> None:
    clock, source, recorder = Clock(), FakeSource(), Recorder()
    app = LobbyApp(make_settings(), source, clock=clock, hooks=recorder.hooks())
    async with app.run_test(size=(120, 34)) as pilot:
        await wait_for(pilot, lambda: recorder.ready == 1)
        text = screen_text(app)
        assert "Connecting to the service…" in text
        assert "Traceback" not in text
        assert not app.query_one("#main").display
        # The header is already up, with the date and the clock.
        assert "Tuesday, November 24, 2026" in text
        assert "14:05" in text

        # A failing connection is said below, in words; the middle stays calm.
        source.push(
            FeedHealth(Feed.TICKETS, FeedStatus.RECONNECTING, clock.now, attempt=2),
            FeedHealth(Feed.QUEUES, FeedStatus.RECONNECTING, clock.now, attempt=2),
            FeedHealth(Feed.COUNTERS, FeedStatus.RECONNECTING, clock.now, attempt=2),
        )
        await wait_for(pilot, lambda: "Reconnecting (attempt 2)" in screen_text(app))
        assert "Connecting to the service…" in screen_text(app)

        source.push(reference(), queue_states(), counters(), *(live(f, clock.now) for f in Feed))
        # Shown once drawn (the queues' rows may come a frame after the middle appears).
        await wait_for(
            pilot,
            lambda: app.query_one("#main").display and "Civil registry" in screen_text(app),
        )
        text = screen_text(app)
        assert "Connecting to the service…" not in text
        assert "Live" in text
        assert recorder.ready == 1, "READY=1 once, before any data"


async def test_a_reconnecting_part_says_so_then_dims_then_withdraws_its_numbers() -> None:
    clock = Clock()
    app = board_app(["en_US"], clock, stale_after_seconds=30, withdraw_after_seconds=300)
    async with app.run_test(size=(160, 45)) as pilot:
        await pilot.pause()
        board = app.queue_board
        assert freshness(board) is Freshness.LIVE
        assert "7 tickets" in screen_text(app)

        app.apply_update(FeedHealth(Feed.QUEUES, FeedStatus.RECONNECTING, clock.now, attempt=1))
        await pilot.pause()
        assert freshness(board) is Freshness.RECONNECTING
        assert board.note == "Reconnecting…"
        text = screen_text(app)
        assert "Reconnecting…" in text
        assert "Queues: Reconnecting (attempt 1)" in text
        assert "7 tickets" in text, "still shown while reconnecting"
        assert freshness(app.counters) is Freshness.LIVE, "the other parts are not affected"

        # Time alone makes it stale: dimmed and dated, numbers still there.
        clock.advance(29)
        app.tick()
        await pilot.pause()
        assert freshness(board) is Freshness.RECONNECTING
        clock.advance(1)
        app.tick()
        await pilot.pause()
        assert freshness(board) is Freshness.STALE
        assert board.has_class("-stale")
        assert board.styles.text_opacity < 1
        text = screen_text(app)
        assert "Out of date since 14:05" in text
        assert "Queues: Out of date since 14:05" in text
        assert "7 tickets" in text
        assert app.status_line.level == "error"

        # Then withdrawn: no number is shown any more.
        clock.advance(270)
        app.tick()
        await pilot.pause()
        assert freshness(board) is Freshness.WITHDRAWN
        text = screen_text(app)
        assert "Not available" in text
        assert "7 tickets" not in text
        assert "Out of date since 14:05" in text

        # Back live: everything returns at once.
        app.apply_update(live(Feed.QUEUES, clock.now))
        app.apply_update(queue_states())
        await pilot.pause()
        assert freshness(board) is Freshness.LIVE
        assert "7 tickets" in screen_text(app)
        assert "Not available" not in screen_text(app)


async def test_stale_calls_and_counters_are_marked_in_their_own_words() -> None:
    clock = Clock()
    app = board_app(["fr_FR"], clock, stale_after_seconds=30, withdraw_after_seconds=300)
    async with app.run_test(size=(160, 45)) as pilot:
        await pilot.pause()
        for feed in (Feed.TICKETS, Feed.COUNTERS):
            app.apply_update(FeedHealth(feed, FeedStatus.RECONNECTING, clock.now, attempt=3))
        clock.advance(45)
        app.tick()
        await pilot.pause()
        assert freshness(app.now_calling) is Freshness.STALE
        assert freshness(app.recent_calls) is Freshness.STALE
        assert freshness(app.counters) is Freshness.STALE
        assert freshness(app.queue_board) is Freshness.LIVE
        assert app.now_calling.note == "Non mis à jour depuis 14:05"
        text = screen_text(app)
        assert "Derniers appels\u00a0: Non mis à jour depuis 14:05" in text

        clock.advance(300)
        app.tick()
        await pilot.pause()
        text = screen_text(app)
        assert freshness(app.counters) is Freshness.WITHDRAWN
        assert "12\u202f480" not in text
        assert "Indisponible" in text


async def test_a_refused_key_is_said_plainly_on_the_status_line() -> None:
    clock = Clock()
    app = board_app(["en_US"], clock)
    async with app.run_test(size=(120, 34)) as pilot:
        await pilot.pause()
        for feed in Feed:
            app.apply_update(FeedHealth(feed, FeedStatus.REFUSED, at(1), error="401"))
        await pilot.pause()
        assert "The service refused our credentials" in screen_text(app)
        assert app.status_line.level == "error"
