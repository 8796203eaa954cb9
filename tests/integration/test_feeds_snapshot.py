"""The live feeds against the simulator: the first messages make a board equal to the service's
truth, a first ticket page short of the total is completed over REST, and the board keeps up
with a busy place and a burst of events."""

from __future__ import annotations

import itertools
import logging
from collections.abc import Callable
from pathlib import Path

import pytest

from lobby_display.simulator import SimulatorServer
from lobby_display.updates import Feed, FeedStatus
from tests.helpers.feeds_harness import FAST_TIMING, feeds_display, until

Start = Callable[..., SimulatorServer]


async def test_first_messages_make_the_board_equal_to_the_truth(
    simulator: SimulatorServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    async with feeds_display(simulator, tmp_path, caplog) as shown:
        await shown.live(timeout=5)
        await shown.settled(timeout=5)
        for feed in Feed:
            assert shown.screen.path(feed) == [FeedStatus.CONNECTING, FeedStatus.LIVE]
        assert len(shown.board.tickets) > 20, "the truth compared has tickets"
        # The place moves on (speed 60): the board follows it event by event.
        first = simulator.status()["feeds"]["tickets"]["lastEventId"]
        await until(
            lambda: simulator.status()["feeds"]["tickets"]["lastEventId"] >= first + 5,
            timeout=10,
            what="five ticket events",
        )
        await shown.settled(timeout=5)
        assert shown.screen.path(Feed.TICKETS) == [FeedStatus.CONNECTING, FeedStatus.LIVE]
        # LIVE is said at the first message, then at most once per `health_every`.
        live = [r for r in shown.screen.since(0, Feed.TICKETS) if r.status is FeedStatus.LIVE]
        gaps = [(b.at - a.at).total_seconds() for a, b in itertools.pairwise(live)]
        assert all(gap >= FAST_TIMING.health_every for gap in gaps), gaps
        assert all(report.last_message_at is not None for report in live)


async def test_the_board_follows_only_the_configured_queues_and_counters(
    simulator: SimulatorServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    queues = simulator.queue_ids[1:3]
    counters = simulator.queue_ids[:1]
    place = {"queues": queues, "counters": counters}
    async with feeds_display(simulator, tmp_path, caplog, place=place) as shown:
        await shown.live(timeout=5)
        await shown.settled(timeout=5)
        assert [view.queue_id for view in shown.board.queues()] == queues
        assert [view.counter_id for view in shown.board.counters()] == counters
        assert {ticket.queue.id for ticket in shown.board.tickets.values()} <= set(queues)


async def test_a_short_first_page_is_completed_over_rest(
    start_simulator: Start, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    sim = start_simulator(tickets=130, speed=5.0)
    caplog.set_level(logging.INFO, logger="lobby_display.feeds")
    async with feeds_display(sim, tmp_path, caplog) as shown:
        await shown.live([Feed.TICKETS], timeout=5)
        await shown.settled(timeout=5)
        assert len(shown.board.tickets) > 100, "more than two pages, all on the board"
        assert "first page holds 50 of" in caplog.text


async def test_a_failed_page_read_is_retried_with_a_fresh_first_page(
    start_simulator: Start, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    sim = start_simulator(tickets=130, speed=5.0)
    async with feeds_display(sim, tmp_path, caplog) as shown:
        await shown.live(timeout=5)
        mark = shown.screen.mark()
        sim.fail_next(1, status=503, target="rest")  # page 2, read after the next first page
        sim.drop("tickets")
        await shown.recovered(Feed.TICKETS, mark, timeout=10)
        await shown.settled(timeout=5)
        errors = [report.error for report in shown.screen.failures(Feed.TICKETS, mark)]
        assert any("503" in error for error in errors), errors
        assert not any("unexpected" in error for error in errors), errors


async def test_a_burst_of_events_is_followed_to_the_end(
    simulator: SimulatorServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    async with feeds_display(simulator, tmp_path, caplog) as shown:
        await shown.live(timeout=5)
        simulator.burst(rate=2000, count=1000)
        await until(lambda: not simulator.status()["burst"]["running"], 30, "the burst's end")
        assert simulator.status()["burst"]["emitted"] >= 1000
        await shown.settled(timeout=10)
        assert shown.screen.live()
        assert shown.screen.path(Feed.TICKETS) == [FeedStatus.CONNECTING, FeedStatus.LIVE]
