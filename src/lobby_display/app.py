"""The Textual application: the kiosk screen that shows the board, fed by a source of updates.

`LobbyApp` takes a source (an async function calling `emit(update)`: the feeds, from
`source.py`), applies each update to the board and redraws only what changed; a one-second tick
keeps the clock, the locale rotation and the freshness true. It knows no HTTP and no process.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import io
import logging
import math
import os
import threading
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta, tzinfo
from functools import partial
from pathlib import Path
from typing import Any, ClassVar, Final
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from rich.console import Console, RenderableType
from textual.app import App, AutopilotCallbackType, ComposeResult
from textual.binding import Binding, BindingType
from textual.driver import Driver
from textual.drivers.linux_driver import LinuxDriver
from textual.screen import Screen
from textual.theme import Theme
from textual.timer import Timer

from lobby_display import strings
from lobby_display.backoff import FIRST_DELAY, MAX_DELAY, Backoff
from lobby_display.board import Board, BoardSettings, Changes
from lobby_display.collection import QuietCollector
from lobby_display.config import DisplaySettings, Settings
from lobby_display.frames import BusyClock, FramePacer
from lobby_display.graphics.pictures import PictureMaker, two_cores
from lobby_display.graphics.raster import CJK_FACES
from lobby_display.graphics.terminal import Graphics, TerminalAnswers, choose
from lobby_display.i18n import LocaleRotation, LocaleText
from lobby_display.kiosk_driver import KioskDriver
from lobby_display.models import LOCALES
from lobby_display.redaction import redact
from lobby_display.updates import Call, Clock, FeedHealth, ReferenceData, Update, utc_now
from lobby_display.views import PART_FEED, CounterView, Part, QueueView
from lobby_display.widgets.background import keep_background_colors
from lobby_display.widgets.big_label import for_screenshot
from lobby_display.widgets.connecting import ConnectingNotice
from lobby_display.widgets.counters import CountersPanel
from lobby_display.widgets.header import HeaderBar
from lobby_display.widgets.now_calling import NowCallingPanel
from lobby_display.widgets.panel import Shown
from lobby_display.widgets.queue_board import QueueBoard
from lobby_display.widgets.recent_calls import RecentCallsPanel
from lobby_display.widgets.repaint import RepaintedHorizontal, RepaintedVertical
from lobby_display.widgets.status_line import StatusLine

log = logging.getLogger(__name__)

#: What the app runs to receive updates: `await source(emit)`, forever.
Source = Callable[[Callable[[Update], None]], Awaitable[None]]

#: The id of the quit binding, whose key is `display.quit_key`.
QUIT_BINDING: Final = "lobby-display.quit"
#: The `banner` that says, in the locale on screen, that the data is simulated.
DEMO_BANNER: Final = "demo"
#: What the screen's standard error gets when the screen stops on an unexpected error.
FATAL_MESSAGE: Final = (
    "lobby-display: the screen stopped on an unexpected error; the details are in the log "
    "(journalctl -t lobby-display, or the configured log file)."
)
#: Screens at least this many cells wide put the calls beside the queues; narrower ones stack.
WIDE_FROM: Final = 110
#: Screens at least this many lines high get a roomier header (the TV's 30 lines go to the calls
#: and the queues).
TALL_FROM: Final = 40
#: Queue rows and counters, the dearest parts to draw, are redrawn this long after they change
#: (what one event changes on the three feeds then shares a frame), and at most once per
#: period during a burst. Calls, the header and the status line are drawn at once. A count a
#: second old is as good to a visitor as a live one; redrawn four times a second, the board
#: took a sixth of a small PC's CPU at 100 events/s (issue 16's host, interleaved runs: the
#: display 85 -> 68 % of a core, the calls' p99 109 -> 70 ms; docs/benchmarks.md, ninth round).
QUEUES_REDRAW_DELAY: Final = 0.05
QUEUES_REDRAW_PERIOD: Final = 1.0
#: How long the parts a rotation held back wait after its frame: a few turns of the loop, so a
#: call the network brought meanwhile is read first and drawn before them (on issue 16's host,
#: the latest call coinciding with a rotation came +68 ms after the others' p99 without the
#: wait, +36 ms with it: medians of three interleaved runs).
NETWORK_TURN: Final = 0.003
#: The longest a whole queue board is held behind the calls' frames: a call whose redraw
#: changed nothing on screen makes no frame to wait for.
HOLD_LIMIT: Final = 0.25
#: How often the screen brings itself up to the moment (`LobbyApp.tick`), in seconds.
TICK_SECONDS: Final = 1.0
#: How long before a locale's turn the queue rows and recent calls are worded and drawn in it
#: (`_prepare_turn`): close enough that little changes meanwhile, and not in the rotation's own
#: redraw.
PREPARE_AHEAD: Final = 0.5
#: This long after the first data, what start-up made (modules, widgets, the first board) is
#: set aside from garbage collection (`gc.freeze`): Python's full collections then look at what
#: is made later only, pauses of 5 to 15 ms instead of 40 to 100 ms in the middle of a burst.
#: From then on the screen runs the collections itself, after a frame (`QuietCollector`).
SETTLE_SECONDS: Final = 5.0

#: The screen's themes, by the name `display.theme` gives.
THEMES: Final[Mapping[str, Theme]] = {
    # Calm and legible from across a room: light text on a dark blue-grey, amber highlights.
    "dark": Theme(
        name="lobby-dark",
        primary="#5AA9E6",
        secondary="#8FB3D9",
        accent="#FFD166",
        warning="#FFB020",
        error="#E5484D",
        success="#5FD38D",
        foreground="#F2F4F5",
        background="#0E1419",
        surface="#141C23",
        panel="#1E2A35",
        dark=True,
    ),
    # Pure black and white, yellow for what matters: for low vision and bright rooms.
    "high-contrast": Theme(
        name="lobby-high-contrast",
        primary="#FFFFFF",
        secondary="#FFFFFF",
        accent="#FFFF00",
        warning="#FFFF00",
        error="#FF3030",
        success="#00FF00",
        foreground="#FFFFFF",
        background="#000000",
        surface="#000000",
        panel="#000000",
        dark=True,
        text_alpha=1.0,
    ),
    # The 16 colours of the Linux text console (the VGA palette), so nothing is approximated.
    "console": Theme(
        name="lobby-console",
        primary="#55FFFF",
        secondary="#AAAAAA",
        accent="#FFFF55",
        warning="#FFFF55",
        error="#AA0000",
        success="#55FF55",
        foreground="#FFFFFF",
        background="#000000",
        surface="#000000",
        panel="#0000AA",
        dark=True,
        text_alpha=1.0,
    ),
}


def machine_timezone() -> tzinfo:
    """The machine's time zone: `$TZ`, else `/etc/timezone`, else `/etc/localtime`'s link."""
    names = [os.environ.get("TZ", "").lstrip(":")]
    with contextlib.suppress(OSError):
        names.append(Path("/etc/timezone").read_text(encoding="utf-8").strip())
    try:
        target = os.readlink("/etc/localtime")
        if "zoneinfo/" in target:
            names.append(target.split("zoneinfo/", 1)[1])
    except OSError:
        pass
    for name in names:
        if name:
            try:
                return ZoneInfo(name)
            except (ZoneInfoNotFoundError, ValueError):
                continue
    local = datetime.now().astimezone().tzinfo
    return local if local is not None else UTC


def locale_of_language(language: str) -> str:
    """The screen locale a place's language names ("fr", "fr-FR" -> "fr_FR"; "" if none)."""
    code = language.strip().replace("-", "_")
    if code in LOCALES:
        return code
    prefix = code.split("_", 1)[0].lower()
    return next((locale for locale in LOCALES if prefix and locale.startswith(prefix + "_")), "")


@dataclass(frozen=True, slots=True)
class AppHooks:
    """What the rest of the program wants to hear from the screen (every hook optional).

    Hooks run on the UI's event loop and must return quickly; an exception in a hook is logged
    and never reaches the screen.
    """

    started: Callable[[LobbyApp], object] | None = None
    """Once, when the screen is mounted, before its first frame (the kiosk takes the process's
    signals: `exit()` and `reload_settings()` are what it calls back)."""
    stopped: Callable[[LobbyApp], object] | None = None
    """Once, when the screen is unmounted (the kiosk gives the signals back)."""
    ready: Callable[[], object] | None = None
    """Once, when the first screen is drawn (systemd `READY=1`: before any network data)."""
    tick: Callable[[LobbyApp], object] | None = None
    """Every second, from the UI's event loop (systemd `WATCHDOG=1`, saving the board)."""
    calls: Callable[[list[Call]], object] | None = None
    """New calls and recalls to announce, in the order they happened."""
    health: Callable[[Board, datetime], object] | None = None
    """A feed's health changed (systemd `STATUS=`)."""


@dataclass(slots=True)
class _TurnAhead:
    """The queue rows and counters of a turn (a locale's, a page's), worded and drawn ahead of
    it (`LobbyApp._prepare_turn`)."""

    locale: str
    page_slot: int
    queues: tuple[QueueView, ...]
    counters: tuple[CounterView, ...] | None
    """None when the counters were not drawn ahead (a page turn in the same locale)."""
    changed: bool = False
    """A queue or a counter changed since (the rows' next redraw after the turn brings it)."""


@dataclass(slots=True)
class _Dirty:
    """The parts of the screen to redraw at the next flush."""

    header: bool = False
    calls: bool = False
    queues: bool = False
    counters: bool = False
    status: bool = False
    at_once: bool = False
    """Draw every dirty part at once: the whole screen changes, or a part's freshness does."""
    whole: bool = False
    """The queue board changes whole (a locale rotation, a page turn): the dearest redraw."""

    def everything(self, at_once: bool = True) -> None:
        self.header = self.calls = self.queues = self.counters = self.status = True
        self.whole = True
        self.at_once = self.at_once or at_once

    def join(self, parts: _Dirty) -> None:
        """Add the queue rows and counters of `parts` (held for a later frame) to these."""
        self.queues |= parts.queues
        self.counters |= parts.counters
        self.whole |= parts.whole

    def later_parts(self, call_unshown: bool = False) -> _Dirty:
        """Take the queue rows and counters out of a redraw that holds other parts too, or
        that would draw them before the frame of a call already drawn (`call_unshown`: the
        clock's tick or the rows' timer coming between a call's redraw and its frame), see
        `LobbyApp._redraw_pending`; what is taken, as a redraw of its own."""
        behind_call = call_unshown and (self.queues or self.counters)
        if self.at_once or not (self.urgent or behind_call):
            return _Dirty()
        later = _Dirty(queues=self.queues, counters=self.counters, whole=self.whole)
        self.queues = self.counters = self.whole = False
        return later

    def add(self, changes: Changes) -> None:
        if changes.calls or changes.new_calls:
            self.calls = True
        if changes.queues or changes.layout:
            self.queues = True
        if changes.counters or changes.layout:
            self.counters = True
        if changes.reference:
            self.everything()
        if changes.health:
            self.status = self.at_once = True
            for part, feed in PART_FEED.items():
                if feed in changes.health:
                    self._part(part)

    def _part(self, part: Part) -> None:
        if part is Part.CALLS:
            self.calls = True
        elif part is Part.QUEUES:
            self.queues = True
        else:
            self.counters = True

    def __bool__(self) -> bool:
        return self.header or self.calls or self.queues or self.counters or self.status

    @property
    def urgent(self) -> bool:
        """Calls, the header or the status line: drawn in the next frame the pacer allows, and
        pacing the frames (queue rows and counters wait for their timer)."""
        return self.header or self.calls or self.status


def board_has_data(board: Board, now: datetime) -> bool:
    """True when `board` has anything to show (names, rows, calls, or a restored state)."""
    if board.place_names() or board.queues() or board.counters() or board.recent_calls():
        return True
    return any(view.restored for view in board.health(now).values())


class LobbyApp(App[None], inherit_bindings=False):
    """The queue board on a waiting-room TV.

    `settings` are the screen's configuration; `source` feeds it updates (None: the board
    stays as given); `hooks` tell the rest of the program what happens; `clock` gives the
    moment (tests fix it); `board` is a board to start from (a restored one, a test's).
    `banner` is shown at the right of the status line; `DEMO_BANNER` shows "Demonstration:
    simulated data" in the locale on screen.
    """

    CSS_PATH = "app.tcss"
    TITLE = "lobby-display"
    ENABLE_COMMAND_PALETTE = False
    # Textual's defaults (ctrl+q quits, ctrl+c explains how to quit) are not inherited: the only
    # key that does anything is the configured quit chord (its key is set from the settings).
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+q", "quit", "Quit", show=False, priority=True, id=QUIT_BINDING),
    ]
    # Textual declares the breakpoints without ClassVar: a ClassVar here would not type-check.
    HORIZONTAL_BREAKPOINTS = [  # noqa: RUF012
        (0, "-narrow"),
        (WIDE_FROM, "-wide"),
    ]
    VERTICAL_BREAKPOINTS = [  # noqa: RUF012
        (0, "-short"),
        (TALL_FROM, "-tall"),
    ]

    def __init__(
        self,
        settings: Settings,
        source: Source | None = None,
        *,
        hooks: AppHooks | None = None,
        clock: Clock = utc_now,
        board: Board | None = None,
        banner: str = "",
        restart_delays: tuple[float, float] = (FIRST_DELAY, MAX_DELAY),
        graphics: Graphics | None = None,
    ) -> None:
        super().__init__()
        keep_background_colors()  # asked for by every widget of every frame
        self.settings = settings
        self.hooks = hooks if hooks is not None else AppHooks()
        self.banner = banner
        self._source = source
        self._clock = clock
        self._restart_delays = restart_delays
        now = clock()
        self.board = (
            board
            if board is not None
            else Board(BoardSettings.from_settings(settings), started_at=now)
        )
        self._has_data = board_has_data(self.board, now)
        # A board restored from disk knows the place: its clock is right from the first frame.
        place = self.board.place
        self._place_timezone = place.timezone if place is not None else ""
        self._place_locale = locale_of_language(place.language) if place is not None else ""
        self._rotation = LocaleRotation(["en_US"], 60)
        self._texts: dict[str, LocaleText] = {}
        self._quit_key = ""
        self._locale = ""
        self._minute: tuple[int, int, int, int, int] | None = None
        self._page_slot = -1
        self._page_origin: int | None = None
        self._next_change: datetime | None = None
        self._next_freshness: datetime | None = None
        self._dirty = _Dirty()
        self._flush_scheduled = False
        self._pacer = FramePacer()
        self._busy_clock = BusyClock()
        """The UI thread's busy clock, for the pacer (read first in a redraw, on that thread)."""
        self._queues_timer: Timer | None = None
        self._held: _Dirty | None = None
        """A whole queue board held for the frame after the calls' (see `_hold`)."""
        self._rows_later = 0
        """Redraws of queue rows held for the next frame, not made yet (`_redraw_later`)."""
        self._release_scheduled = False
        self._rotation_held = False
        """A rotation due waits for the frame of a call (see `tick`)."""
        self._rotation_due_by = -math.inf
        """When a held rotation goes whatever calls wait (`HOLD_LIMIT` after it was due)."""
        self._hold_timer: Timer | None = None
        self._prepared_turn = -math.inf
        """The locale turn whose queue rows and recent calls are drawn ahead of it
        (`_prepare_turn`)."""
        self._turn_ahead: _TurnAhead | None = None
        """What the next turn's queue rows and counters were drawn with (`_prepare_turn`)."""
        self._collector = QuietCollector()
        self._collect_scheduled = False
        self._frames = 0
        """Frames written to the terminal so far."""
        self._calls_drawn_after = -1
        """How many frames were written when the calls were last drawn."""
        self._drawn_after = -1
        """How many frames were written at the last redraw (of any part)."""
        self._joined_after = -1
        """How many frames were written when a call last joined a call's frame (`_joins`)."""
        self._queues_drawn_at = -math.inf
        self._thread_id = threading.get_ident()
        self._ready_sent = False
        self._mounted = False
        self._settled = False
        for theme in THEMES.values():
            self.register_theme(theme)
        self._configure(settings.display)
        # The parts of the screen, created here so the app can reach them without queries.
        self.header = HeaderBar(id="header")
        self.connecting = ConnectingNotice(id="connecting")
        self.now_calling = NowCallingPanel(id="now-calling")
        self.now_calling.set_graphics(self._label_graphics(settings.display, graphics))
        self.pictures = PictureMaker() if two_cores() else None
        """Makes a called ticket's picture on the other core while its frame is laid out
        (started at the first picture; None on one core)."""
        self.now_calling.set_picture_maker(self.pictures)
        self.recent_calls = RecentCallsPanel(
            capacity=settings.display.recent_calls, id="recent-calls"
        )
        self.queue_board = QueueBoard(id="queues")
        self.counters = CountersPanel(id="counters")
        self.status_line = StatusLine(id="status")

    # --- the screen ----------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield self.header
        yield self.connecting
        with RepaintedHorizontal(id="main"):
            with RepaintedVertical(id="calls"):
                yield self.now_calling
                with RepaintedVertical(id="side"):
                    yield self.recent_calls
                    yield self.counters
            with RepaintedVertical(id="info"):
                yield self.queue_board
        yield self.status_line

    def get_driver_class(self) -> type[Driver]:
        """Textual's driver for the platform, or `TEXTUAL_DRIVER`'s; in place of its Linux one,
        the kiosk's, whose input thread sleeps while nobody types (`kiosk_driver`)."""
        driver = super().get_driver_class()
        return KioskDriver if driver is LinuxDriver else driver

    def on_mount(self) -> None:
        self._mounted = True
        self._call_hook("started", self)
        self._mark_console()
        self._dirty.everything()
        if self._has_data:
            self._settle_later()  # a restored board
        self.tick()
        self.set_interval(TICK_SECONDS, self.tick, name="tick")
        if self._source is not None:
            self._start_source(self._source)
        self.call_after_refresh(self._announce_ready)

    def on_unmount(self) -> None:
        self._mounted = False
        self._collector.hand_back()
        self._busy_clock.close()
        if self.pictures is not None:
            self.pictures.close()
        self._call_hook("stopped", self)

    def run(
        self,
        *,
        headless: bool = False,
        inline: bool = False,
        inline_no_clear: bool = False,
        mouse: bool = False,
        size: tuple[int, int] | None = None,
        auto_pilot: AutopilotCallbackType | None = None,
        loop: asyncio.AbstractEventLoop | None = None,
    ) -> None:
        """Run the screen until it is asked to quit; the mouse is off unless asked for."""
        return super().run(
            headless=headless,
            inline=inline,
            inline_no_clear=inline_no_clear,
            mouse=mouse,
            size=size,
            auto_pilot=auto_pilot,
            loop=loop,
        )

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """The quit binding does nothing when no quit chord is configured."""
        if action == "quit":
            return bool(self._quit_key)
        return True

    @property
    def shown_locale(self) -> str:
        """The locale on screen now."""
        return self._locale

    # --- updates ---------------------------------------------------------------------------------

    def apply_update(self, update: Update) -> None:
        """Apply one update to the board and schedule the redraw of what it changed.

        This is the `emit` the source calls. Safe to call from another thread.
        """
        if threading.get_ident() != self._thread_id:
            self.call_from_thread(self.apply_update, update)
            return
        now = self._clock()
        try:
            changes = self.board.apply(update, now)
        except Exception:
            log.exception("an update could not be applied (%s): skipped", type(update).__name__)
            return
        if isinstance(update, ReferenceData) and update.place is not None:
            self._learn_place(update.place.timezone, update.place.language)
        if not self._has_data and not isinstance(update, FeedHealth):
            self._has_data = True
            self._dirty.everything()
            self._settle_later()
        if changes.layout or changes.reference:
            self._turn_ahead = None  # rows come or go: the rows drawn ahead are not the board's
        elif self._turn_ahead is not None and (changes.queues or changes.counters):
            self._turn_ahead.changed = True
        self._dirty.add(changes)
        if changes.new_calls:
            self._call_hook("calls", list(changes.new_calls))
        if changes.health:
            self._call_hook("health", self.board, now)
        if self._dirty:
            self._schedule_redraw()

    def _settle_later(self) -> None:
        if self._mounted and not self._settled:
            self._settled = True
            self.set_timer(SETTLE_SECONDS, self._settle, name="settle")

    def _settle(self) -> None:
        # Without a collection first: a full one would pause the screen for 0.1 s.
        gc.freeze()
        self._collector.take_over()

    def highlight_call(self, call: Call) -> None:
        """Highlight `call` again from now: its announcement is starting (the announcer's hook).

        Safe to call from another thread.
        """
        if threading.get_ident() != self._thread_id:
            self.call_from_thread(self.highlight_call, call)
            return
        changes = self.board.highlight_from(call, self._clock())
        if not changes:
            return
        self._dirty.add(changes)
        self._schedule_redraw()

    def _learn_place(self, timezone: str, language: str) -> None:
        place_locale = locale_of_language(language)
        if timezone != self._place_timezone or place_locale != self._place_locale:
            self._place_timezone = timezone
            self._place_locale = place_locale
            self._configure(self.settings.display)
            self._dirty.everything()

    def tick(self) -> None:
        """Bring the screen up to the moment: clock, locale, pages, freshness, highlights.

        Runs every second (and from tests, with a fixed clock moved by hand).
        """
        now = self._clock()
        self._turn_locale(now)
        minute = (now.year, now.month, now.day, now.hour, now.minute)
        if minute != self._minute:
            # Clock, relative times ("in 5 min") and "today" move with the minute.
            self._minute = minute
            self._dirty.header = self._dirty.queues = self._dirty.calls = True
            self._dirty.status = True
        self._catch_up(now)
        self._turn_page(now)
        self._prepare_next_turn(now)
        self._redraw_pending()
        self._collect_later()  # a frame may not come: the clock changes once a minute
        self._call_hook("tick", self)

    def _turn_locale(self, now: datetime) -> bool:
        """Turn to the locale due at `now`, or hold the turn behind a call; True when turned."""
        locale = self._rotation.current(now.timestamp())
        if locale == self._locale:
            return False
        if not self._rotation_held:
            self._rotation_due_by = time.monotonic() + HOLD_LIMIT
        if self._locale and self._call_waiting and time.monotonic() < self._rotation_due_by:
            # A call about to be drawn, or drawn and not shown yet, goes first in the locale it
            # came in; the rotation (every text) comes a frame after it. So does a call drawn
            # after that frame was made (a slow host's timers fire late).
            self._rotation_held = True
            return False
        # Not at once: the calls first, the queue board in the next frame (see
        # `_redraw_pending`); a first locale (nothing shown yet) is drawn whole.
        if self._rotation_held and self._hold_timer is not None:
            # A queue board held meanwhile (a page turn) follows the rotation's frame: its
            # limit counts from now, or both would come in one frame.
            self._hold_timer.stop()
            self._hold_timer = self.set_timer(HOLD_LIMIT, self._release_held, name="hold-limit")
        self._rotation_held = False
        self._dirty.everything(at_once=not self._locale)
        self._locale = locale
        return True

    def _turn_page(self, now: datetime) -> None:
        """Turn the queue board to the page due at `now`, with the queue rows' redraw.

        Not while the locale turn due with it is held behind a call: turned alone, the page was
        worded and drawn in the locale going out, which nothing had drawn it in ahead, and once
        more in the new one a frame later (this project's benchmark machine, at 100 events/s:
        17 ms of wording and a 35 ms frame, which the calls meanwhile waited for).
        The page turns with the rotation's queue board instead."""
        slot = self._page_slot_at(now.timestamp())
        if slot != self._page_slot and not self._rotation_held:
            self._page_slot = slot
            self._dirty.queues = True
            self._dirty.whole = True

    def _page_slot_at(self, moment: float) -> int:
        """The queue board's page slot at `moment`: pages turn when every locale has had its
        turn, counted from the first page."""
        period = self._rotation.period * len(self._rotation.locales)
        turn = math.floor(moment / period)
        if self._page_origin is None:
            self._page_origin = turn
        return turn - self._page_origin

    def _prepare_next_turn(self, now: datetime) -> None:
        """Have the next locale's queue rows and recent calls, or the queue board's next page,
        worded and drawn `PREPARE_AHEAD` before its turn, from the last tick in time for it."""
        rotation = self._rotation
        at = now.timestamp()
        turn = rotation.next_turn(at)
        later = turn - at > TICK_SECONDS + PREPARE_AHEAD  # the next tick is in time
        turns = len(rotation.locales) > 1 or self.queue_board.pages > 1
        if not turns or turn == self._prepared_turn or later:
            return
        self._prepared_turn = turn
        moment = now + timedelta(seconds=turn - at)
        delay = turn - at - PREPARE_AHEAD
        if delay > 0:
            self.set_timer(delay, partial(self._prepare_turn, moment), name="prepare-turn")
        else:
            self.call_later(self._prepare_turn, moment)

    def _prepare_turn(self, moment: datetime) -> None:
        """Word and draw the queue rows in the locale whose turn comes at `moment`, on the
        page it shows, the counters, and the recent calls: its rotation then draws only the
        calls made since (`QueueBoard.prepare`, `CountersPanel.prepare`,
        `RecentCallsPanel.prepare`), and shows the rows and counters as drawn here (`_redraw`).
        With one locale, the queue board's next page alone: a page turn drew every row of the
        new page in its frame (11 to 25 ms on this project's benchmark machine, 30 queues), and
        a call that came meanwhile waited for it."""
        at = moment.timestamp()
        locale = self._rotation.current(at)
        page_slot = self._page_slot_at(at)
        if not self._drawable or not self._has_data:
            return
        if locale == self._locale and page_slot == self._page_slot:
            return
        shown = self._shown(moment, locale)
        queues = self.board.queues()
        self.queue_board.prepare(queues, shown, page_slot)
        counters = None
        if locale != self._locale:
            counters = self.board.counters()
            self.counters.prepare(counters, shown)
            self.recent_calls.prepare(self.board.recent_calls(), shown)
        self._turn_ahead = _TurnAhead(locale, page_slot, queues, counters)

    def _schedule_redraw(self) -> None:
        """Coalesce a burst of updates: calls, header and status in the next frame the pacer
        allows (at once after a quiet spell), queue rows and counters when their timer fires
        (see `QUEUES_REDRAW_DELAY`)."""
        dirty = self._dirty
        if dirty.urgent and not self._flush_scheduled:
            self._flush_scheduled = True
            wait = self._pacer.delay(time.monotonic())
            if self._joins:
                self._joined_after = self._frames
                self._redraw_urgent()
            elif wait > 0:
                self.set_timer(wait, self._redraw_urgent, name="frame")
            else:
                self.call_later(self._redraw_urgent)
        if (dirty.queues or dirty.counters) and self._queues_timer is None and self._mounted:
            due = self._queues_drawn_at + QUEUES_REDRAW_PERIOD - time.monotonic()
            self._queues_timer = self.set_timer(
                max(QUEUES_REDRAW_DELAY, due), self._redraw_queues, name="redraw-queues"
            )

    @property
    def _joins(self) -> bool:
        """A call that comes now joins the frame of the calls drawn and not shown yet: drawn at
        once, it goes in that frame (still one frame per refresh interval). Left to the pacer,
        it waited for the frame after, a frame and a refresh interval more: at 10 events/s,
        two calls a few milliseconds apart, the latest of the calls (a frame log of this
        project's benchmark machine: 52 ms, where a lone call took 32). Once a frame: a
        burst's calls do not hold that frame back one after another.
        """
        return (
            self._dirty.calls
            and self._call_unshown
            and self._joined_after != self._frames
            and self._drawable
        )

    def _catch_up(self, now: datetime) -> None:
        """Redraw what a change due to time alone changes once it has come: whichever redraw
        comes first draws it. A redraw of some parts that came first and moved `_next_change`
        past it would otherwise leave it undrawn (a highlight on until the next call).

        A part going stale or withdrawn redraws everything; a highlight's end, the calls alone:
        it comes after every call, and redrawing every part for it was a fifth of what an idle
        screen's redraws and frames cost (30 queues, a ticket event every 5 s)."""
        if self._next_change is None or now < self._next_change:
            return
        if self._next_freshness is not None and now >= self._next_freshness:
            self._dirty.everything()
        else:
            self._dirty.calls = True

    def _note_next_change(self, now: datetime) -> None:
        """Note when time alone next changes the screen (`_catch_up`)."""
        self._next_change = self.board.next_change_at(now)
        self._next_freshness = self.board.next_freshness_change_at(now)

    def _redraw_urgent(self) -> None:
        self._catch_up(self._clock())
        if self._dirty.at_once:
            self._redraw_pending()
            return
        dirty = self._dirty
        self._flush_scheduled = False
        if not self._drawable:
            return
        urgent = _Dirty(header=dirty.header, calls=dirty.calls, status=dirty.status)
        dirty.header = dirty.calls = dirty.status = False
        now = self._clock()
        if urgent:
            self._redraw(urgent, now)
        self._note_next_change(now)

    def _redraw_queues(self) -> None:
        self._queues_timer = None
        self._redraw_pending(rows_due=True)

    @property
    def _drawable(self) -> bool:
        # A timer may fire while the app shuts down, after its widgets are gone.
        return self._mounted and self.is_running

    def _redraw_pending(self, split: bool = True, rows_due: bool = False) -> None:
        """Draw every part due; `rows_due`: the queue rows' period is over (their timer)."""
        self._flush_scheduled = False
        if not self._drawable:
            return
        now = self._clock()
        self._catch_up(now)
        dirty, self._dirty = self._dirty, _Dirty()
        if self._held is not None:
            dirty.whole = True  # rows redrawn now would draw the held board, in the new locale
        if not rows_due:
            self._rest_rows(dirty)
        # A locale rotation or a page turn redraws the queue board whole, the costliest part
        # of a frame (tens of milliseconds on a small PC): the calls, header and status go in a
        # frame of their own first, and the queue rows and counters in the next, so a call
        # that comes with a rotation is not held back by it. Nor are queue rows drawn between
        # a call's redraw and its frame (the clock's tick, the rows' timer firing there: one
        # call in fifteen at 10 events/s): the call's frame waited for them, 4 to 6 ms on this
        # host. They are drawn after the frame (a whole board is held, `_hold`).
        later = dirty.later_parts(self._call_waiting) if split else _Dirty()
        if later.whole:
            self._hold(later)
        elif later:
            self._rows_later += 1
            self.call_after_refresh(self._after_network_turn, later)
        if dirty.queues or dirty.counters:
            self._queues_drawn_at = time.monotonic()
            if self._queues_timer is not None:
                # Drawn now (a turn, a tick): what changes next waits its period from now.
                # Left to fire, the timer drew the rows again straight after a rotation's queue
                # board, in the frame the calls that came with the rotation waited for.
                self._queues_timer.stop()
                self._queues_timer = None
        if dirty:
            self._redraw(dirty, now)
        self._note_next_change(now)

    def _rest_rows(self, dirty: _Dirty) -> None:
        """Leave the queue rows and counters of `dirty` to their timer until their period since
        they were last drawn is over (`QUEUES_REDRAW_PERIOD`), whichever redraw they came to
        (the clock's tick, the rows held behind a call's frame): unless the board changes whole
        (a rotation, a page turn) or at once (its freshness). Drawn by those, they came as
        often as the calls did: at 100 events/s, a second redraw of the board straight after a
        rotation's, in the frames the calls that came with it waited for."""
        if dirty.whole or dirty.at_once or not (dirty.queues or dirty.counters):
            return
        if time.monotonic() >= self._queues_drawn_at + QUEUES_REDRAW_PERIOD:
            return
        self._dirty.queues |= dirty.queues
        self._dirty.counters |= dirty.counters
        dirty.queues = dirty.counters = False
        self._schedule_redraw()

    def _after_network_turn(self, later: _Dirty) -> None:
        self.set_timer(NETWORK_TURN, lambda: self._redraw_later(later), name="redraw-later")

    def _redraw_later(self, later: _Dirty, held: bool = False) -> None:
        """Draw the queue rows and counters `_redraw_pending` held for the next frame (and any
        dirty since). A call that came meanwhile goes first, in a redraw of its own, and the
        rows in the one after it; held twice at most. Rows are not held behind calls drawn and
        not shown yet, as a whole board is (`_hold`): each frame composes the screen, and on a
        busy small PC more frames cost more than the few rows a burst changes."""
        self._rows_later -= 1
        if self._held is not None:
            # A whole queue board is held behind a call: these rows come with it. Redrawn now,
            # they would draw the whole board, into the call's frame.
            self._held.join(later)
            return
        self._dirty.join(later)
        if not held:
            again = self._dirty.later_parts()
            if again:
                self._rows_later += 1
                self.call_after_refresh(self._redraw_later, again, True)
        self._redraw_pending(split=False)

    def _hold(self, parts: _Dirty) -> None:
        """Draw `parts` (a whole queue board, counters) in a frame after the one being made.
        They are drawn a few turns of the loop after that frame is written (`NETWORK_TURN`); a
        call that came meanwhile goes first, in a frame of its own, and they follow in a frame
        after it; `HOLD_LIMIT` at most (behind every call of a burst, they would starve)."""
        if self._held is None:
            self._held = _Dirty()
            self._hold_timer = self.set_timer(HOLD_LIMIT, self._release_held, name="hold-limit")
        self._held.join(parts)

    def _display(self, screen: Screen[Any], renderable: RenderableType | None) -> None:
        # Textual's (pinned) writing of a composed frame: no public hook says a frame was made
        # (`call_after_refresh` may run before the widgets' redraw has reached the screen).
        super()._display(screen, renderable)
        if renderable is None:
            return
        self._frames += 1
        if (self._held is not None or self._rotation_held) and not self._release_scheduled:
            self._release_scheduled = True
            self.call_later(self.set_timer, NETWORK_TURN, self._release_after_frame)
        self._collect_later()

    def _collect_later(self) -> None:
        """Run the garbage collection due (if any) a few turns of the loop from now, when no
        frame is being made (`_collect_if_quiet`)."""
        collector = self._collector
        if self._collect_scheduled or not collector.in_charge:
            return
        if collector.due(gc.get_count()) is not None:
            self._collect_scheduled = True
            self.call_later(self.set_timer, NETWORK_TURN, self._collect_if_quiet)

    def _collect_if_quiet(self) -> None:
        """Collect unless a frame is on its way (a call to draw, parts drawn and not shown or
        held for the next frame): then after that frame, unless the young generation may not
        wait any longer (`QuietCollector.pressing`)."""
        self._collect_scheduled = False
        busy = (
            self._call_pending
            or self._frames == self._drawn_after
            or self._later_pending
            or self._rotation_held
        )
        if not busy or self._collector.pressing(gc.get_count()):
            self._collector.collect()

    def _release_after_frame(self) -> None:
        self._release_scheduled = False
        if self._rotation_held:
            # The rotation the call's frame held back; not a whole tick, which drew every part
            # due (queue rows at each frame of a long hold, not once a second).
            now = self._clock()
            if self._turn_locale(now):
                self._turn_page(now)
                self._redraw_pending()
        elif self._held is not None and not self._call_waiting:
            self._release_held()
        # Else a call came meanwhile: its frame first, the held board in a frame after it.

    @property
    def _call_waiting(self) -> bool:
        """A call is to be drawn, or drawn and not shown yet, on a UI that keeps up (on a UI
        that does not, calls always wait: holding a board or a rotation behind them only piled
        it onto later calls; the 48 ms host, saturated, the latest call during a rotation +109
        -> +62 ms after the others' p99 once this saw that, medians of two rounds)."""
        return self._pacer.keeps_up and self._call_pending

    @property
    def _call_pending(self) -> bool:
        """A call is to be drawn, or drawn and not shown yet."""
        return self._dirty.calls or self._flush_scheduled or self._call_unshown

    def _release_held(self) -> None:
        held, self._held = self._held, None
        if held is None:
            return
        if self._hold_timer is not None:
            self._hold_timer.stop()
            self._hold_timer = None
        self._dirty.join(held)
        self._redraw_pending(split=False)

    @property
    def _later_pending(self) -> bool:
        """Parts held back for a later frame, not drawn yet (`_hold`, `_redraw_later`)."""
        return self._held is not None or self._rows_later > 0

    @property
    def _call_unshown(self) -> bool:
        """Calls were drawn and no frame has been written since (a frame composed between the
        drawing and the screen hearing of it counts, though it did not hold them: the rare
        miss leaves the queue board in the call's frame, as without this)."""
        return self._frames == self._calls_drawn_after

    def _shown(self, now: datetime, locale: str = "") -> Shown:
        locale = locale or self._locale or self._rotation.current(now.timestamp())
        fallback = [self._place_locale] if self._place_locale else []
        fallback += [code for code in self._rotation.locales if code != locale]
        return Shown(self._texts[locale], now, tuple(fallback))

    def _redraw(self, dirty: _Dirty, now: datetime) -> None:
        # Queue rows and counters alone do not hold back the next call (`FramePacer`).
        self._pacer.drawn(time.monotonic(), self._busy_clock(), paces=dirty.urgent)
        self._drawn_after = self._frames
        if dirty.calls:
            self._calls_drawn_after = self._frames
        shown = self._shown(now)
        board = self.board
        parts = board.parts(now)
        ahead = self._ahead_of(dirty, shown)
        # The notice's words only while it is shown: a new sentence lays the screen out
        # (Textual sizes a Static by its text), at every locale rotation of a working screen.
        connecting = not self._has_data
        if connecting and not self.connecting.display:
            self.connecting.show(shown)
        self.connecting.display = connecting
        self.query_one("#main").display = self._has_data

        def header() -> None:
            self.header.show(board.place_names(), shown)
            if connecting:
                self.connecting.show(shown)

        def calls() -> None:
            self.now_calling.show(board.now_calling(now), parts[Part.CALLS], shown)
            self.recent_calls.show(board.recent_calls(), parts[Part.CALLS], shown)

        def queues() -> None:
            if self._page_slot >= 0 and self.queue_board.page_slot != self._page_slot:
                self.queue_board.page_slot = self._page_slot
            queues = board.queues() if ahead is None else ahead.queues
            self.queue_board.show(queues, parts[Part.QUEUES], shown)

        def counters() -> None:
            drawn_ahead = None if ahead is None else ahead.counters
            counters = board.counters() if drawn_ahead is None else drawn_ahead
            self.counters.show(counters, parts[Part.COUNTERS], shown)

        def status() -> None:
            banner = self.banner
            if banner == DEMO_BANNER:
                banner = f"{shown.text.text(strings.DEMO)} · {shown.text.text(strings.DEMO_QUIT)}"
            self.status_line.show(parts, shown, banner)

        for wanted, draw in (
            (dirty.header, header),
            (dirty.calls, calls),
            (dirty.queues, queues),
            (dirty.counters, counters),
            (dirty.status, status),
        ):
            if wanted:
                try:
                    draw()
                except Exception:
                    # One part that cannot be drawn must not take the others (or the kiosk) down.
                    log.exception("the %s could not be drawn", draw.__name__)
        if ahead is not None and ahead.changed:
            # Up to the moment with the rows' next redraw (`QUEUES_REDRAW_PERIOD`); not when
            # nothing changed: a quiet screen's page turns would each cost a redraw more.
            self._dirty.queues = self._dirty.counters = True
            self._schedule_redraw()

    def _ahead_of(self, dirty: _Dirty, shown: Shown) -> _TurnAhead | None:
        """The queue rows and counters drawn ahead for this redraw's turn, if it is one and they
        were (`_prepare_turn`).

        A turn shows them as they were drawn, half a second ago (`PREPARE_AHEAD`), and the
        rows' next redraw brings what changed since, a second later at most, as it does between
        turns. Worded and drawn again in the turn's frame, the queues that changed meanwhile
        (most of them at 100 events/s) and the counters held back the calls that came then
        (this project's benchmark machine: 13 ms of wording and a 19 ms frame).
        """
        ahead = self._turn_ahead
        if ahead is None or not dirty.whole or not (dirty.queues or dirty.counters):
            return None
        self._turn_ahead = None
        if ahead.locale != shown.locale or ahead.page_slot != self._page_slot:
            return None
        return ahead

    # --- the source ------------------------------------------------------------------------------

    def _start_source(self, source: Source) -> None:
        # exit_on_error=False: one exception must not take the screen down (the default does).
        self.run_worker(
            self._run_source(source),
            name="source",
            group="source",
            exit_on_error=False,
        )

    async def _run_source(self, source: Source) -> None:
        """Run the source forever; when it fails or ends, start it again after a delay.

        The delays are the reconnect policy's (`lobby_display.backoff`): `restart_delays` gives
        the first and the cap; a source that ran a minute is started again after the first.
        """
        first, cap = self._restart_delays
        backoff = Backoff(first, cap)
        while True:
            backoff.started()
            try:
                await source(self.apply_update)
                problem = "the source of updates ended"
            except asyncio.CancelledError:
                raise
            except Exception as error:
                # The message may carry a URL with the API key in it: never log it as is.
                problem = (
                    f"the source of updates failed ({type(error).__name__}: {redact(str(error))})"
                )
                log.debug("source failure", exc_info=True)
            delay = backoff.next_delay()
            log.warning("%s; starting it again in %.1f s", problem, delay)
            await asyncio.sleep(delay)

    # --- settings --------------------------------------------------------------------------------

    def _configure(self, display: DisplaySettings) -> None:
        """Locale rotation, formats, quit chord and theme from the `[display]` settings."""
        self._rotation = LocaleRotation(display.locales, display.rotation_seconds)
        timezone: tzinfo | str = display.timezone or self._place_timezone or machine_timezone()
        try:
            texts = {
                locale: LocaleText(locale, timezone, display.clock)
                for locale in self._rotation.locales
            }
        except ValueError:
            log.warning("unknown time zone %r: showing the machine's", timezone)
            texts = {
                locale: LocaleText(locale, machine_timezone(), display.clock)
                for locale in self._rotation.locales
            }
        self._texts = texts
        self._quit_key = display.quit_key.strip()
        if self._quit_key:
            self.set_keymap({QUIT_BINDING: self._quit_key})
        self.theme = THEMES[display.theme].name
        if self._mounted:
            self._mark_console()
        self._locale = ""
        self._page_slot = -1

    @staticmethod
    def _label_graphics(display: DisplaySettings, graphics: Graphics | None) -> Graphics:
        """How big labels are drawn: `graphics` as found on the terminal (None: no terminal was
        asked, so `display.graphics` alone decides), with the face of the place's CJK locale."""
        if graphics is None:
            graphics = choose(display.graphics, "", TerminalAnswers())
        cjk = next((locale for locale in display.locales if locale in CJK_FACES), "")
        return replace(graphics, cjk_locale=cjk)

    def export_screenshot(self, *, title: str | None = None, simplify: bool = False) -> str:
        """The screen as SVG, big labels drawn as their mosaic (an SVG holds no sixel image)."""
        with for_screenshot():
            return super().export_screenshot(title=title, simplify=simplify)

    def _mark_console(self) -> None:
        # The console theme also changes borders to glyphs the Linux console has (app.tcss).
        self.screen.set_class(self.settings.display.theme == "console", "-console")

    def reload_settings(self, settings: Settings) -> None:
        """Apply new settings (the kiosk's reload, on SIGHUP) without losing the board.

        Everything of `[display]` takes effect at once. Which queues and counters the board holds
        (`[place]`) is fixed for the board's life: changing them needs a restart.
        """
        old = self.settings
        if settings.place != old.place:
            log.warning("the [place] section changed: restart the display to apply it")
        self.settings = settings
        kept = self.board.settings
        self.board.settings = replace(
            BoardSettings.from_settings(settings),
            queue_ids=kept.queue_ids,
            counter_ids=kept.counter_ids,
        )
        self._configure(settings.display)
        self.recent_calls.capacity = settings.display.recent_calls
        self._dirty.everything()
        if self._mounted:
            self.tick()

    # --- the rest of the program ------------------------------------------------------------------

    # Textual prints an unexpected error's traceback, with local variables, to standard error
    # on the way out: under the console unit that is the TV. The details go to the log; the
    # screen gets one short line.

    def _handle_exception(self, error: Exception) -> None:
        log.critical(
            "the screen stopped on an unexpected error",
            exc_info=(type(error), error, error.__traceback__),
        )
        super()._handle_exception(error)

    def panic(self, *renderables: RenderableType) -> None:
        """Exit on an unexpected error; what it says goes to the log, not onto the screen."""
        for renderable in renderables:
            if isinstance(renderable, Exception):
                continue  # (logged with its traceback by `_handle_exception`)
            text = renderable if isinstance(renderable, str) else _plain(renderable)
            log.critical("the screen stopped: %s", text)
        super().panic(*renderables)

    def _print_error_renderables(self) -> None:
        if self._exit_renderables:
            self._exit_renderables.clear()
            self.error_console.print(FATAL_MESSAGE, markup=False, highlight=False)

    def _announce_ready(self) -> None:
        if not self._ready_sent:
            self._ready_sent = True
            self._call_hook("ready")

    def _call_hook(self, name: str, *args: Any) -> None:
        hook = getattr(self.hooks, name)
        if hook is None:
            return
        try:
            hook(*args)
        except Exception:
            log.exception("the %s hook failed", name)


def _plain(renderable: RenderableType) -> str:
    """A Rich renderable (a traceback) as plain text, for the log."""
    buffer = io.StringIO()
    Console(file=buffer, width=120, color_system=None, highlight=False).print(renderable)
    return buffer.getvalue()


__all__ = [
    "DEMO_BANNER",
    "THEMES",
    "AppHooks",
    "LobbyApp",
    "Source",
    "board_has_data",
    "locale_of_language",
    "machine_timezone",
    "utc_now",
]
