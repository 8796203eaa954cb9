"""Board: what a call is (new call, recall, reconnect, old calls) and what it carries."""

from __future__ import annotations

from lobby_display.models import TicketState
from lobby_display.updates import (
    Feed,
    FeedStatus,
    TicketChanged,
    TicketRemoved,
    TicketsSnapshot,
)
from tests.helpers.board_support import at, health, make_board, reference, ticket

CALLED = TicketState.CALLED


def test_a_ticket_entering_state_200_is_a_new_call_to_announce() -> None:
    board = make_board()
    board.apply(TicketsSnapshot((ticket("a1"),)), at(0))

    changes = board.apply(
        TicketChanged(
            ticket("a1", CALLED, called_at=at(10), endpoint="e1", endpoint_name="Desk 1")
        ),
        at(11),
    )

    assert [call.label for call in changes.new_calls] == ["A1"]
    call = changes.new_calls[0]
    assert call.announce and not call.is_recall
    assert call.called_at == at(10)
    assert call.queue_id == "q1" and call.endpoint_id == "e1"
    assert changes.calls


def test_a_ticket_still_called_in_the_next_event_is_not_called_again() -> None:
    board = make_board()
    called = ticket("a1", CALLED, called_at=at(10))
    board.apply(TicketChanged(called), at(10))

    changes = board.apply(TicketChanged(called), at(20))

    assert changes.new_calls == ()
    assert not changes.calls


def test_a_growing_recalled_count_is_a_recall() -> None:
    board = make_board()
    board.apply(TicketChanged(ticket("a1", CALLED, called_at=at(10))), at(10))

    changes = board.apply(
        TicketChanged(ticket("a1", CALLED, called_at=at(10), recalled_count=1)), at(40)
    )

    assert len(changes.new_calls) == 1
    recall = changes.new_calls[0]
    assert recall.is_recall and recall.recall == 1 and recall.announce
    # The recall's moment is unknown (no recalledAt entry): the moment the board saw it.
    assert recall.called_at == at(40)


def test_a_new_recalled_at_entry_is_a_recall_even_without_a_count() -> None:
    board = make_board()
    board.apply(TicketChanged(ticket("a1", CALLED, called_at=at(10))), at(10))

    changes = board.apply(
        TicketChanged(ticket("a1", CALLED, called_at=at(10), recalled_at=[at(35)])), at(36)
    )

    assert [(call.recall, call.called_at) for call in changes.new_calls] == [(1, at(35))]


def test_each_further_recall_is_a_call_again() -> None:
    board = make_board()
    board.apply(TicketChanged(ticket("a1", CALLED, called_at=at(10))), at(10))
    first = board.apply(
        TicketChanged(ticket("a1", CALLED, recalled_count=1, recalled_at=[at(20)])), at(20)
    )
    second = board.apply(
        TicketChanged(ticket("a1", CALLED, recalled_count=2, recalled_at=[at(20), at(30)])),
        at(30),
    )

    assert [call.recall for call in first.new_calls + second.new_calls] == [1, 2]
    assert second.new_calls[0].called_at == at(30)


def test_a_reconnect_snapshot_does_not_announce_calls_already_seen() -> None:
    board = make_board()
    board.apply(TicketsSnapshot((ticket("a1", CALLED, called_at=at(10)),)), at(10))
    board.apply(health(Feed.TICKETS, FeedStatus.LIVE, 10), at(10))
    board.apply(health(Feed.TICKETS, FeedStatus.RECONNECTING, 20), at(20))

    changes = board.apply(
        TicketsSnapshot(
            (
                ticket("a1", CALLED, called_at=at(10)),
                # Called while the feed was down: a call the screen has not shown yet.
                ticket("b2", CALLED, called_at=at(25)),
            )
        ),
        at(30),
    )

    assert [call.label for call in changes.new_calls] == ["B2"]


def test_a_removed_ticket_coming_back_called_is_not_announced_twice() -> None:
    board = make_board()
    called = ticket("a1", CALLED, called_at=at(10))
    board.apply(TicketChanged(called), at(10))
    board.apply(TicketRemoved("a1"), at(11))

    assert board.apply(TicketChanged(called), at(12)).new_calls == ()


def test_a_call_older_than_the_maximum_age_is_listed_but_not_announced() -> None:
    board = make_board(call_max_age_seconds=600)

    changes = board.apply(TicketChanged(ticket("a1", CALLED, called_at=at(0))), at(601))

    assert changes.new_calls == ()
    assert changes.calls
    (listed,) = board.recent_calls()
    assert listed.call.label == "A1" and not listed.call.announce
    assert not listed.highlighted(at(601))


def test_a_call_exactly_at_the_maximum_age_is_still_announced() -> None:
    board = make_board(call_max_age_seconds=600)

    changes = board.apply(TicketChanged(ticket("a1", CALLED, called_at=at(0))), at(600))

    assert [call.announce for call in changes.new_calls] == [True]


def test_a_recall_is_aged_by_its_last_recalled_at() -> None:
    board = make_board(call_max_age_seconds=600)
    # Called long ago, recalled just now: announced.
    recalled = ticket("a1", CALLED, called_at=at(0), recalled_count=1, recalled_at=[at(1000)])

    changes = board.apply(TicketsSnapshot((recalled,)), at(1005))

    assert [(call.recall, call.announce) for call in changes.new_calls] == [(1, True)]


def test_first_snapshot_after_start_announces_only_recent_calls() -> None:
    board = make_board(call_max_age_seconds=600)

    changes = board.apply(
        TicketsSnapshot(
            (
                ticket("old", CALLED, called_at=at(0)),
                ticket("new", CALLED, called_at=at(1150)),
                ticket("unknown", CALLED),  # no calledAt: its age cannot be told
            )
        ),
        at(1200),
    )

    assert [call.label for call in changes.new_calls] == ["NEW"]
    assert {view.call.label for view in board.recent_calls()} == {"OLD", "NEW", "UNKNOWN"}


def test_a_live_call_without_a_moment_is_announced_at_the_moment_it_is_seen() -> None:
    board = make_board()
    board.apply(TicketsSnapshot(()), at(0))

    changes = board.apply(TicketChanged(ticket("a1", CALLED)), at(50))

    assert [(call.announce, call.called_at) for call in changes.new_calls] == [(True, at(50))]


def test_calls_found_together_are_announced_in_the_order_they_happened() -> None:
    board = make_board()

    changes = board.apply(
        TicketsSnapshot(
            (
                ticket("c", CALLED, called_at=at(30)),
                ticket("a", CALLED, called_at=at(10)),
                ticket("b", CALLED, called_at=at(20)),
            )
        ),
        at(40),
    )

    assert [call.label for call in changes.new_calls] == ["A", "B", "C"]


def test_a_ticket_sent_back_to_wait_and_called_again_is_a_new_call() -> None:
    board = make_board()
    board.apply(TicketChanged(ticket("a1", CALLED, called_at=at(10))), at(10))
    board.apply(TicketChanged(ticket("a1", TicketState.ALERTED, called_at=at(10))), at(20))

    changes = board.apply(TicketChanged(ticket("a1", CALLED, called_at=at(30))), at(30))

    assert [(call.recall, call.called_at) for call in changes.new_calls] == [(0, at(30))]


def test_tickets_of_queues_not_shown_are_ignored() -> None:
    board = make_board(queue_ids=("q1",))

    changes = board.apply(TicketChanged(ticket("x1", CALLED, queue="q9", called_at=at(0))), at(1))

    assert not changes
    assert board.recent_calls() == () and "x1" not in board.tickets


def test_the_counter_name_comes_from_the_endpoints_in_every_locale() -> None:
    board = make_board()
    board.apply(
        reference(
            endpoints={"e1": {"fr_FR": "Guichet 1", "en_US": "Desk 1", "de_DE": "Schalter 1"}}
        ),
        at(0),
    )

    changes = board.apply(
        TicketChanged(
            ticket(
                "a1", CALLED, called_at=at(5), endpoint="e1", endpoint_name="Guichet 1", lang="fr"
            )
        ),
        at(5),
    )

    assert dict(changes.new_calls[0].counter_names) == {
        "fr_FR": "Guichet 1",
        "en_US": "Desk 1",
        "de_DE": "Schalter 1",
    }


def test_the_counter_name_falls_back_to_the_tickets_own_in_its_language() -> None:
    board = make_board()

    changes = board.apply(
        TicketChanged(
            ticket(
                "a1",
                CALLED,
                called_at=at(5),
                endpoint="e9",
                endpoint_name="Guichet 9",
                lang="fr-FR",
            )
        ),
        at(5),
    )

    assert dict(changes.new_calls[0].counter_names) == {"fr_FR": "Guichet 9"}


def test_endpoint_names_arriving_later_rename_the_listed_calls() -> None:
    board = make_board()
    board.apply(
        TicketChanged(
            ticket(
                "a1", CALLED, called_at=at(5), endpoint="e1", endpoint_name="Guichet 1", lang="fr"
            )
        ),
        at(5),
    )

    changes = board.apply(reference(endpoints={"e1": {"en_US": "Desk 1"}}), at(6))

    assert changes.calls
    (listed,) = board.recent_calls()
    assert dict(listed.call.counter_names) == {"fr_FR": "Guichet 1", "en_US": "Desk 1"}


def test_a_call_carries_its_queues_names() -> None:
    board = make_board()
    board.apply(reference(queues={"q1": {"name": {"en_US": "Post", "fr_FR": "Courrier"}}}), at(0))
    board.apply(TicketChanged(ticket("a1", CALLED, called_at=at(5))), at(5))

    (listed,) = board.recent_calls()

    assert dict(listed.queue_names) == {"en_US": "Post", "fr_FR": "Courrier"}
