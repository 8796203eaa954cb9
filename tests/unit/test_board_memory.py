"""Board: memory stays bounded however many tickets a day brings."""

from __future__ import annotations

from lobby_display.models import TicketState, Timeline
from lobby_display.updates import TicketChanged, TicketsSnapshot
from tests.helpers.board_support import at, make_board, ticket

TICKETS = 50_000


def test_fifty_thousand_tickets_leave_the_board_no_bigger() -> None:
    limit = 1000
    board = make_board(seen_calls_limit=limit, recent_calls=6)
    board.apply(TicketsSnapshot(()), at(0))
    booked = ticket("template", group=2, appointment_type="visit", appointment_type_name="Visit")
    called_timeline = Timeline(called_at=at(0))

    for index in range(TICKETS):
        now = at(index)
        ticket_id = f"t{index}"
        # model_copy: building 150,000 tickets through validation would dominate the test.
        waiting = booked.model_copy(update={"ticket_id": ticket_id, "label": f"A{index}"})
        board.apply(TicketChanged(waiting), now)
        called = waiting.model_copy(
            update={
                "state": TicketState.CALLED,
                "timeline": called_timeline.model_copy(update={"called_at": now}),
            }
        )
        board.apply(TicketChanged(called), now)
        board.apply(TicketChanged(called.model_copy(update={"state": TicketState.DONE})), now)

    sizes = board.sizes()
    assert sizes.current_tickets == 0
    assert sizes.seen_calls == limit
    assert sizes.recent_calls <= 6
    assert [view.call.label for view in board.recent_calls()][:2] == [
        f"A{TICKETS - 1}",
        f"A{TICKETS - 2}",
    ]
    row = board.queue("q1")
    assert row is not None and (row.waiting_tickets, row.waiting_people) == (0, 0)
    assert row.appointment_types == ()  # nothing lingers of the types counted


def test_the_least_recently_seen_calls_are_forgotten_first() -> None:
    board = make_board(seen_calls_limit=2, call_max_age_seconds=10_000)
    first = ticket("a", TicketState.CALLED, called_at=at(0))
    board.apply(TicketChanged(first), at(0))
    board.apply(TicketChanged(ticket("b", TicketState.CALLED, called_at=at(1))), at(1))
    board.apply(TicketChanged(first), at(2))  # "a" seen again: "b" is now the oldest
    board.apply(TicketChanged(ticket("c", TicketState.CALLED, called_at=at(3))), at(3))

    again_a = board.apply(TicketChanged(first), at(4))
    again_b = board.apply(TicketChanged(ticket("b", TicketState.CALLED, called_at=at(1))), at(5))

    assert again_a.new_calls == ()
    # "b" was forgotten: seen again, it counts as a call (the price of bounded memory).
    assert [call.ticket_id for call in again_b.new_calls] == ["b"]
    assert board.sizes().seen_calls == 2
