"""Board: `Changes` names exactly what the screen must redraw."""

from __future__ import annotations

from lobby_display.board import Changes
from lobby_display.models import TicketState
from lobby_display.updates import (
    CounterChanged,
    CountersSnapshot,
    Feed,
    FeedHealth,
    FeedStatus,
    QueueStateChanged,
    QueueStatesSnapshot,
    TicketChanged,
    TicketsSnapshot,
)
from tests.helpers.board_support import (
    at,
    counter,
    health,
    make_board,
    queue_state,
    reference,
    ticket,
)


def test_no_change_is_falsy() -> None:
    assert not Changes()
    assert Changes(calls=True)


def test_a_call_changes_the_calls_and_names_the_new_call() -> None:
    board = make_board()
    board.apply(QueueStatesSnapshot({"q1": queue_state("q1")}), at(0))
    board.apply(TicketsSnapshot((ticket("a"),)), at(0))

    changes = board.apply(TicketChanged(ticket("a", TicketState.CALLED, called_at=at(1))), at(1))

    assert changes.calls and [call.ticket_id for call in changes.new_calls] == ["a"]
    # The row counts from its queue state, so a ticket event does not touch it.
    assert changes.queues == frozenset()
    assert not (changes.counters or changes.health or changes.reference or changes.layout)


def test_a_ticket_event_touches_the_row_that_counts_from_tickets() -> None:
    board = make_board()
    board.apply(TicketsSnapshot((ticket("a"),)), at(0))

    changes = board.apply(TicketChanged(ticket("b", queue="q1")), at(1))

    assert changes.queues == {"q1"} and not changes.calls


def test_a_queue_state_change_names_its_queue_and_an_identical_one_nothing() -> None:
    board = make_board()
    board.apply(QueueStatesSnapshot({"q1": queue_state("q1"), "q2": queue_state("q2")}), at(0))

    changed = board.apply(QueueStateChanged(queue_state("q2", queueIsFull=True)), at(1))
    same = board.apply(QueueStateChanged(queue_state("q2", queueIsFull=True)), at(2))

    assert changed.queues == {"q2"} and not changed.layout
    assert not same


def test_a_new_queue_changes_the_layout() -> None:
    board = make_board()
    board.apply(QueueStatesSnapshot({"q1": queue_state("q1")}), at(0))

    changes = board.apply(QueueStateChanged(queue_state("q2")), at(1))

    assert changes.layout and changes.queues == {"q2"}


def test_a_counter_change_names_only_that_counter() -> None:
    board = make_board()
    board.apply(CountersSnapshot({"c1": counter("c1", 1), "c2": counter("c2", 1)}), at(0))

    changes = board.apply(CounterChanged(counter("c2", 2)), at(1))

    assert changes == Changes(counters=frozenset({"c2"}))


def test_health_changes_only_when_something_shown_changes() -> None:
    board = make_board()
    became_live = board.apply(health(Feed.TICKETS, FeedStatus.LIVE, 0), at(0))

    heartbeat = board.apply(
        FeedHealth(feed=Feed.TICKETS, status=FeedStatus.LIVE, at=at(30), last_message_at=at(29)),
        at(30),
    )
    dropped = board.apply(health(Feed.TICKETS, FeedStatus.RECONNECTING, 40, "reset"), at(40))

    assert became_live == Changes(health=frozenset({Feed.TICKETS}))
    assert not heartbeat
    assert dropped == Changes(health=frozenset({Feed.TICKETS}))


def test_reference_data_changes_names_everywhere() -> None:
    board = make_board()
    board.apply(QueueStatesSnapshot({"q1": queue_state("q1")}), at(0))
    board.apply(CountersSnapshot({"c1": counter("c1", 1)}), at(0))
    board.apply(TicketChanged(ticket("a", TicketState.CALLED, called_at=at(0))), at(0))

    changes = board.apply(
        reference(queues={"q1": {"name": {"en_US": "Post"}}}, counters={"c1": {"en_US": "In"}}),
        at(1),
    )

    assert changes.reference and changes.calls
    assert changes.queues == {"q1"} and changes.counters == {"c1"}
    assert changes.new_calls == ()
