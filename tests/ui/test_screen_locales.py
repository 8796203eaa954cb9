"""The locales take turns: every text and number of the screen switches together, dates and
times follow the place's time zone and the locale's ways (the Thai Buddhist era), names fall
back to the place's language."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
from rich.cells import cell_len
from textual.pilot import Pilot

from lobby_display import app as app_module
from lobby_display.app import LobbyApp
from lobby_display.graphics.terminal import Graphics
from lobby_display.models import Queue, keyed
from lobby_display.updates import ReferenceData
from lobby_display.widgets import queue_board as queue_board_module
from lobby_display.widgets.counters import CountersPanel
from lobby_display.widgets.recent_calls import RecentCallsPanel
from tests.helpers.boards import (
    Clock,
    Layouts,
    board_app,
    call,
    counters,
    make_board,
    make_settings,
    queue_states,
    reference,
    screen_lines,
    screen_text,
    terminal_output,
    wait_for,
    written,
)
from tests.helpers.redraw import recorded_frames, settled, until, waiting

FRENCH = (
    "mardi 24 novembre 2026",
    "Mairie du 3e arrondissement",
    "Appel en cours",
    "Veuillez vous présenter\u00a0: Guichet 3",
    "Derniers appels",
    "Files d'attente",
    "Ouvert",
    "En pause",
    "Complet aujourd'hui",
    "Passeports et cartes",
    "Compteurs",
    "Visiteurs aujourd'hui",
    "12\u202f480",
    "En direct",
)
ENGLISH = (
    "Tuesday, November 24, 2026",
    "Town Hall, 3rd District",
    "Now calling",
    "Please go to Desk 3",
    "Recent calls",
    "Queues",
    "Open",
    "Paused",
    "Full today",
    "Passports and ID",
    "Counters",
    "Visitors today",
    "12,480",
    "Live",
)


async def test_rotation_switches_every_text_and_number_together() -> None:
    clock = Clock()
    app = board_app(["fr_FR", "en_US"], clock, rotation_seconds=10)
    async with app.run_test(size=(160, 45)) as pilot:
        await pilot.pause()
        # The fixture's moment falls at the start of a French turn.
        assert app.shown_locale == "fr_FR"
        text = screen_text(app)
        assert [word for word in FRENCH if word not in text] == []
        assert [word for word in ENGLISH if word in text] == []

        clock.advance(9)
        app.tick()
        await pilot.pause()
        assert app.shown_locale == "fr_FR", "each locale stays its full turn"

        clock.advance(1)
        app.tick()
        await pilot.pause()
        assert app.shown_locale == "en_US"
        text = screen_text(app)
        assert [word for word in ENGLISH if word not in text] == []
        assert [word for word in FRENCH if word in text] == []

        clock.advance(10)
        app.tick()
        await pilot.pause()
        assert app.shown_locale == "fr_FR"
        assert "Appel en cours" in screen_text(app)


class ReleaseTurns:
    """Counts the app's looks after a written frame at what it held back for it (a rotation,
    a queue board): `_release_after_frame`."""

    def __init__(self, app: LobbyApp) -> None:
        self.count = 0
        release = app._release_after_frame

        def noted() -> None:
            self.count += 1
            release()

        app._release_after_frame = noted  # type: ignore[method-assign]


@asynccontextmanager
async def rotating(clock: Clock) -> AsyncIterator[tuple[LobbyApp, Pilot[Any]]]:
    """French and English taking turns every 10 s, run past the fixture's own changes (the
    highlights' end, a rotation whose queue board waits for the frame after its first),
    French on screen and nothing held back."""
    app = board_app(["fr_FR", "en_US"], clock, rotation_seconds=10)
    async with app.run_test(size=(160, 45)) as pilot:
        await pilot.pause()
        clock.advance(20)
        app.tick()
        await pilot.pause()
        await wait_for(pilot, lambda: app._held is None and not app._release_scheduled)
        await pilot.pause()
        yield app, pilot


async def test_a_rotation_draws_the_calls_first_and_the_queue_board_in_the_next_frame() -> None:
    """The queue board of a rotation is the costliest redraw: it waits one frame, so a call
    that comes with the rotation is not held back by it; then every text is in one locale."""
    clock = Clock()
    async with rotating(clock) as (app, pilot):
        assert app.queue_board.content is not None
        assert app.queue_board.content.heading == "Files d'attente"
        clock.advance(10)
        app.tick()  # the rotation's first frame: calls, header and status
        assert app.now_calling._heading == "Now calling"
        assert app.queue_board.content.heading == "Files d'attente"
        # The next frame (after a few turns of the loop for the network): the queue board.
        board = app.queue_board
        await wait_for(
            pilot, lambda: board.content is not None and board.content.heading == "Queues"
        )
        text = screen_text(app)
        assert [word for word in FRENCH if word in text] == []


async def test_a_call_during_a_rotation_is_drawn_before_the_queue_board_it_held() -> None:
    """A call that comes between a rotation's first frame and the queue board's goes first, in
    a redraw of its own (the queue board is the costliest part of a frame); the queue board
    follows in the redraw after it."""
    clock = Clock()
    redraws: list[tuple[str, ...]] = []
    async with rotating(clock) as (app, pilot):
        redraw = app._redraw

        def noted(dirty: Any, now: Any) -> None:
            redraw(dirty, now)
            parts = ("calls",) * dirty.calls + ("queues",) * dirty.queues
            redraws.append((*parts, *(row.label for row in app.recent_calls.visible_rows[:1])))

        app._redraw = noted  # type: ignore[method-assign]
        clock.advance(10)
        app.tick()  # the rotation's first frame: calls, header and status
        app.apply_update(call("t-r1", "R101", "q-civil", 2, clock.now))
        await wait_for(pilot, lambda: any("queues" in parts for parts in redraws))
        assert redraws[1] == ("calls", "R101"), redraws
        assert "queues" in redraws[2], redraws
        text = screen_text(app)
        assert "R101" in text
        assert [word for word in FRENCH if word in text] == []


async def test_a_call_drawn_before_the_held_queue_board_is_shown_in_a_frame_without_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """On a slow host the timers fire late: a call may be drawn after a rotation's first frame
    and the held queue board's turn come before the call's frame is made. The queue board then
    waits for the frame after the call's, or the call would wait for the whole board; so do
    the queue rows that changed with the call (redrawn, they would draw the whole board)."""
    monkeypatch.setattr(app_module, "NETWORK_TURN", 0.2)  # a wide window for the call
    monkeypatch.setattr(app_module, "HOLD_LIMIT", 30.0)
    clock = Clock()
    async with rotating(clock) as (app, pilot):
        screen = app.screen
        turns = ReleaseTurns(app)
        frames = recorded_frames(app)
        clock.advance(10)
        app.tick()  # the rotation's first frame: calls, header and status
        await pilot.pause()  # (a pilot's pause makes a frame)
        assert "Now calling" in frames[-1]
        # The frames are held from now on, as a slow host's are late (waits without a pilot).
        resume = screen._update_timer.resume
        monkeypatch.setattr(screen._update_timer, "resume", lambda: None)
        app.apply_update(call("t-r1", "R101", "q-civil", 2, clock.now))
        app.apply_update(waiting(queue_states(), "q-pass", 9))
        await until(lambda: any(row.label == "R101" for row in app.recent_calls.visible_rows))
        await until(lambda: turns.count >= 1 and app._queues_timer is None)  # both turns came
        assert app.queue_board.content is not None
        assert app.queue_board.content.heading == "Files d'attente"
        assert "R101" not in frames[-1]
        monkeypatch.setattr(screen._update_timer, "resume", resume)
        screen.refresh()
        await wait_for(pilot, lambda: "R101" in frames[-1])
        first = next(frame for frame in frames if "R101" in frame)
        assert "Files d'attente" in first, "the call's frame came first"
        board = app.queue_board
        await wait_for(
            pilot, lambda: board.content is not None and board.content.heading == "Queues"
        )
        await pilot.pause()
        text = frames[-1]
        assert "R101" in text
        assert [word for word in FRENCH if word in text] == []


async def test_queue_rows_due_while_a_queue_board_is_held_wait_with_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Queue rows a burst changed wait for the frame after their call's (`_redraw_later`). If
    they come due while a rotation's queue board is held behind a call, they wait with the
    board: redrawn then, they drew the whole board in the new locale into the call's frame
    (+40 ms for a call on issue 16's host)."""
    monkeypatch.setattr(app_module, "NETWORK_TURN", 0.2)
    monkeypatch.setattr(app_module, "HOLD_LIMIT", 30.0)
    clock = Clock()
    async with rotating(clock) as (app, pilot):
        screen = app.screen
        frames = recorded_frames(app)
        resume = screen._update_timer.resume
        # The frames are held from now on, as a slow host's are late (waits without a pilot).
        monkeypatch.setattr(screen._update_timer, "resume", lambda: None)
        clock.advance(10)
        app.tick()  # the rotation's first frame; its queue board held for the next
        app.apply_update(call("t-r1", "R101", "q-civil", 2, clock.now))
        await until(lambda: any(row.label == "R101" for row in app.recent_calls.visible_rows))
        board = app.queue_board
        assert board.content is not None and board.content.heading == "Files d'attente"
        app._rows_later += 1
        app._redraw_later(app_module._Dirty(queues=True))  # the burst's rows come due
        assert board.content.heading == "Files d'attente", "the rows drew the held board"
        monkeypatch.setattr(screen._update_timer, "resume", resume)
        screen.refresh()
        await wait_for(pilot, lambda: any("R101" in frame for frame in frames))
        first = next(frame for frame in frames if "R101" in frame)
        assert "Files d'attente" in first, "the call's frame came first"
        await wait_for(
            pilot, lambda: board.content is not None and board.content.heading == "Queues"
        )
        await pilot.pause()
        assert [word for word in FRENCH if word in frames[-1]] == []


async def test_garbage_is_collected_after_a_rotations_frames_not_inside_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A rotation makes thousands of objects in one frame, and the interpreter's collector ran
    inside it (10 to 30 ms on a small PC), so a call coming meanwhile waited for that too. Once
    settled, the screen collects in a quiet moment after a frame: never before the rotation's
    frames are written; when it stops, the interpreter collects again."""
    monkeypatch.setattr(app_module, "SETTLE_SECONDS", 0.01)
    clock = Clock()
    async with rotating(clock) as (app, _pilot):
        await until(lambda: not gc.isenabled())
        frames = recorded_frames(app)
        # What a collection interrupted: frames written, parts drawn and not shown yet, the
        # rotation's queue board held for its frame.
        collections: list[tuple[int, bool, bool]] = []

        def noted(phase: str, info: dict[str, int]) -> None:
            if phase == "start":
                drawn = app._frames == app._drawn_after
                collections.append((len(frames), drawn, app._later_pending))

        gc.callbacks.append(noted)
        try:
            # Young objects past the interpreter's threshold: a collection is due.
            young: list[list[int]] = [[] for _ in range(3 * gc.get_threshold()[0])]
            clock.advance(10)
            app.tick()  # the rotation: calls, header and status, then the queue board
            board = app.queue_board
            await until(lambda: board.content is not None and board.content.heading == "Queues")
            await until(lambda: bool(collections))
        finally:
            gc.callbacks.remove(noted)
        assert len(young) > gc.get_count()[0], "the screen collected the young generation"
        assert all(written >= 2 for written, _, _ in collections), collections
        assert not any(drawn or held for _, drawn, held in collections), collections
    assert gc.isenabled(), "the interpreter's collector is back when the screen stops"


async def test_a_call_just_before_a_rotation_is_shown_in_its_locale_a_frame_before_it() -> None:
    """A rotation redraws every text of the screen: a call waiting to be drawn goes first, in
    the locale it came in, and the rotation follows in the frame after its."""
    clock = Clock()
    async with rotating(clock) as (app, pilot):
        frames = recorded_frames(app)
        app.apply_update(call("t-r1", "R101", "q-civil", 2, clock.now))
        clock.advance(10)
        app.tick()
        assert app.shown_locale == "fr_FR", "the rotation waits for the call's frame"
        await wait_for(pilot, lambda: bool(frames) and "Now calling" in frames[-1])
        await settled(app, pilot)
        first = next(frame for frame in frames if "R101" in frame)
        assert "Derniers appels" in first
        assert app.shown_locale == "en_US"
        text = screen_text(app)
        assert "R101" in text
        assert [word for word in FRENCH if word in text] == []


@pytest.mark.parametrize(
    ("hold_limit", "locale"),
    [(30.0, "fr_FR"), (0.05, "en_US")],
    ids=["waits-for-the-second-call", "not-past-the-hold-limit"],
)
async def test_a_call_drawn_after_the_frame_a_rotation_waited_for_goes_first_too(
    monkeypatch: pytest.MonkeyPatch, hold_limit: float, locale: str
) -> None:
    """On a slow host the timers fire late: after the frame of the call a rotation waited for,
    a second call may be drawn before the rotation's turn comes. The rotation waits for that
    call's frame too (it joined it, +40 ms for the call on issue 16's host), but no longer
    than `HOLD_LIMIT` after it was due: calls that never stop must not keep it away. Its
    turns after each frame do not run the whole once-a-second tick (the watchdog, the board's
    save and every part due: the queue rows were drawn at each frame of a long hold)."""
    monkeypatch.setattr(app_module, "NETWORK_TURN", 0.2)  # a wide window for the second call
    monkeypatch.setattr(app_module, "HOLD_LIMIT", hold_limit)
    clock = Clock()
    async with rotating(clock) as (app, pilot):
        screen = app.screen
        turns = ReleaseTurns(app)
        frames = recorded_frames(app)
        app.apply_update(call("t-r1", "R101", "q-civil", 2, clock.now))
        clock.advance(10)
        app.tick()
        assert app.shown_locale == "fr_FR", "the rotation waits for the call's frame"
        # Only the ticks the rotation's turns run are counted: the app's own, once a second,
        # may come at any moment of the test.
        next(timer for timer in app._timers if timer.name == "tick").pause()
        ticks = 0
        hook = app._call_hook

        def counted(name: str, *args: Any) -> None:
            nonlocal ticks
            ticks += name == "tick"
            hook(name, *args)

        app._call_hook = counted  # type: ignore[method-assign]
        await until(lambda: any("R101" in frame for frame in frames))
        # The frames are held from now on, as a slow host's are late (waits without a pilot).
        resume = screen._update_timer.resume
        monkeypatch.setattr(screen._update_timer, "resume", lambda: None)
        await asyncio.sleep(hold_limit if hold_limit < 1 else 0)
        app.apply_update(call("t-r2", "R102", "q-pass", 4, clock.now))
        await until(lambda: any(row.label == "R102" for row in app.recent_calls.visible_rows))
        await until(lambda: turns.count >= 1)
        assert app.shown_locale == locale
        assert ticks == 0
        monkeypatch.setattr(screen._update_timer, "resume", resume)
        screen.refresh()
        await wait_for(pilot, lambda: any("R102" in frame for frame in frames))
        first = next(frame for frame in frames if "R102" in frame)
        assert ("Derniers appels" in first) is (locale == "fr_FR"), "R102 in its own frame"
        await wait_for(pilot, lambda: app.shown_locale == "en_US")
        await settled(app, pilot)
        text = screen_text(app)
        assert "R102" in text
        assert [word for word in FRENCH if word in text] == []


async def test_the_next_locales_queue_rows_are_drawn_before_its_turn(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A rotation words every queue's numbers and times in the new locale and draws every line
    of the queue board again, the costliest part of its frames: the screen words and draws
    them half a second before the turn, and the turn shows them as drawn then. A queue that
    changed since is worded and drawn again by the rows' next redraw, as between turns."""
    clock = Clock()
    async with rotating(clock) as (app, pilot):
        worded: list[tuple[str, str]] = []
        english: dict[str, set[str]] = {}
        word = queue_board_module.queue_rows

        def noted(queue: Any, shown: Any) -> Any:
            rows = word(queue, shown)
            worded.append((queue.queue_id, shown.text.locale))
            english.setdefault(queue.queue_id, set()).update(row.name for row in rows)
            return rows

        drawn: list[str | None] = []
        draw = queue_board_module.QueueBoard._draw_row

        def drew(board: Any, row: Any, arranged: Any) -> Any:
            drawn.append(None if row is None else row.name)
            return draw(board, row, arranged)

        monkeypatch.setattr(queue_board_module, "queue_rows", noted)
        monkeypatch.setattr(queue_board_module.QueueBoard, "_draw_row", drew)
        queues = {queue.queue_id for queue in app.board.queues()}
        clock.advance(9.6)
        app.tick()  # the turn is 0.4 s away
        await until(lambda: len(worded) == len(queues))
        assert set(worded) == {(queue, "en_US") for queue in queues}
        # Drawn a few rows a turn of the loop (`ROWS_AHEAD_PER_TURN`).
        await until(lambda: len(drawn) > len(queues))
        assert None in drawn, "the English headings drawn ahead"
        assert app.shown_locale == "fr_FR"
        worded.clear()
        app.apply_update(waiting(queue_states(), "q-pass", 9))  # a queue changes meanwhile
        await until(lambda: bool(worded))  # its row redrawn in French
        await pilot.pause()
        drawn.clear()
        clock.advance(0.4)
        app.tick()
        board = app.queue_board
        await wait_for(
            pilot, lambda: board.content is not None and board.content.heading == "Queues"
        )
        assert drawn == [], "nothing drawn in the turn's frame"
        assert set(worded) == {("q-pass", "fr_FR")}, "nothing worded for it"
        text = screen_text(app)
        assert [word for word in FRENCH if word in text] == []
        assert "Passports and ID" in text

        def passports() -> str:
            return next(row.waiting for row in board.visible_rows if row.name.startswith("Pass"))

        assert not passports().startswith("9 "), "the count drawn ahead, a moment old"
        # The queue that changed, with the rows' next redraw.
        await wait_for(pilot, lambda: ("q-pass", "en_US") in worded)
        await settled(app, pilot)
        assert set(worded) == {("q-pass", "fr_FR"), ("q-pass", "en_US")}
        assert drawn, "the queue that changed drawn again"
        assert set(drawn) <= english["q-pass"], drawn
        assert passports().startswith("9 "), passports()


async def test_the_next_locales_recent_calls_are_drawn_before_its_turn(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A rotation draws every line of the recent calls again, in the new locale: the screen
    draws them half a second before the turn, and the rotation draws only the lines that a
    call made since changed (the new call, and the one before it, no longer the latest)."""
    clock = Clock()
    async with rotating(clock) as (app, pilot):
        panel = app.recent_calls
        drawn: list[tuple[str | None, tuple[str, str, str]]] = []
        draw = RecentCallsPanel.draw_row

        def drew(panel: RecentCallsPanel, row: Any, layout: Any) -> Any:
            drawn.append((None if row.call is None else row.call.label, layout.headings))
            return draw(panel, row, layout)

        monkeypatch.setattr(RecentCallsPanel, "draw_row", drew)
        listed = [row.label for row in panel.visible_rows]
        assert listed
        clock.advance(9.6)
        app.tick()  # the turn is 0.4 s away
        await until(lambda: len(drawn) == len(listed) + 1)
        assert app.shown_locale == "fr_FR"
        assert [label for label, _ in drawn] == [None, *listed], "headings and every call"
        english = {headings for _, headings in drawn}
        assert panel.content is not None
        assert len(english) == 1 and english != {panel.content.headings}
        drawn.clear()
        app.apply_update(call("t-z001", "Z001", "q-pass", 2, clock.now))  # a call meanwhile
        await wait_for(pilot, lambda: panel.visible_rows[0].label == "Z001")
        drawn.clear()
        clock.advance(0.4)
        app.tick()
        await wait_for(
            pilot, lambda: panel.content is not None and {panel.content.headings} == english
        )
        await pilot.pause()
        assert sorted(label or "" for label, _ in drawn) == sorted(["Z001", listed[0]])
        assert "Z001" in screen_text(app)


async def test_a_turn_with_nothing_changed_since_it_was_drawn_ahead_is_not_redrawn() -> None:
    """The rows' next redraw after a turn brings the queues and counters that changed since
    they were drawn ahead; when none did (a call alone came), there is no such redraw: each
    page turn of a quiet screen would cost one more."""
    clock = Clock()
    async with rotating(clock) as (app, pilot):
        board = app.queue_board
        locales: list[str] = []
        show = board.show

        def noted(queues: Any, health: Any, shown: Any) -> None:
            show(queues, health, shown)
            locales.append(shown.locale)

        board.show = noted  # type: ignore[method-assign]
        clock.advance(9.6)
        app.tick()  # the turn is 0.4 s away: drawn ahead
        await until(lambda: app._turn_ahead is not None)
        app.apply_update(call("t-z001", "Z001", "q-civil", 2, clock.now))  # no count changes
        await wait_for(pilot, lambda: "Z001" in screen_text(app))
        await settled(app, pilot)
        locales.clear()
        clock.advance(0.4)
        app.tick()
        await wait_for(pilot, lambda: locales == ["en_US"])
        await settled(app, pilot)
        await asyncio.sleep(app_module.QUEUES_REDRAW_PERIOD)
        await settled(app, pilot)
        assert locales == ["en_US"], "the board redrawn after its turn"


async def test_the_next_locales_counters_are_drawn_before_its_turn(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each line of the counters is a table Rich measures: drawn in the new locale in the
    rotation's frame, they held back the calls that came then. The screen draws them half a
    second before the turn, the turn shows them as drawn, and a value that changed since
    follows with the rows' next redraw."""
    clock = Clock()
    async with rotating(clock) as (app, pilot):
        panel = app.counters
        drawn: list[str] = []
        draw = CountersPanel.draw_row

        def drew(panel: CountersPanel, row: Any, layout: Any) -> Any:
            drawn.extend(pair.value for pair in row if pair is not None)
            return draw(panel, row, layout)

        monkeypatch.setattr(CountersPanel, "draw_row", drew)
        clock.advance(9.6)
        app.tick()  # the turn is 0.4 s away
        await until(lambda: "12,480" in drawn)
        assert app.shown_locale == "fr_FR"
        assert "12\u202f480" in screen_text(app)
        app.apply_update(counters({"c-visitors": 129, "c-served": 97, "c-year": 12481}))
        await wait_for(pilot, lambda: "12\u202f481" in screen_text(app))
        drawn.clear()
        clock.advance(0.4)
        app.tick()
        await wait_for(pilot, lambda: panel._heading == "Counters")
        assert drawn == [], "nothing drawn in the turn's frame"
        assert "12,480" in screen_text(app), "the values drawn ahead, a moment old"
        await wait_for(pilot, lambda: "12,481" in screen_text(app))
        await settled(app, pilot)
        assert "12,481" in drawn
        assert [word for word in FRENCH if word in screen_text(app)] == []


async def test_a_rotation_redraws_the_screen_without_laying_it_out() -> None:
    """A rotation changes every text, not the layout: laying the screen out again redraws
    every widget (tens of milliseconds on a small PC, at every rotation). The connecting
    notice, hidden once data came, kept taking each locale's sentence and laid it out."""
    clock = Clock()
    async with rotating(clock) as (app, pilot):
        layouts = Layouts(app)
        headings = []
        for _ in range(4):
            clock.advance(10)
            app.tick()
            await pilot.pause()
            await pilot.pause()
            headings.append(app.now_calling._heading)
        assert headings == ["Now calling", "Appel en cours"] * 2
        assert layouts.count == 0


async def test_a_rotation_sends_the_words_again_not_the_pictures_of_the_calls() -> None:
    """A rotation changes the words around the calls, not the labels: a heading set in a
    panel's border drew the whole panel again, and every card's picture went to the terminal
    again at each rotation (a third of the rotation's first frame on a small PC)."""
    clock = Clock()
    settings = make_settings(locales=["fr_FR", "en_US"], rotation_seconds=10)
    board = make_board(settings, clock.now)
    sixel = Graphics(sixel=True, cell=(18, 36))
    app = LobbyApp(settings, clock=clock, board=board, graphics=sixel)
    app.animation_level = "none"
    async with app.run_test(size=(160, 45)) as pilot:
        await pilot.pause()
        clock.advance(20)
        app.tick()
        await settled(app, pilot)
        cards = app.now_calling.shown_cards
        assert cards and all(card.big.shows_image for card in cards)
        frames: list[str] = []
        display = app._display

        def recorded(screen: Any, update: Any) -> None:
            display(screen, update)
            if update is not None:
                frames.append(written(app, update))

        app._display = recorded  # type: ignore[method-assign,assignment]
        for heading, words in (("Now calling", "Please go to"), ("Appel en cours", "Veuillez")):
            clock.advance(10)
            app.tick()
            await settled(app, pilot)
            assert any(heading in line for line in screen_lines(app)), "in the panel's border"
            assert words in screen_text(app)
        output = "".join(frames)
        assert "Please go to" in output and "Veuillez" in output, "the cards' words are sent"
        assert "\x1bP" not in output, "the pictures (sixel, a device control string) are not"


async def test_thai_dates_are_in_the_buddhist_era_and_thai_names_are_shown() -> None:
    app = board_app(["th_TH"])
    async with app.run_test(size=(160, 45)) as pilot:
        await pilot.pause()
        text = screen_text(app)
        assert "พ.ศ. 2569" in text
        assert "2026" not in text
        assert "ส\u0e4d\u0e32นักงานเขต 3" in text  # SARA AM decomposed, see the next test
        assert "ทะเบียนราษฎร" in text


@pytest.mark.parametrize("size", [(160, 45), (80, 24)])
async def test_thai_sara_am_is_written_decomposed_so_foot_draws_it(size: tuple[int, int]) -> None:
    # foot with Tlwg Mono draws U+0E33 as a mark over the letter before it and an empty cell
    # ("กำลัง" reads "ก ลัง"); U+0E4D U+0E32 is drawn right in the same width.
    app = board_app(["th_TH"])
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        lines = screen_lines(app)
        assert [line for line in lines if "\u0e33" in line] == []
        assert "\u0e33" not in terminal_output(app)
        text = "\n".join(lines)
        assert "ก\u0e4d\u0e32ลังเรียกคิว" in text  # the heading, from the catalog
        assert "ก\u0e4d\u0e32ลังรอ" in text  # a column heading
        assert "ส\u0e4d\u0e32นักงานเขต 3" in text  # the place, from the service
        assert "ใบอนุญาตพ\u0e4d\u0e32นัก" in text  # a queue
        assert "ยื่นค\u0e4d\u0e32ขอใหม่" in text  # an appointment type
        # Rich and the terminal count the same cells: every line is exactly the screen's width.
        assert {cell_len(line) for line in lines} == {size[0]}


async def test_a_name_missing_in_the_shown_locale_falls_back_to_the_place_language() -> None:
    clock = Clock()
    settings = make_settings(locales=["de_DE"])
    board = make_board(settings, clock.now)
    names = ReferenceData(
        place=reference().place,
        queues=keyed(
            Queue,
            {
                "q-pass": {"name": {"en_US": "Passports", "fr_FR": "Passeports"}},
                "q-social": {"name": {"en_US": "Social services"}},
            },
            "queue_id",
        ),
    )
    app = board_app(["de_DE"], clock, board=board)
    async with app.run_test(size=(160, 45)) as pilot:
        app.apply_update(names)
        await pilot.pause()
        text = screen_text(app)
        # No German name: the place's language (French) first, then the other locales.
        assert "Passeports" in text
        assert "Passports" not in text
        assert "Social services" in text
        assert "Warteschlangen" in text
