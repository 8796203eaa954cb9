"""The kiosk's feeds start before its screen: what they bring first is handed to the screen in
order, later updates reach it in its own context, and a source started again starts afresh."""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Callable
from datetime import UTC, datetime

from lobby_display.kiosk import EarlyFeeds
from lobby_display.updates import Feed, FeedHealth, FeedStatus, Update

SCREEN: contextvars.ContextVar[str] = contextvars.ContextVar("screen")


def health(feed: Feed, status: FeedStatus = FeedStatus.LIVE) -> FeedHealth:
    return FeedHealth(feed=feed, status=status, at=datetime(2026, 11, 22, tzinfo=UTC))


class Source:
    """A source of updates driven by the test; counts how often it was started."""

    def __init__(self) -> None:
        self.emits: list[Callable[[Update], None]] = []
        self.stopped = asyncio.Event()

    async def __call__(self, emit: Callable[[Update], None]) -> None:
        self.emits.append(emit)
        try:
            await asyncio.Event().wait()
        finally:
            self.stopped.set()


class Screen:
    """What the app does with its source: runs it in a task of its own context."""

    def __init__(self) -> None:
        self.seen: list[tuple[Update, str]] = []

    def emit(self, update: Update) -> None:
        self.seen.append((update, SCREEN.get("not the screen's context")))

    def start(self, source: Callable[[Callable[[Update], None]], object]) -> asyncio.Task[None]:
        async def worker() -> None:
            SCREEN.set("screen")
            await source(self.emit)  # type: ignore[misc]

        return asyncio.get_running_loop().create_task(worker())


async def test_updates_before_the_screen_come_first_then_each_in_the_screens_context() -> None:
    source, screen = Source(), Screen()
    feeds = EarlyFeeds(source)
    await asyncio.sleep(0)
    (early_emit,) = source.emits
    early_emit(health(Feed.TICKETS, FeedStatus.CONNECTING))
    early_emit(health(Feed.QUEUES))
    assert feeds.kept == 2
    task = screen.start(feeds.source)
    await asyncio.sleep(0)
    early_emit(health(Feed.COUNTERS))
    assert [update for update, _ in screen.seen] == [
        health(Feed.TICKETS, FeedStatus.CONNECTING),
        health(Feed.QUEUES),
        health(Feed.COUNTERS),
    ]
    assert {context for _, context in screen.seen} == {"screen"}
    assert feeds.kept == 0 and len(source.emits) == 1  # the same feeds, not started again
    task.cancel()
    await asyncio.wait_for(source.stopped.wait(), 5)


async def test_a_source_started_again_runs_the_feeds_afresh() -> None:
    source, screen = Source(), Screen()
    feeds = EarlyFeeds(source)
    first = screen.start(feeds.source)
    await asyncio.sleep(0)
    first.cancel()
    await asyncio.wait_for(source.stopped.wait(), 5)
    source.stopped.clear()
    again = screen.start(feeds.source)
    await asyncio.sleep(0)
    assert len(source.emits) == 2
    assert source.emits[1] == screen.emit  # the screen's own emit, in the screen's task
    again.cancel()
    await asyncio.wait_for(source.stopped.wait(), 5)
