"""The live feeds and the API key: a rotated or revoked key is replaced by one fresh key for all
feeds, which reconnect with it; a fresh key refused too, or no key to be had, shows as REFUSED
and is retried until the service accepts the display again. No key ever reaches a log."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from lobby_display.simulator import SimulatorServer
from lobby_display.updates import Feed, FeedStatus
from tests.helpers.feeds_harness import counters_feed, feeds_display, until

Start = Callable[..., SimulatorServer]


@pytest.fixture
def sim(start_simulator: Start) -> SimulatorServer:
    """The fast simulator, without a `retry:` field: reconnections follow the feeds' backoff."""
    return start_simulator(retry_ms=None)


def issued(sim: SimulatorServer) -> int:
    """API keys the simulator has handed out so far."""
    return int(sim.status()["apiKeys"]["issued"])


@pytest.mark.parametrize("change", ["rotate", "revoke"])
async def test_a_refused_key_is_renewed_once_for_every_feed(
    sim: SimulatorServer, tmp_path: Path, caplog: pytest.LogCaptureFixture, change: str
) -> None:
    async with feeds_display(sim, tmp_path, caplog) as shown:
        await shown.live(timeout=5)
        before = issued(sim)
        if change == "rotate":
            sim.rotate_keys(grace=0)
        else:
            sim.revoke_keys()
        mark = shown.screen.mark()
        sim.burst(rate=5000, count=20)
        sim.drop()  # every feed reconnects with the key it has
        for feed in Feed:
            await shown.recovered(feed, mark, timeout=5)
        await shown.settled(timeout=5)
        assert issued(sim) == before + 1, "one fresh key, shared by the three feeds"
        for feed in Feed:
            # The refusal was answered by the fresh key on the same attempt: never REFUSED.
            assert FeedStatus.REFUSED not in shown.screen.path(feed, mark)
    assert len(shown.secrets) >= 3  # the first key, the developer token, the fresh key


async def test_a_fresh_key_refused_too_shows_refused_then_recovers(
    sim: SimulatorServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    decoder = counters_feed(sim)
    async with feeds_display(sim, tmp_path, caplog, decoder=decoder) as shown:
        await shown.live([Feed.COUNTERS], timeout=5)
        before = issued(sim)
        mark = shown.screen.mark()
        sim.fail_next(2, status=401, target="sse")  # the old key, then the fresh one
        sim.drop("counters")
        await shown.recovered(Feed.COUNTERS, mark, timeout=5)
        await shown.settled(timeout=5)
        assert shown.screen.outage(Feed.COUNTERS, mark) == [
            FeedStatus.RECONNECTING,  # the drop
            FeedStatus.REFUSED,
            FeedStatus.LIVE,
        ]
        (_, refused) = shown.screen.failures(Feed.COUNTERS, mark)
        assert "refused" in refused.error and "fresh" in refused.error
        assert issued(sim) == before + 1


async def test_no_key_to_be_had_shows_refused_until_the_service_gives_one(
    sim: SimulatorServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    decoder = counters_feed(sim)
    async with feeds_display(sim, tmp_path, caplog, decoder=decoder) as shown:
        await shown.live([Feed.COUNTERS], timeout=5)
        mark = shown.screen.mark()
        sim.revoke_keys()
        # The feed's key is refused, and so is the developer token, twice.
        sim.fail_next(3, status=401, target="rest")
        sim.drop("counters")
        await shown.recovered(Feed.COUNTERS, mark, timeout=5)
        await shown.settled(timeout=5)
        path = shown.screen.outage(Feed.COUNTERS, mark)
        assert path == [FeedStatus.RECONNECTING, FeedStatus.REFUSED, FeedStatus.LIVE], path
        errors = [report.error for report in shown.screen.failures(Feed.COUNTERS, mark)[1:]]
        assert len(errors) >= 2, errors
        assert all("api_key" in error and "401" in error for error in errors), errors
        assert not any("unexpected" in error for error in errors), errors


async def test_a_key_service_that_is_down_is_retried_not_refused(
    sim: SimulatorServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    decoder = counters_feed(sim)
    async with feeds_display(sim, tmp_path, caplog, decoder=decoder) as shown:
        await shown.live([Feed.COUNTERS], timeout=5)
        mark = shown.screen.mark()
        sim.revoke_keys()
        sim.fail_next(1, status=503, target="rest")  # the request for a new key
        sim.drop("counters")
        await shown.recovered(Feed.COUNTERS, mark, timeout=5)
        assert shown.screen.outage(Feed.COUNTERS, mark) == [
            FeedStatus.RECONNECTING,
            FeedStatus.LIVE,
        ]
        errors = [report.error for report in shown.screen.failures(Feed.COUNTERS, mark)]
        assert any("api_key" in error and "503" in error for error in errors), errors


async def test_a_fixed_key_revoked_is_refused_and_retried_for_ever(
    sim: SimulatorServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    fixed = "fixed-key-0123456789abcdef"
    async with feeds_display(sim, tmp_path, caplog, api_key=fixed) as shown:
        await shown.live(timeout=5)
        mark = shown.screen.mark()
        sim.revoke_keys()
        sim.drop()
        await until(
            lambda: all(len(shown.screen.failures(feed, mark)) >= 5 for feed in Feed),
            5,
            "four refused attempts of each feed after the drop",
        )
        for feed in Feed:
            reports = shown.screen.failures(feed, mark)
            assert reports[0].status is FeedStatus.RECONNECTING  # the drop
            assert {report.status for report in reports[1:]} == {FeedStatus.REFUSED}
            assert "fixed key cannot be renewed" in reports[-1].error
            assert [report.attempt for report in reports] == list(range(1, len(reports) + 1))
        # The operator puts the key back on the service's side: the display comes back.
        sim.call(lambda sim: sim.keys.add(fixed))
        await shown.live(timeout=5)
        await shown.settled(timeout=5)
    assert fixed in shown.secrets
