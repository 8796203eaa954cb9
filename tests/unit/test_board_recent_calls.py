"""Board: the recent calls list and the "now calling" area (highlight, then the latest, steady)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from lobby_display.board import NOW_CALLING_MAX
from lobby_display.models import TicketState
from lobby_display.updates import Feed, FeedStatus, TicketChanged, TicketRemoved, TicketsSnapshot
from tests.helpers.board_support import at, health, make_board, recent_labels, ticket

CALLED = TicketState.CALLED


def call(
    seconds: float,
    ticket_id: str,
    recalled_count: int = 0,
    recalled_at: Sequence[datetime] = (),
) -> TicketChanged:
    """An event calling `ticket_id`, called `seconds` after T0."""
    return TicketChanged(
        ticket(
            ticket_id,
            CALLED,
            called_at=at(seconds),
            recalled_count=recalled_count,
            recalled_at=recalled_at,
        )
    )


def test_recent_calls_are_newest_first_and_limited() -> None:
    board = make_board(recent_calls=3)
    for second, ticket_id in enumerate(["a", "b", "c", "d", "e"]):
        board.apply(call(second, ticket_id), at(second))

    assert recent_labels(board) == ["E", "D", "C"]


def test_a_recall_moves_the_ticket_back_to_the_top_without_a_second_entry() -> None:
    board = make_board(recent_calls=5)
    for second, ticket_id in enumerate(["a", "b", "c"]):
        board.apply(call(second, ticket_id), at(second))

    board.apply(call(0, "a", recalled_count=1, recalled_at=[at(10)]), at(10))

    assert recent_labels(board) == ["A", "C", "B"]
    assert board.recent_calls()[0].call.recall == 1


def test_called_tickets_stay_in_recent_calls_after_they_move_on() -> None:
    board = make_board()
    board.apply(call(0, "a"), at(0))
    board.apply(call(1, "b"), at(1))
    board.apply(call(2, "c"), at(2))

    board.apply(TicketChanged(ticket("a", TicketState.DONE)), at(3))
    board.apply(TicketChanged(ticket("b", TicketState.CANCELED)), at(4))
    board.apply(TicketRemoved("c"), at(5))

    assert board.tickets == {}
    assert recent_labels(board) == ["C", "B", "A"]


def test_a_call_learnt_late_is_placed_by_when_it_happened() -> None:
    board = make_board()
    board.apply(call(100, "new"), at(100))

    # A reconnect reveals a call made long before: listed below the newer one.
    board.apply(
        TicketsSnapshot(
            (ticket("new", CALLED, called_at=at(100)), ticket("old", CALLED, called_at=at(50)))
        ),
        at(110),
    )

    assert recent_labels(board) == ["NEW", "OLD"]


def test_no_recent_calls_listed_when_the_setting_is_zero_but_now_calling_still_shows() -> None:
    board = make_board(recent_calls=0)
    board.apply(call(0, "a"), at(0))

    assert board.recent_calls() == ()
    assert [view.call.label for view in board.now_calling(at(1)).calls] == ["A"]


def test_a_new_call_is_highlighted_for_highlight_seconds() -> None:
    board = make_board(highlight_seconds=12)
    board.apply(call(0, "a"), at(0))

    during = board.now_calling(at(11.9))
    after = board.now_calling(at(12))

    assert during.highlighted and [view.highlighted(at(11.9)) for view in during.calls] == [True]
    assert not after.highlighted
    assert [view.call.label for view in after.calls] == ["A"]
    assert not after.calls[0].highlighted(at(12))


def test_the_highlight_is_timed_from_when_the_board_saw_the_call() -> None:
    board = make_board(highlight_seconds=12)
    # The event arrives 30 s after the call (a slow reconnect): still its full highlight.
    board.apply(call(0, "a"), at(30))

    assert board.now_calling(at(41)).highlighted
    assert not board.now_calling(at(42)).highlighted


def test_simultaneous_calls_share_the_now_calling_area_newest_first() -> None:
    board = make_board(highlight_seconds=12)
    board.apply(call(0, "a"), at(0))
    board.apply(call(1, "b"), at(1))
    board.apply(call(2, "c"), at(2))

    shown = board.now_calling(at(5))

    assert shown.highlighted
    assert [view.call.label for view in shown.calls] == ["C", "B", "A"]
    # As highlights end one by one, the calls stay together: each goes steady in its turn
    # (no card vanishes, so the other labels keep their size).
    later = board.now_calling(at(12.5))
    assert [(view.call.label, view.highlighted(at(12.5))) for view in later.calls] == [
        ("C", True),
        ("B", True),
        ("A", False),
    ]
    assert later.highlighted


def test_calls_made_together_stay_on_steady_until_the_next_call_which_comes_alone() -> None:
    board = make_board(highlight_seconds=12)
    board.apply(call(0, "a"), at(0))
    board.apply(call(1, "b"), at(1))

    steady = board.now_calling(at(30))
    assert not steady.highlighted
    assert [view.call.label for view in steady.calls] == ["B", "A"]

    board.apply(call(2, "c"), at(40))
    alone = board.now_calling(at(41))
    assert alone.highlighted
    assert [view.call.label for view in alone.calls] == ["C"]
    # A call made while C is highlighted joins it.
    board.apply(call(3, "d"), at(45))
    assert [view.call.label for view in board.now_calling(at(60)).calls] == ["D", "C"]


def test_now_calling_shows_at_most_its_capacity() -> None:
    board = make_board(recent_calls=2)
    for index in range(NOW_CALLING_MAX + 3):
        board.apply(call(0, f"t{index}"), at(0))

    assert len(board.now_calling(at(1)).calls) == NOW_CALLING_MAX


def test_an_old_call_is_shown_steady_not_highlighted() -> None:
    board = make_board(call_max_age_seconds=60)
    board.apply(call(0, "a"), at(500))

    shown = board.now_calling(at(500))

    assert not shown.highlighted and [view.call.label for view in shown.calls] == ["A"]


def test_now_calling_is_empty_before_any_call() -> None:
    board = make_board()

    shown = board.now_calling(at(0))

    assert shown.calls == () and not shown.highlighted


def test_next_change_at_names_the_end_of_the_highlight() -> None:
    board = make_board(highlight_seconds=12)
    for feed in Feed:
        board.apply(health(feed, FeedStatus.LIVE, 0), at(0))
    board.apply(call(3, "a"), at(3))

    assert board.next_change_at(at(4)) == at(15)
    assert board.next_change_at(at(15)) is None
    assert board.next_freshness_change_at(at(4)) is None  # a highlight's end is no freshness
