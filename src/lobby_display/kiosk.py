"""`lobby-display run`: the kiosk, with feeds, board, screen, sound and systemd wired together.

The screen comes up at once and waits for no network; the feeds are its source of updates. The
process (signals, reload, screenshot), the watchdog, the saved board, the sound, the health and
the flight recorder are wired here; the screen only hears `exit()` and `reload_settings()`.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import importlib
import logging
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lobby_display.board import Board, BoardSettings
from lobby_display.config import Settings
from lobby_display.monitoring import Monitor
from lobby_display.process import (
    answer_screenshots,
    reload_config,
    screenshot_signal_path,
    take_signals,
)
from lobby_display.recording import FlightRecorder, flight_recorder
from lobby_display.service import Notifier, setup_logging, status_text, watchdog_period
from lobby_display.source import Emit, feeds_source
from lobby_display.state import BoardStore
from lobby_display.updates import Call, FeedHealth, Update

if TYPE_CHECKING:
    from lobby_display.announce import Announcer
    from lobby_display.app import AppHooks, LobbyApp, Source
    from lobby_display.graphics.terminal import Graphics

#: The screen's module: Textual and the widgets (imported when the screen is built, not before).
SCREEN_MODULE = "lobby_display.app"

log = logging.getLogger(__name__)


def saved_ids(board: Board | None) -> tuple[list[str], list[str]]:
    """The queue and counter ids a restored board shows (none without a board)."""
    if board is None:
        return [], []
    return [view.queue_id for view in board.queues()], [
        view.counter_id for view in board.counters()
    ]


@dataclass
class Kiosk:
    """What runs beside the screen: the process's signals, systemd notifications, the saved
    board, the announcer."""

    settings: Settings
    notifier: Notifier = field(default_factory=Notifier)
    store: BoardStore | None = None
    announcer: Announcer | None = None
    watchdog_every: float | None = None
    app: LobbyApp | None = None
    """The screen, once built (the SIGUSR1 screenshot reads it)."""
    monitor: Monitor | None = None
    """Writes the health for `lobby-display status` and node-exporter (monitoring.py)."""
    flight: FlightRecorder | None = None
    """Keeps the feeds' last minutes in the state directory (`[state] record_minutes`)."""
    _last_watchdog: float = 0.0
    _tasks: set[asyncio.Task[None]] = field(default_factory=set)
    _undo_signals: Callable[[], None] | None = None

    def __post_init__(self) -> None:
        if self.store is None:
            self.store = BoardStore(self.settings.state_directory(), self.settings.place.id)
        self.watchdog_every = watchdog_period()
        if self.monitor is None:
            self.monitor = Monitor(self.settings)
        if self.flight is None:
            self.flight = flight_recorder(self.settings)

    def restored_board(self) -> Board | None:
        """The board saved before the last stop, shown out of date until the feeds are live."""
        assert self.store is not None
        return self.store.load(BoardSettings.from_settings(self.settings), datetime.now(UTC))

    def hooks(self) -> AppHooks:
        """The app's hooks into the process, systemd, the store and the announcer."""
        from lobby_display.app import AppHooks

        return AppHooks(
            started=self.started,
            stopped=self.stopped,
            ready=self.ready,
            tick=self.tick,
            calls=self.calls,
            health=self.health,
        )

    def started(self, app: LobbyApp) -> None:
        """The screen is mounted (on its loop, before its first frame): SIGTERM and SIGINT end
        it, SIGHUP reloads the configuration (`process.take_signals`; the PID file under
        systemd)."""
        self._undo_signals = take_signals(
            app.exit, lambda: self.reload(app), terminal=not app.is_headless
        )

    def stopped(self, app: LobbyApp) -> None:
        """The screen is gone: the signals' handlers and the PID file go with it."""
        undo, self._undo_signals = self._undo_signals, None
        if undo is not None:
            undo()

    def ready(self) -> None:
        """The screen is up: tell systemd, start the sound, answer SIGUSR1 with a screenshot."""
        self.notifier.ready("screen up, connecting to the service")
        if self.announcer is None:
            try:
                # Imported once the screen is up: sound is not needed for the first frame.
                from lobby_display.announce import Announcer

                self.announcer = Announcer.from_settings(self.settings, on_playing=self.playing)
            except Exception:  # sound must never stop the screen
                log.exception("sound is off: the announcer could not be set up")
        if self.announcer is not None:
            self._spawn(self.announcer.start())
        if self.app is not None:
            answer_screenshots(self.app.export_screenshot, self.screenshot_path)

    def _spawn(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def tick(self, app: LobbyApp) -> None:
        """Every second on the UI loop: the watchdog ping, the (spaced) board save and health."""
        if self.watchdog_every is not None:
            now = loop_time()
            if now - self._last_watchdog >= self.watchdog_every:
                self._last_watchdog = now
                self.notifier.watchdog()
        assert self.store is not None
        self.store.save(app.board, datetime.now(UTC), wait=False)
        if self.monitor is not None:
            self.monitor.tick(app.board)

    def calls(self, calls: list[Call]) -> None:
        """New calls and recalls, in order, to the announcer (and counted as shown)."""
        if self.monitor is not None:
            self.monitor.calls(len(calls))
        if self.announcer is not None:
            for call in calls:
                self.announcer.submit(call)

    def playing(self, call: Call) -> None:
        """A call's announcement starts: its highlight runs from now, in step with the voice."""
        if self.app is not None:
            self.app.highlight_call(call)

    def health(self, board: Board, now: datetime) -> None:
        """A feed's health changed: one line for `systemctl status`."""
        reports = [
            FeedHealth(
                feed=view.feed,
                status=view.status,
                at=now,
                attempt=view.attempt,
                error=view.error,
            )
            for view in board.health(now).values()
        ]
        self.notifier.status(status_text(reports))

    def reload(self, app: LobbyApp) -> None:
        """SIGHUP: read the config file again and apply it to the screen and the sound.

        A bad file keeps the running settings (the reason is logged). systemd hears
        `RELOADING=1` then `READY=1` (`Type=notify-reload` waits for them), the new settings
        being applied by then; the `[service]` section needs a restart.
        """
        settings, problem = reload_config(None, app.settings)
        if problem is not None:
            return
        self.notifier.reloading()
        try:
            app.reload_settings(settings)
            self._reload_sound(settings)
        except Exception:  # the screen goes on with what it could apply
            log.exception("the new settings could not all be applied")
        finally:
            self.notifier.ready()

    def _reload_sound(self, settings: Settings) -> None:
        if settings.service != self.settings.service:
            log.warning("the [service] section changed: restart the display to apply it")
        old = self.announcer
        self.settings = settings
        try:
            from lobby_display.announce import Announcer

            self.announcer = Announcer.from_settings(settings, on_playing=self.playing)
        except Exception:
            log.exception("sound settings not applied")
            return
        if old is not None:
            self._spawn(old.stop())
        self._spawn(self.announcer.start())

    def screenshot_path(self) -> Path:
        """Where SIGUSR1 writes what the screen shows (`lobby-display screenshot` reads it)."""
        return screenshot_signal_path(self.settings)


def loop_time() -> float:
    """The running loop's monotonic clock."""
    return asyncio.get_running_loop().time()


def build_app(settings: Settings, kiosk: Kiosk | None = None) -> LobbyApp:
    """The kiosk's app: restored board, live feeds, hooks."""
    kiosk = kiosk or Kiosk(settings)
    board = kiosk.restored_board()
    return _screen(
        settings,
        kiosk,
        board,
        feeds_source(settings, known_ids=saved_ids(board), observer=kiosk.flight),
    )


def _screen(
    settings: Settings,
    kiosk: Kiosk,
    board: Board | None,
    source: Source,
    graphics: Graphics | None = None,
) -> LobbyApp:
    from lobby_display.app import LobbyApp

    kiosk.app = LobbyApp(settings, source, hooks=kiosk.hooks(), board=board, graphics=graphics)
    return kiosk.app


class EarlyFeeds:
    """The kiosk's feeds, started before its screen exists, handed to the screen once it is up.

    Start it inside the running loop. Updates that come before the screen takes the feeds
    (`source`) are kept, in order, and given to it first.
    """

    def __init__(self, source: Source) -> None:
        self._source = source
        self._kept: list[Update] = []
        self._emit: Emit | None = None
        self._task: asyncio.Future[None] | None = asyncio.ensure_future(source(self._take))

    def _take(self, update: Update) -> None:
        if self._emit is None:
            self._kept.append(update)
        else:
            self._emit(update)

    async def source(self, emit: Emit) -> None:
        """The app's source: what the feeds brought so far, then each update as it comes.

        Should the app start its source again (after a failure), the feeds start afresh.
        """
        task, self._task = self._task, None
        if task is None:
            await self._source(emit)
            return
        kept, self._kept = self._kept, []
        for update in kept:
            emit(update)
        # The feeds' task was made before the screen: it calls the screen in the screen's
        # context (Textual finds its app there), as a source started by the screen would.
        context = contextvars.copy_context()

        def in_screen(update: Update) -> None:
            context.run(emit, update)

        self._emit = in_screen
        try:
            await task
        finally:
            self._emit = None
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    @property
    def kept(self) -> int:
        """How many updates wait for the screen."""
        return len(self._kept)


async def _start(settings: Settings, kiosk: Kiosk) -> tuple[EarlyFeeds, Board | None]:
    """Import the screen's code on a thread while the feeds start here; the restored board.

    The import is Python work (about 0.3 s) and so is most of the feeds' start, but the feeds
    mostly wait on the network: the two overlap.
    """
    screen = asyncio.ensure_future(asyncio.to_thread(importlib.import_module, SCREEN_MODULE))
    try:
        board = kiosk.restored_board()
        feeds = EarlyFeeds(
            feeds_source(settings, known_ids=saved_ids(board), observer=kiosk.flight)
        )
    finally:
        await screen
    log.debug("screen code imported; %d updates came before the screen", feeds.kept)
    return feeds, board


def run(settings: Settings) -> int:
    """Run the kiosk display until it is stopped; the exit code of the process."""
    setup_logging(settings)
    log.info("lobby-display starting for place %s", settings.place.id)
    kiosk = Kiosk(settings)
    # One loop for the feeds started early and for the screen, which runs on it (`loop=`).
    with asyncio.Runner() as runner:
        feeds, board = runner.run(_start(settings, kiosk))
        from lobby_display.graphics.terminal import detect

        # Asked once the screen's code is in (it brings the picture code) and before the screen
        # starts: once it runs, the terminal's answers would reach it as key presses.
        graphics = detect(settings.display.graphics)
        app = _screen(settings, kiosk, board, feeds.source, graphics)
        try:
            app.run(loop=runner.get_loop())
        finally:
            kiosk.notifier.stopping()
            assert kiosk.store is not None
            kiosk.store.save(app.board, datetime.now(UTC), force=True)
            if kiosk.flight is not None:
                kiosk.flight.close()
    return app.return_code or 0
