"""Board: saving what the screen shows and showing it again, out of date, after a restart."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

import pytest

from lobby_display.board import Board, BoardSettings
from lobby_display.models import TicketState
from lobby_display.state import SavedBoard
from lobby_display.updates import (
    CountersSnapshot,
    Feed,
    FeedStatus,
    QueueStatesSnapshot,
    TicketChanged,
    TicketsSnapshot,
)
from lobby_display.views import Freshness, Part
from tests.helpers.board_support import (
    at,
    counter,
    health,
    make_board,
    queue_state,
    recent_labels,
    reference,
    ticket,
)

SETTINGS = BoardSettings(stale_after_seconds=30, withdraw_after_seconds=300)


def busy_board() -> Board:
    """A live board with names, queue states, counters, tickets and calls."""
    board = Board(SETTINGS, started_at=at(0))
    board.apply(
        reference(
            place={"en_US": "Town hall", "fr_FR": "Mairie"},
            queues={
                "q1": {
                    "name": {"en_US": "Post", "fr_FR": "Courrier"},
                    "appointmentTypes": {"visit": {"name": {"en_US": "Visit"}}},
                },
            },
            endpoints={"e1": {"en_US": "Desk 1", "fr_FR": "Guichet 1"}},
            counters={"c1": {"en_US": "Visitors"}},
        ),
        at(0),
    )
    board.apply(
        QueueStatesSnapshot(
            {
                "q1": queue_state(
                    "q1",
                    queueIsOpened=True,
                    queueIsFullForTheDay=True,
                    queueLength={"queueTicketLength": 4, "queuePeopleLength": 6},
                    allFirstAvailabilities={"visit": {"1": "2026-11-23T09:00:00.000Z"}},
                ),
            }
        ),
        at(0),
    )
    board.apply(CountersSnapshot({"c1": counter("c1", 41)}), at(0))
    board.apply(
        TicketsSnapshot(
            (ticket("w", queue="q2", queue_name="Parcels", group=3), ticket("a")),
        ),
        at(0),
    )
    for feed in Feed:
        board.apply(health(feed, FeedStatus.LIVE, 0), at(0))
    board.apply(
        TicketChanged(ticket("a", TicketState.CALLED, called_at=at(5), endpoint="e1")), at(5)
    )
    board.apply(
        TicketChanged(ticket("b", TicketState.CALLED, called_at=at(8), endpoint="e1")), at(8)
    )
    return board


def saved(board: Board, now: datetime) -> SavedBoard:
    """What `board` keeps at `now`, through JSON text, as it goes to disk and back."""
    return SavedBoard.model_validate_json(SavedBoard.of(board.memory(now), now).to_json())


def test_a_restored_board_shows_what_the_saved_one_showed() -> None:
    board = busy_board()

    restored = saved(board, at(10)).restore(SETTINGS, at(20))

    assert restored.queues() == board.queues()
    assert restored.counters() == board.counters()
    assert dict(restored.place_names()) == {"en_US": "Town hall", "fr_FR": "Mairie"}
    assert recent_labels(restored) == recent_labels(board) == ["B", "A"]
    assert [dict(view.call.counter_names) for view in restored.recent_calls()] == [
        {"en_US": "Desk 1", "fr_FR": "Guichet 1"}
    ] * 2
    assert [view.call.called_at for view in restored.recent_calls()] == [at(8), at(5)]


def test_a_restored_board_is_out_of_date_never_live() -> None:
    board = busy_board()
    board.apply(health(Feed.COUNTERS, FeedStatus.RECONNECTING, 9), at(9))

    restored = saved(board, at(10)).restore(SETTINGS, at(12))

    parts = restored.parts(at(12))
    assert {view.freshness for view in parts.values()} == {Freshness.STALE}
    assert all(view.restored for view in parts.values())
    # "Out of date since": when the data was last current.
    assert parts[Part.CALLS].down_since == at(10)
    assert parts[Part.COUNTERS].down_since == at(9)
    assert restored.freshness(Part.QUEUES, at(310)) is Freshness.WITHDRAWN


def test_a_part_is_live_again_once_its_feed_is() -> None:
    restored = saved(busy_board(), at(10)).restore(SETTINGS, at(12))

    restored.apply(QueueStatesSnapshot({"q1": queue_state("q1")}), at(13))
    restored.apply(health(Feed.QUEUES, FeedStatus.LIVE, 13), at(13))

    parts = restored.parts(at(14))
    assert parts[Part.QUEUES].freshness is Freshness.LIVE
    assert parts[Part.CALLS].freshness is Freshness.STALE


def test_restored_calls_are_neither_highlighted_nor_announced_again() -> None:
    restored = saved(busy_board(), at(10)).restore(SETTINGS, at(12))

    assert not restored.now_calling(at(12)).highlighted
    changes = restored.apply(
        TicketsSnapshot((ticket("b", TicketState.CALLED, called_at=at(8), endpoint="e1"),)), at(15)
    )
    assert changes.new_calls == ()


def test_counts_made_from_tickets_survive_until_the_tickets_feed_speaks() -> None:
    board = busy_board()

    restored = saved(board, at(10)).restore(SETTINGS, at(12))

    row = restored.queue("q2")
    assert row is not None and row.counts_from_tickets
    assert dict(row.names) == {"en_US": "Parcels"}
    assert (row.waiting_tickets, row.waiting_people) == (1, 3)
    restored.apply(TicketsSnapshot(()), at(13))
    row = restored.queue("q2")
    assert row is not None and (row.waiting_tickets, row.waiting_people) == (0, 0)


def test_the_saved_board_is_plain_json_with_the_wire_names() -> None:
    text = SavedBoard.of(busy_board().memory(at(10)), at(10)).to_json()

    data = json.loads(text)
    assert SavedBoard.model_validate(data) == SavedBoard.model_validate_json(text)
    assert data["saved_at"] == at(10).isoformat()
    # The service's records keep the wire's names, as in files written before.
    assert data["queue_states"]["q1"]["queueIsFullForTheDay"] is True
    assert data["queues"]["q1"]["appointmentTypes"]["visit"]["appointmentTypeId"] == "visit"


@pytest.mark.parametrize(
    "state",
    [
        {},
        {"version": 999},
        {"version": 1},
        {"version": 1, "saved_at": "yesterday"},
        {"version": 1, "saved_at": "2026-11-22T13:00:00Z", "recent_calls": [{"label": "A"}]},
        {"version": 1, "saved_at": "2026-11-22T13:00:00Z", "queue_states": "nonsense"},
    ],
)
def test_a_state_that_is_not_ours_is_refused(state: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        SavedBoard.model_validate(state).restore(SETTINGS, at(0))


def test_an_empty_board_round_trips() -> None:
    board = make_board()

    restored = saved(board, at(1)).restore(BoardSettings(), at(2))

    assert restored.queues() == () and restored.counters() == () and restored.recent_calls() == ()


def test_still_called_tickets_beyond_the_recent_list_are_not_announced_after_a_restart() -> None:
    board = Board(SETTINGS, started_at=at(0))
    called = tuple(ticket(f"t{n}", TicketState.CALLED, called_at=at(n)) for n in range(10))
    board.apply(TicketsSnapshot(called), at(10))

    restored = saved(board, at(11)).restore(SETTINGS, at(12))
    changes = restored.apply(TicketsSnapshot(called), at(13))

    assert len(board.recent_calls()) < len(called)
    assert changes.new_calls == ()
