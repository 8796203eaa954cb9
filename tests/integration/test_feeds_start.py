"""Feeds at start-up: with the queues and counters known before the names (a restart knows them
from its saved board), the streams open at once, beside the first load of the names; known ids
that no longer hold are replaced by the place's; credentials refused before the first names
are said to be refused."""

from __future__ import annotations

import asyncio
import contextlib
import functools
from collections.abc import AsyncIterator, Sequence
from pathlib import Path

import pytest

from lobby_display.auth import KeyRefused
from lobby_display.feeds import Feeds, load_reference
from lobby_display.simulator import SimulatorServer
from lobby_display.updates import Feed, FeedStatus, ReferenceData
from tests.helpers.feeds_harness import FAST_TIMING, LOCALES, Shown, feeds_display, until


class HeldNames:
    """The place's names, held back until released (a slow reference route); counts loads."""

    def __init__(self, shown: Shown) -> None:
        self.real = functools.partial(
            load_reference, shown.client, shown.settings.place.id, LOCALES
        )
        self.released = asyncio.Event()
        self.loads = 0

    async def __call__(self) -> ReferenceData:
        self.loads += 1
        await self.released.wait()
        return await self.real()


@contextlib.asynccontextmanager
async def running(feeds: Feeds) -> AsyncIterator[Feeds]:
    task = asyncio.create_task(feeds.run(), name="feeds under test")
    try:
        yield feeds
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


def feeds_of(shown: Shown, load: HeldNames, known: tuple[Sequence[str], Sequence[str]]) -> Feeds:
    return Feeds(
        shown.client,
        load,
        shown.screen.emit,
        langs=LOCALES,
        refresh_every=600,
        timing=FAST_TIMING,
        known_ids=known,
    )


async def test_known_ids_open_the_streams_while_the_names_load(
    simulator: SimulatorServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    ids = simulator.queue_ids  # the simulator's counters have their queue's id
    async with feeds_display(simulator, tmp_path, caplog, start=False) as shown:
        names = HeldNames(shown)
        async with running(feeds_of(shown, names, (ids, ids))) as feeds:
            await shown.live(timeout=5)
            assert names.loads == 1 and not shown.screen.references, "names still loading"
            assert feeds.ids() == (sorted(ids), sorted(ids))
            names.released.set()
            await until(lambda: shown.screen.references, 5, "the names")
            await shown.settled(timeout=5)
            assert "restarting the feeds" not in caplog.text
            assert all(FeedStatus.LIVE is shown.screen.status(feed) for feed in Feed)


async def test_known_ids_that_changed_give_way_to_the_places(
    simulator: SimulatorServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    ids = simulator.queue_ids
    saved = (ids[:2], ids[:1])  # the place has more queues and counters since
    async with feeds_display(simulator, tmp_path, caplog, start=False) as shown:
        names = HeldNames(shown)
        async with running(feeds_of(shown, names, saved)) as feeds:
            await shown.live(timeout=5)
            assert feeds.ids() == (sorted(saved[0]), sorted(saved[1]))
            mark = shown.screen.mark()
            names.released.set()
            await until(lambda: feeds.ids() == (sorted(ids), sorted(ids)), 5, "the new ids")
            await until(lambda: shown.screen.live() and shown.screen.path(Feed.QUEUES, mark), 5)
            await shown.settled(timeout=5)
            assert "restarting the feeds" in caplog.text
            assert {view.queue_id for view in shown.board.queues()} == set(ids)


async def test_no_ids_known_waits_for_the_names(
    simulator: SimulatorServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    async with feeds_display(simulator, tmp_path, caplog, start=False) as shown:
        names = HeldNames(shown)
        async with running(feeds_of(shown, names, ((), ()))):
            await until(lambda: names.loads == 1, 5, "the names asked for")
            await asyncio.sleep(0.3)  # time enough for a stream to open, were one opened
            assert shown.screen.reports == [], "no stream before the place's ids are known"
            names.released.set()
            await shown.live(timeout=5)
            await shown.settled(timeout=5)


async def test_credentials_refused_before_the_first_names_are_said_to_be_refused(
    simulator: SimulatorServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    async with feeds_display(simulator, tmp_path, caplog, start=False) as shown:
        real = functools.partial(load_reference, shown.client, shown.settings.place.id, LOCALES)
        refusals = 2

        async def load() -> ReferenceData:
            nonlocal refusals
            if refusals:
                refusals -= 1
                raise KeyRefused("GET /v1/api_key answered HTTP 401", status=401)
            return await real()

        feeds = Feeds(shown.client, load, shown.screen.emit, langs=LOCALES, timing=FAST_TIMING)
        async with running(feeds):
            await shown.live(timeout=5)
        for feed in Feed:
            assert shown.screen.path(feed)[:2] == [FeedStatus.REFUSED, FeedStatus.CONNECTING]
            (refused, *_) = shown.screen.failures(feed)
            assert "cannot load the place's queues and names" in refused.error
            assert "401" in refused.error
