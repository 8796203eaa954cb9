"""Board: which tickets are current, and the waiting counts made from them."""

from __future__ import annotations

from lobby_display.models import TicketState
from lobby_display.updates import QueueStateChanged, TicketChanged, TicketRemoved, TicketsSnapshot
from tests.helpers.board_support import at, make_board, queue_state, ticket


def test_a_snapshot_replaces_the_current_tickets() -> None:
    board = make_board()
    board.apply(TicketsSnapshot((ticket("a"), ticket("b"))), at(0))

    board.apply(TicketsSnapshot((ticket("b"), ticket("c"))), at(10))

    assert set(board.tickets) == {"b", "c"}


def test_done_and_canceled_tickets_leave_the_board() -> None:
    board = make_board()
    board.apply(TicketsSnapshot((ticket("a"), ticket("b"), ticket("c"))), at(0))

    board.apply(TicketChanged(ticket("a", TicketState.DONE)), at(1))
    board.apply(TicketChanged(ticket("b", TicketState.CANCELED)), at(2))

    assert set(board.tickets) == {"c"}


def test_done_and_canceled_tickets_in_a_snapshot_are_not_current() -> None:
    board = make_board()

    board.apply(
        TicketsSnapshot((ticket("a", TicketState.DONE), ticket("b", TicketState.IN_PROGRESS))),
        at(0),
    )

    assert set(board.tickets) == {"b"}


def test_ticket_removed_removes_the_ticket() -> None:
    board = make_board()
    board.apply(TicketsSnapshot((ticket("a"), ticket("b"))), at(0))

    board.apply(TicketRemoved("a"), at(1))
    board.apply(TicketRemoved("unknown"), at(2))

    assert set(board.tickets) == {"b"}


def test_without_queue_state_the_row_counts_waiting_tickets_and_people_from_tickets() -> None:
    board = make_board()
    board.apply(
        TicketsSnapshot(
            (
                ticket("a", TicketState.BOOKED, group=2, appointment_type="visit"),
                ticket("b", TicketState.TO_CONFIRM, group=1, appointment_type="visit"),
                ticket("c", TicketState.ALERTED, group=3, appointment_type="parcel"),
                ticket("d", TicketState.CALLED, group=4),  # called: no longer waiting
                ticket("e", TicketState.BOOKED, queue="q2"),
            )
        ),
        at(0),
    )

    row = board.queue("q1")

    assert row is not None and row.counts_from_tickets
    assert (row.waiting_tickets, row.waiting_people) == (3, 6)
    by_type = {view.appointment_type_id: view for view in row.appointment_types}
    assert (by_type["visit"].waiting_tickets, by_type["visit"].waiting_people) == (2, 3)
    assert (by_type["parcel"].waiting_tickets, by_type["parcel"].waiting_people) == (1, 3)


def test_waiting_counts_follow_each_ticket_event() -> None:
    board = make_board()
    board.apply(TicketsSnapshot((ticket("a", group=2), ticket("b"))), at(0))

    board.apply(TicketChanged(ticket("a", TicketState.CALLED, group=2)), at(1))
    board.apply(TicketChanged(ticket("c", group=5)), at(2))
    board.apply(TicketChanged(ticket("b", queue="q2")), at(3))  # moved to another queue
    board.apply(TicketRemoved("c"), at(4))

    q1, q2 = board.queue("q1"), board.queue("q2")
    assert q1 is not None and q2 is not None
    assert (q1.waiting_tickets, q1.waiting_people) == (0, 0)
    assert (q2.waiting_tickets, q2.waiting_people) == (1, 1)


def test_counts_are_unknown_before_any_ticket_snapshot() -> None:
    board = make_board(queue_ids=("q1",))

    row = board.queue("q1")

    assert row is not None
    assert (row.waiting_tickets, row.waiting_people) == (None, None)


def test_once_the_queue_state_arrives_its_counts_win() -> None:
    board = make_board()
    board.apply(TicketsSnapshot((ticket("a"), ticket("b"))), at(0))

    board.apply(
        QueueStateChanged(
            queue_state("q1", queueLength={"queueTicketLength": 7, "queuePeopleLength": 9})
        ),
        at(1),
    )

    row = board.queue("q1")
    assert row is not None and not row.counts_from_tickets
    assert (row.waiting_tickets, row.waiting_people) == (7, 9)


def test_queue_names_fall_back_to_the_names_tickets_carry() -> None:
    board = make_board()

    board.apply(
        TicketsSnapshot(
            (
                ticket("a", queue_name="Courrier", lang="fr_FR"),
                ticket("b", queue_name="Post", lang="en"),
            )
        ),
        at(0),
    )

    row = board.queue("q1")
    assert row is not None and dict(row.names) == {"fr_FR": "Courrier", "en_US": "Post"}
