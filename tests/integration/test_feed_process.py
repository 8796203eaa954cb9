"""The feeds in a process of their own (`feed_process`), against the simulator over real HTTP.

What the screen's process gets from the child is what the feeds read in process: the board
equals the service's truth, the child's log records and activity counts arrive in the screen's
process, and the child keeps the flight recorder. The child's life follows the screen's: a
killed child is reported (every feed reconnecting, with why) and started again; a child whose
screen died ends; the screen's signals (Ctrl-C, reload, screenshot) leave it reading.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import pickle
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from lobby_display.activity import Activity
from lobby_display.board import Board, BoardSettings
from lobby_display.config import Settings
from lobby_display.feed_process import FeedProcessEnded, feed_process_source
from lobby_display.recording import Message, RecordingError, flight_files, read_recording
from lobby_display.simulator import SimulatorServer
from lobby_display.updates import Feed, FeedHealth, FeedStatus, Update
from tests.helpers.feeds_harness import Screen, differences, display_settings, until


def feed_children(pid: int) -> list[int]:
    """The feeds' processes `pid` started (its children running `lobby_display.feed_process`)."""
    found = []
    for task in os.listdir(f"/proc/{pid}/task"):
        with contextlib.suppress(OSError):
            for child in Path(f"/proc/{pid}/task/{task}/children").read_text().split():
                with contextlib.suppress(OSError):
                    command = Path(f"/proc/{child}/cmdline").read_bytes().split(b"\0")
                    if b"lobby_display.feed_process" in command:
                        found.append(int(child))
    return found


def alive(pid: int) -> bool:
    """Whether `pid` runs (a zombie, ended and not yet waited for, does not)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@dataclass
class Fed:
    """The screen's side: a board fed by the feeds' process, and what came."""

    settings: Settings
    screen: Screen
    activity: Activity = field(default_factory=Activity)
    updates: list[Update] = field(default_factory=list)

    def emit(self, update: Update) -> None:
        self.updates.append(update)
        self.screen.emit(update)

    def child(self) -> int:
        children = feed_children(os.getpid())
        assert len(children) == 1, f"feeds' processes: {children}"
        return children[0]


@contextlib.asynccontextmanager
async def fed(settings: Settings) -> AsyncIterator[tuple[Fed, asyncio.Task[None]]]:
    """The feeds' process for `settings` running, its updates applied to a board."""
    shown = Fed(settings, Screen(Board(BoardSettings.from_settings(settings))))
    source = feed_process_source(settings, activity=shown.activity)
    task = asyncio.ensure_future(source(shown.emit))
    try:
        yield shown, task
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError, FeedProcessEnded):
            await task


def state_settings(sim: SimulatorServer, directory: Path) -> Settings:
    settings = display_settings(sim, directory)
    state = settings.state.model_copy(update={"directory": directory / "state"})
    return settings.model_copy(update={"state": state})


def recorded_feeds(state: Path) -> set[Feed]:
    """The feeds whose first message the last flight file holds."""
    files = flight_files(state)
    if not files:
        return set()
    try:
        lines = read_recording(files[-1]).lines
    except RecordingError:
        return set()  # just opened: its first lines not written out yet
    return {line.feed for line in lines if isinstance(line, Message) and line.first}


async def test_the_screen_gets_what_the_service_has_through_the_feeds_process(
    simulator: SimulatorServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="lobby_display")
    settings = state_settings(simulator, tmp_path)
    async with fed(settings) as (shown, _):
        board = shown.screen.board
        await until(
            lambda: not differences(board, simulator.truth()),
            timeout=30,
            what="the board equal to the service",
            explain=lambda: differences(board, simulator.truth()),
        )
        assert shown.child() != os.getpid()
        # The child's counts reach the screen's process (monitoring reads them there).
        await until(lambda: set(shown.activity.last_message_at) == set(Feed), timeout=10)
        # Its log records too, logged here under their own names.
        assert any(
            record.name == "lobby_display.auth" and "API key" in record.getMessage()
            for record in caplog.records
        ), [record.getMessage() for record in caplog.records]
        # The child keeps the flight recorder, in the state directory of the settings.
        await until(lambda: recorded_feeds(tmp_path / "state") == set(Feed), timeout=30)


async def test_a_revoked_key_is_said_by_the_feeds_and_logged_here_without_the_key(
    simulator: SimulatorServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="lobby_display")
    key = "fixed-key-of-this-place-0123456789"
    settings = display_settings(simulator, tmp_path, api_key=key)
    async with fed(settings) as (shown, _):
        await until(lambda: shown.screen.live(), timeout=30, what="the feeds live")
        simulator.revoke_keys()  # a fixed key and no credentials: nothing to renew it with
        simulator.drop()
        await until(
            lambda: shown.screen.status(Feed.TICKETS) == FeedStatus.REFUSED,
            timeout=30,
            what="the tickets feed refused",
            explain=lambda: shown.screen.path(Feed.TICKETS),
        )
    refusals = [record for record in caplog.records if record.levelno >= logging.WARNING]
    assert refusals, "the refusal was not logged in the screen's process"
    texts = [record.getMessage() for record in caplog.records]
    texts += [report.error for report in shown.screen.reports]
    assert not [text for text in texts if key in text]


async def test_a_killed_feeds_process_is_reported_then_started_again(
    simulator: SimulatorServer, tmp_path: Path
) -> None:
    settings = display_settings(simulator, tmp_path)
    async with fed(settings) as (shown, task):
        await until(lambda: shown.screen.live(), timeout=30, what="the feeds live")
        os.kill(shown.child(), signal.SIGKILL)
        with pytest.raises(FeedProcessEnded, match="exit status -9"):
            await asyncio.wait_for(task, 10)
    # Every feed said to be reconnecting, with the reason: the board shows nothing as live.
    last = {update.feed: update for update in shown.updates if isinstance(update, FeedHealth)}
    assert {feed: health.status for feed, health in last.items()} == dict.fromkeys(
        Feed, FeedStatus.RECONNECTING
    )
    assert all("the feeds' process ended" in health.error for health in last.values())
    assert not shown.screen.live()
    # The app starts its source again: a new process, and the board is whole again.
    async with fed(settings) as (again, _):
        await until(
            lambda: not differences(again.screen.board, simulator.truth()),
            timeout=30,
            what="the board equal to the service after a restart",
        )


async def test_the_screens_signals_leave_the_feeds_reading_and_sigterm_ends_them(
    simulator: SimulatorServer, tmp_path: Path
) -> None:
    settings = state_settings(simulator, tmp_path)
    async with fed(settings) as (shown, task):
        await until(lambda: shown.screen.live(), timeout=30, what="the feeds live")
        child = shown.child()
        for number in (signal.SIGINT, signal.SIGHUP, signal.SIGUSR1):
            os.kill(child, number)
        seen = len(shown.updates)
        await until(lambda: len(shown.updates) > seen + 3, timeout=10, what="more updates")
        assert alive(child)
        await until(lambda: bool(flight_files(tmp_path / "state")), timeout=10)
        os.kill(child, signal.SIGTERM)  # systemd's stop reaches every process of the unit
        with pytest.raises(FeedProcessEnded, match="exit status 0"):
            await asyncio.wait_for(task, 10)
    # Ended cleanly: its flight file is a whole gzip stream, readable to the end.
    assert read_recording(flight_files(tmp_path / "state")[-1]).lines


SCREEN = """
import asyncio, pickle, sys
from lobby_display.feed_process import feed_process_source
settings = pickle.load(sys.stdin.buffer)
async def main():
    await feed_process_source(settings)(lambda update: None)
asyncio.run(main())
"""


def test_the_feeds_process_ends_when_the_screens_process_dies(
    simulator: SimulatorServer, tmp_path: Path
) -> None:
    settings = display_settings(simulator, tmp_path)
    screen = subprocess.Popen(
        [sys.executable, "-c", SCREEN],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    assert screen.stdin is not None
    screen.stdin.write(pickle.dumps(settings))
    screen.stdin.close()
    try:
        deadline = time.monotonic() + 30
        while not (children := feed_children(screen.pid)):
            assert time.monotonic() < deadline, "no feeds' process started"
            time.sleep(0.05)
        screen.kill()  # no clean-up of the screen's: only the pipe's end tells the child
        screen.wait()
        deadline = time.monotonic() + 10
        while alive(children[0]):
            assert time.monotonic() < deadline, "the feeds' process outlived its screen"
            time.sleep(0.05)
    finally:
        screen.kill()
        screen.wait()
