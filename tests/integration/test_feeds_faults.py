"""The live feeds through every fault of the simulator and of the network: after each, the feed
says what went wrong, reconnects, and the board ends equal to the service's truth. The feeds
never give up, their backoff grows and is capped, and a service's wish to wait is honoured."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from lobby_display.simulator import SimulatorServer
from lobby_display.simulator.proxy import ThreadedFaultProxy
from lobby_display.updates import Feed, FeedStatus
from tests.helpers.feeds_harness import FAST_TIMING, Shown, counters_feed, feeds_display, until

Start = Callable[..., SimulatorServer]
#: Longest a fault may keep the board from the truth once the fault is over (seconds).
BOUND = 5.0


@pytest.fixture
def sim(start_simulator: Start) -> SimulatorServer:
    """The fast simulator, without a `retry:` field: reconnections follow the feeds' backoff."""
    return start_simulator(retry_ms=None)


@pytest.fixture
def proxy(sim: SimulatorServer) -> Iterator[ThreadedFaultProxy]:
    """The fault proxy in front of `sim`."""
    with ThreadedFaultProxy(sim.port) as running:
        yield running


def changes_while_down(sim: SimulatorServer) -> None:
    """Real changes of the place (arrivals, calls, tickets done) that the feeds must catch up on."""
    sim.burst(rate=5000, count=40)


def faults_of(shown: Shown, feed: Feed, mark: int) -> list[str]:
    """The errors `feed` reported since `mark`, but a read timeout: a heartbeat late on a busy
    machine may make any feed reconnect once, which says nothing of the fault under test."""
    return [
        report.error
        for report in shown.screen.failures(feed, mark)
        if "no data for" not in report.error
    ]


async def recover(shown: Shown, feed: Feed, mark: int) -> list[str]:
    """Wait for `feed` to fail and come back, and for the board to equal the truth again;
    return the errors the feed reported meanwhile."""
    await shown.recovered(feed, mark, timeout=BOUND)
    await shown.settled(timeout=BOUND)
    path = shown.screen.outage(feed, mark)
    assert path[0] is FeedStatus.RECONNECTING and path[-1] is FeedStatus.LIVE, path
    errors = [report.error for report in shown.screen.failures(feed, mark)]
    assert all(errors), "every failure is reported in words"
    assert not any("unexpected" in error for error in errors), errors
    return errors


Inject = Callable[[SimulatorServer, str], object]
SERVER_FAULTS: dict[str, tuple[Inject, str]] = {
    "drop": (lambda sim, feed: sim.drop(feed), "dropped"),
    "reset": (lambda sim, feed: sim.reset(feed), "reset"),
    "close": (lambda sim, feed: sim.close(feed), "closed the stream"),
    "malformed": (lambda sim, feed: sim.send_malformed(feed), "unreadable"),
    "unknown": (lambda sim, feed: sim.send_unknown(feed), "UNHEARD_OF/FROBNICATE"),
    "huge": (
        lambda sim, feed: sim.send_huge(feed, size=FAST_TIMING.max_event_bytes * 2),
        f"more than {FAST_TIMING.max_event_bytes} bytes",
    ),
}


@pytest.mark.parametrize("feed", list(Feed))
@pytest.mark.parametrize("fault", list(SERVER_FAULTS))
async def test_the_board_recovers_from_a_fault_of_the_service(
    sim: SimulatorServer,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    fault: str,
    feed: Feed,
) -> None:
    inject, words = SERVER_FAULTS[fault]
    async with feeds_display(sim, tmp_path, caplog) as shown:
        await shown.live(timeout=5)
        await shown.settled(timeout=5)
        mark = shown.screen.mark()
        inject(sim, feed.value)
        changes_while_down(sim)
        errors = await recover(shown, feed, mark)
        assert any(words in error for error in errors), errors
        others = [other for other in Feed if other is not feed]
        assert all(faults_of(shown, other, mark) == [] for other in others)


async def test_a_stalled_feed_is_given_up_after_the_read_timeout_and_read_again(
    sim: SimulatorServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    async with feeds_display(sim, tmp_path, caplog) as shown:
        await shown.live(timeout=5)
        mark = shown.screen.mark()
        sim.stall("queues")
        await until(lambda: shown.screen.failures(Feed.QUEUES, mark), 30, "the stall noticed")
        # Given up for the read timeout's reason (not for an error or a closed stream).
        (report, *_) = shown.screen.failures(Feed.QUEUES, mark)
        assert "stalled" in report.error and "no data for 1 s" in report.error
        # A stalled service holds back new connections' first messages too: still down.
        await until(lambda: len(shown.screen.failures(Feed.QUEUES, mark)) >= 2, 5, "a retry")
        assert shown.screen.status(Feed.QUEUES) is not FeedStatus.LIVE
        changes_while_down(sim)
        sim.resume("queues")
        await recover(shown, Feed.QUEUES, mark)
        assert faults_of(shown, Feed.TICKETS, mark) == []


@pytest.mark.parametrize("status", [500, 503])
async def test_error_answers_are_retried_until_the_service_serves_again(
    sim: SimulatorServer, tmp_path: Path, caplog: pytest.LogCaptureFixture, status: int
) -> None:
    decoder = counters_feed(sim)
    async with feeds_display(sim, tmp_path, caplog, decoder=decoder) as shown:
        await shown.live([Feed.COUNTERS], timeout=5)
        mark = shown.screen.mark()
        sim.fail_next(2, status=status, target="sse")
        sim.drop("counters")
        errors = await recover(shown, Feed.COUNTERS, mark)
        assert sum(f"counters feed answered HTTP {status}" in e for e in errors) == 2, errors
        delays = [
            (report.next_try_at - report.at).total_seconds()
            for report in shown.screen.failures(Feed.COUNTERS, mark)
            if report.next_try_at is not None
        ]
        if status == 503:  # the simulator asks for `Retry-After: 1` with a 503
            assert all(delay >= 1.0 for delay in delays[1:]), delays
        else:
            assert all(delay <= FAST_TIMING.max_delay * 1.5 for delay in delays), delays


async def test_retry_after_holds_for_the_next_attempt_only(
    sim: SimulatorServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    decoder = counters_feed(sim)
    async with feeds_display(sim, tmp_path, caplog, decoder=decoder) as shown:
        await shown.live([Feed.COUNTERS], timeout=5)
        mark = shown.screen.mark()
        sim.fail_next(1, status=503, target="sse")
        sim.drop("counters")
        await recover(shown, Feed.COUNTERS, mark)
        (_, asked) = shown.screen.failures(Feed.COUNTERS, mark)
        assert asked.next_try_at is not None
        assert (asked.next_try_at - asked.at).total_seconds() >= 1.0
        # Once served again, a drop is retried at the feed's own pace.
        mark = shown.screen.mark()
        sim.drop("counters")
        await recover(shown, Feed.COUNTERS, mark)
        (report,) = shown.screen.failures(Feed.COUNTERS, mark)
        assert report.next_try_at is not None
        assert (report.next_try_at - report.at).total_seconds() <= FAST_TIMING.max_delay * 1.5


async def test_the_server_retry_field_is_a_minimum_delay(
    start_simulator: Start, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    sim = start_simulator(retry_ms=700)
    decoder = counters_feed(sim)
    timing = dataclasses.replace(FAST_TIMING, max_delay=1.0)  # the wish is within the cap
    async with feeds_display(sim, tmp_path, caplog, decoder=decoder, timing=timing) as shown:
        await shown.live([Feed.COUNTERS], timeout=5)
        mark = shown.screen.mark()
        sim.drop("counters")
        await recover(shown, Feed.COUNTERS, mark)
        (report,) = shown.screen.failures(Feed.COUNTERS, mark)
        assert report.next_try_at is not None
        assert (report.next_try_at - report.at).total_seconds() >= 0.7


async def test_a_huge_retry_field_waits_no_longer_than_the_backoff(
    start_simulator: Start, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # A proxy or a misconfigured service asks for 31 years between reconnections.
    sim = start_simulator(retry_ms=999_999_999_999)
    decoder = counters_feed(sim)
    async with feeds_display(sim, tmp_path, caplog, decoder=decoder) as shown:
        await shown.live([Feed.COUNTERS], timeout=5)
        for _ in range(2):  # and the same again once the feed is back
            mark = shown.screen.mark()
            sim.close("counters")  # a clean end of the stream
            await recover(shown, Feed.COUNTERS, mark)
            (report,) = shown.screen.failures(Feed.COUNTERS, mark)
            assert "closed the stream" in report.error
            assert report.next_try_at is not None
            waited = (report.next_try_at - report.at).total_seconds()
            assert waited <= FAST_TIMING.max_delay * 1.5, f"waits {waited:g} s"


async def test_a_retry_field_holds_until_a_stream_opens_without_one(
    start_simulator: Start, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    sim = start_simulator(retry_ms=900)
    decoder = counters_feed(sim)
    timing = dataclasses.replace(FAST_TIMING, max_delay=1.0)
    async with feeds_display(sim, tmp_path, caplog, decoder=decoder, timing=timing) as shown:
        await shown.live([Feed.COUNTERS], timeout=5)
        sim.call(lambda simulator: setattr(simulator.hub, "retry_ms", None))  # wishes no more
        delays = []
        for _ in range(2):
            mark = shown.screen.mark()
            sim.drop("counters")
            await recover(shown, Feed.COUNTERS, mark)
            (report,) = shown.screen.failures(Feed.COUNTERS, mark)
            assert report.next_try_at is not None
            delays.append((report.next_try_at - report.at).total_seconds())
        # The stream that asked for 0.9 s is waited for; the next one, which asked nothing, is
        # retried at the feed's own pace (its first delay: its earlier failures were one each).
        assert delays[0] >= 0.9
        assert delays[1] < 0.9, delays


async def test_the_feeds_never_give_up_and_their_backoff_is_capped(
    sim: SimulatorServer,
    proxy: ThreadedFaultProxy,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    timing = dataclasses.replace(FAST_TIMING, first_delay=0.025, max_delay=0.2)
    async with feeds_display(sim, tmp_path, caplog, url=proxy.url, timing=timing) as shown:
        await shown.live(timeout=5)
        mark = shown.screen.mark()
        proxy.refuse(True)  # every connection (REST too) is reset at once, again and again
        proxy.reset_all()
        await until(
            lambda: len(shown.screen.failures(Feed.TICKETS, mark)) >= 8,
            10,
            "eight failed attempts",
        )
        reports = shown.screen.failures(Feed.TICKETS, mark)
        assert [report.attempt for report in reports] == list(range(1, len(reports) + 1))
        assert all(report.status is FeedStatus.RECONNECTING and report.error for report in reports)
        delays = [
            (report.next_try_at - report.at).total_seconds()
            for report in reports
            if report.next_try_at is not None
        ]
        assert len(delays) == len(reports)
        assert delays[0] <= timing.first_delay * 1.5
        assert all(timing.first_delay <= delay <= timing.max_delay * 1.5 for delay in delays)
        assert min(delays[4:]) >= timing.max_delay, f"the delay grew to the cap: {delays}"
        changes_while_down(sim)
        proxy.refuse(False)
        await shown.live(timeout=BOUND)
        await shown.settled(timeout=BOUND)


async def test_a_feed_that_stayed_healthy_starts_its_backoff_afresh(
    sim: SimulatorServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    timing = dataclasses.replace(FAST_TIMING, healthy_after=2.0)
    async with feeds_display(sim, tmp_path, caplog, timing=timing) as shown:
        await shown.live(timeout=5)
        for attempt in (1, 2, 3):  # short-lived connections: the attempts add up
            mark = shown.screen.mark()
            sim.drop("tickets")
            await recover(shown, Feed.TICKETS, mark)
            assert [r.attempt for r in shown.screen.failures(Feed.TICKETS, mark)] == [attempt]
        # Connected for `healthy_after`: the next failure is attempt 1 again.
        connected = shown.screen.since(mark, Feed.TICKETS)[-1].at
        await until(lambda: _age(connected) > timing.healthy_after + 0.2, 5, "a healthy while")
        mark = shown.screen.mark()
        sim.drop("tickets")
        await recover(shown, Feed.TICKETS, mark)
        assert [r.attempt for r in shown.screen.failures(Feed.TICKETS, mark)] == [1]


def _age(moment: datetime) -> float:
    return (datetime.now(UTC) - moment).total_seconds()


# --- faults of the network, through the proxy -------------------------------------------------


async def test_a_cut_in_the_middle_of_an_event_is_never_half_applied(
    sim: SimulatorServer,
    proxy: ThreadedFaultProxy,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    async with feeds_display(sim, tmp_path, caplog, url=proxy.url) as shown:
        await shown.live(timeout=5)
        await shown.settled(timeout=5)
        mark = shown.screen.mark()
        assert proxy.cut_mid_event() >= 3
        changes_while_down(sim)
        errors = await recover(shown, Feed.TICKETS, mark)
        assert proxy.cuts >= 1
        assert any("dropped" in error for error in errors), errors


async def test_a_reset_and_a_stall_of_the_network(
    sim: SimulatorServer,
    proxy: ThreadedFaultProxy,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    async with feeds_display(sim, tmp_path, caplog, url=proxy.url) as shown:
        await shown.live(timeout=5)
        mark = shown.screen.mark()
        proxy.reset_all()
        for feed in Feed:
            errors = await recover(shown, feed, mark)
            assert any("reset" in error for error in errors), errors
        mark = shown.screen.mark()
        proxy.stall()
        await until(
            lambda: all(shown.screen.failures(feed, mark) for feed in Feed), 5, "the stall noticed"
        )
        changes_while_down(sim)
        proxy.resume()
        for feed in Feed:
            errors = await recover(shown, feed, mark)
            assert any("stalled" in error for error in errors), errors


async def test_events_dripping_byte_by_byte_are_read_whole(
    start_simulator: Start, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # A quiet place (speed 1): a drip carries a few thousand bytes a second, not a busy place.
    sim = start_simulator(speed=1.0)
    with ThreadedFaultProxy(sim.port) as proxy:
        async with feeds_display(sim, tmp_path, caplog, url=proxy.url) as shown:
            await shown.live(timeout=5)
            await shown.settled(timeout=5)
            mark = shown.screen.mark()
            before = sim.truth()["eventIds"]["tickets"]
            proxy.drip(size=1, delay=0.00001)  # a pause lets every connection drip
            sim.burst(rate=100, count=2)
            await shown.settled(timeout=BOUND)
            failures = {feed: shown.screen.failures(feed, mark) for feed in Feed}
            assert not any(failures.values()), failures
            assert sim.truth()["eventIds"]["tickets"] >= before + 2, "events went through"
            proxy.stop_drip()
