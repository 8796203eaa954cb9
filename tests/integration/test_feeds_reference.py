"""Reference data with the live feeds: names are reloaded periodically and soon after a ticket
names an endpoint nobody knew; a place whose queues change gets its feeds restarted for the new
set; a service that cannot give the names at start-up is asked again until it does."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path

import pytest

from lobby_display.client import DisplayClient
from lobby_display.models import Queue, clean_text
from lobby_display.simulator import SimulatorServer
from lobby_display.updates import Feed, FeedStatus, ReferenceData
from tests.helpers.feeds_harness import FAST_TIMING, Load, feeds_display, until

Start = Callable[..., SimulatorServer]


async def test_names_are_reloaded_periodically(
    simulator: SimulatorServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # Hostile names include 100 KB ones: a first page holding a few must still be read.
    timing = dataclasses.replace(FAST_TIMING, max_event_bytes=1_000_000)
    async with feeds_display(
        simulator, tmp_path, caplog, refresh_every=0.3, timing=timing
    ) as shown:
        await shown.live(timeout=5)
        queue_id = simulator.queue_ids[0]
        before = dict(shown.board.queue_names(queue_id))
        simulator.set_hostile(True)  # every name changes (to hostile text)
        loads = len(shown.screen.references)
        await until(lambda: len(shown.screen.references) >= loads + 1, 3, "a periodic reload")
        fresh = await shown.client.place_queues(simulator.place_id, ["fr_FR", "en_US"])
        await until(
            lambda: shown.board.queue_names(queue_id)["fr_FR"] == fresh[queue_id].name["fr_FR"],
            3,
            "the new names on the board",
        )
        assert shown.board.queue_names(queue_id) != before
        name = shown.board.queue_names(queue_id)["fr_FR"]
        assert name == clean_text(name) and "\x1b" not in name
        # (Hostile labels of tickets not called change without an event: tickets not compared.)
        await shown.settled(timeout=5, feeds=[Feed.QUEUES, Feed.COUNTERS])
        assert shown.screen.live(), "a reload does not disturb the feeds"


async def test_an_unknown_endpoint_brings_a_reload_soon(
    simulator: SimulatorServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    truth = simulator.truth()
    served = [t["endpoint"]["id"] for t in truth["tickets"].values() if t["endpoint"]["id"]]
    assert served, "the simulator has tickets at a desk"
    hidden = served[0]

    def stale_first(client: DisplayClient, real: Load) -> Load:
        """The service's endpoint list lags: the first answer lacks one endpoint."""
        calls = 0

        async def load() -> ReferenceData:
            nonlocal calls
            calls += 1
            reference = await real()
            if calls == 1:
                endpoints = {k: v for k, v in reference.endpoints.items() if k != hidden}
                reference = dataclasses.replace(reference, endpoints=endpoints)
            return reference

        return load

    async with feeds_display(
        simulator, tmp_path, caplog, load=stale_first, refresh_every=600
    ) as shown:
        await shown.live(timeout=5)
        # Soon, not at the next periodic refresh (600 s away: far beyond this bound).
        await until(lambda: len(shown.screen.references) >= 2, 60, "a reload")
        assert hidden in shown.screen.references[-1].endpoints
        assert hidden not in shown.screen.references[0].endpoints
        assert "unknown queue or endpoint" in caplog.text
        await shown.settled(timeout=5)


async def test_a_new_queue_at_the_place_restarts_the_feeds_for_it(
    simulator: SimulatorServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    newest = simulator.queue_ids[-1]

    def opens_later(client: DisplayClient, real: Load) -> Load:
        """The place's last queue appears only from the second load on."""
        calls = 0

        async def load() -> ReferenceData:
            nonlocal calls
            calls += 1
            reference = await real()
            if calls == 1:
                queues: dict[str, Queue] = {
                    k: v for k, v in reference.queues.items() if k != newest
                }
                counters = {k: v for k, v in reference.counters.items() if k != newest}
                reference = dataclasses.replace(reference, queues=queues, counters=counters)
            return reference

        return load

    async with feeds_display(
        simulator, tmp_path, caplog, load=opens_later, refresh_every=0.5
    ) as shown:
        await shown.live(timeout=5)
        feeds = shown.feeds
        assert feeds is not None
        assert newest not in feeds.ids()[0]
        assert not any(t.queue.id == newest for t in shown.board.tickets.values())
        mark = shown.screen.mark()
        await until(lambda: newest in feeds.ids()[0], 3, "the new queue followed")
        await until(
            lambda: any(t.queue.id == newest for t in shown.board.tickets.values()),
            5,
            "the new queue's tickets",
        )
        await shown.settled(timeout=5)
        assert "restarting the feeds" in caplog.text
        for feed in Feed:
            assert shown.screen.status(feed) is FeedStatus.LIVE
            assert FeedStatus.LIVE in shown.screen.path(feed, mark)


async def test_names_unavailable_at_start_are_asked_for_again(
    simulator: SimulatorServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    simulator.fail_next(3, status=503, target="rest")
    async with feeds_display(simulator, tmp_path, caplog) as shown:
        await shown.live(timeout=8)
        await shown.settled(timeout=5)
        for feed in Feed:
            waiting = [r for r in shown.screen.reports if r.feed is feed and r.error]
            assert waiting and all(r.status is FeedStatus.CONNECTING for r in waiting)
            assert all("cannot load the place's queues and names" in r.error for r in waiting)
            assert all("503" in r.error for r in waiting)
