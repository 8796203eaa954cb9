"""Board: how fresh each part of the screen is, from its feed's health and the time."""

from __future__ import annotations

import pytest

from lobby_display.board import Board
from lobby_display.updates import Feed, FeedHealth, FeedStatus
from lobby_display.views import PART_FEED, Freshness, Part
from tests.helpers.board_support import T0, at, health, make_board

STALE_AFTER = 30.0
WITHDRAW_AFTER = 300.0


def board_with_live_feeds() -> Board:
    """A board whose three feeds went live at T0."""
    board = make_board(stale_after_seconds=STALE_AFTER, withdraw_after_seconds=WITHDRAW_AFTER)
    for feed in Feed:
        board.apply(health(feed, FeedStatus.LIVE, 0), at(0))
    return board


@pytest.mark.parametrize("part", list(Part))
def test_a_part_goes_live_reconnecting_stale_withdrawn_and_live_again(part: Part) -> None:
    board = board_with_live_feeds()
    feed = PART_FEED[part]
    assert board.freshness(part, at(5)) is Freshness.LIVE

    board.apply(health(feed, FeedStatus.RECONNECTING, 100, "connection reset"), at(100))
    # Later reports while down do not move "down since".
    board.apply(health(feed, FeedStatus.RECONNECTING, 110), at(110))

    assert board.freshness(part, at(129.9)) is Freshness.RECONNECTING
    assert board.freshness(part, at(130)) is Freshness.STALE
    assert board.parts(at(130))[part].down_since == at(100)
    assert board.freshness(part, at(399.9)) is Freshness.STALE
    assert board.freshness(part, at(400)) is Freshness.WITHDRAWN

    board.apply(health(feed, FeedStatus.LIVE, 500), at(500))

    view = board.parts(at(500))[part]
    assert view.freshness is Freshness.LIVE and view.down_since is None


def test_parts_depend_on_their_own_feed_only() -> None:
    board = board_with_live_feeds()

    board.apply(health(Feed.COUNTERS, FeedStatus.RECONNECTING, 10), at(10))

    freshness = {part: view.freshness for part, view in board.parts(at(200)).items()}
    assert freshness == {
        Part.CALLS: Freshness.LIVE,
        Part.QUEUES: Freshness.LIVE,
        Part.COUNTERS: Freshness.STALE,
    }
    assert PART_FEED == {
        Part.CALLS: Feed.TICKETS,
        Part.QUEUES: Feed.QUEUES,
        Part.COUNTERS: Feed.COUNTERS,
    }


def test_a_feed_never_live_is_down_since_the_board_started() -> None:
    board = make_board(stale_after_seconds=STALE_AFTER, withdraw_after_seconds=WITHDRAW_AFTER)

    board.apply(health(Feed.TICKETS, FeedStatus.CONNECTING, 20), at(20))
    board.apply(health(Feed.TICKETS, FeedStatus.RECONNECTING, 25), at(25))

    view = board.parts(at(30))[Part.CALLS]
    assert view.down_since == T0 and view.freshness is Freshness.STALE
    assert board.freshness(Part.QUEUES, at(29)) is Freshness.RECONNECTING


def test_a_refused_feed_ages_like_any_feed_that_is_down() -> None:
    board = board_with_live_feeds()

    board.apply(health(Feed.QUEUES, FeedStatus.REFUSED, 0, "refused"), at(0))

    view = board.parts(at(WITHDRAW_AFTER))[Part.QUEUES]
    assert view.freshness is Freshness.WITHDRAWN and view.error == "refused"


def test_next_change_at_names_when_a_down_part_gets_older() -> None:
    board = board_with_live_feeds()
    board.apply(health(Feed.QUEUES, FeedStatus.RECONNECTING, 100), at(100))

    assert board.next_change_at(at(101)) == at(100 + STALE_AFTER)
    assert board.next_change_at(at(100 + STALE_AFTER)) == at(100 + WITHDRAW_AFTER)
    assert board.next_change_at(at(100 + WITHDRAW_AFTER)) is None
    assert board.next_freshness_change_at(at(101)) == at(100 + STALE_AFTER)


def test_the_health_view_tells_the_attempt_and_the_next_try() -> None:
    board = board_with_live_feeds()

    board.apply(
        FeedHealth(
            feed=Feed.TICKETS,
            status=FeedStatus.RECONNECTING,
            at=at(10),
            attempt=3,
            next_try_at=at(14),
            error="stream stalled",
        ),
        at(10),
    )

    view = board.health(at(11))[Feed.TICKETS]
    assert (view.attempt, view.next_try_at, view.error) == (3, at(14), "stream stalled")
    assert view.status is FeedStatus.RECONNECTING
