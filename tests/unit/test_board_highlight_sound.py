"""Board: a call's highlight follows its announcement, so screen and voice stay in step."""

from __future__ import annotations

from lobby_display.board import Board
from lobby_display.models import TicketState
from lobby_display.updates import Call, TicketChanged, TicketsSnapshot
from tests.helpers.board_support import at, make_board, ticket

CALLED = TicketState.CALLED


def burst_board() -> tuple[Board, Call, Call]:
    board = make_board(highlight_seconds=10)
    board.apply(TicketsSnapshot((ticket("a1"), ticket("a2"))), at(0))
    first = board.apply(TicketChanged(ticket("a1", CALLED, called_at=at(1))), at(1))
    second = board.apply(TicketChanged(ticket("a2", CALLED, called_at=at(1))), at(1))
    return board, first.new_calls[0], second.new_calls[0]


def test_a_call_announced_late_in_a_burst_is_highlighted_while_it_is_spoken() -> None:
    board, _, second = burst_board()
    # Without the announcer's word, the second call's highlight would end at 11 s.
    assert not any(view.highlighted(at(12)) for view in board.now_calling(at(12)).calls)
    changes = board.highlight_from(second, at(9))
    assert changes.calls
    shown = board.now_calling(at(15))
    assert shown.highlighted
    # The burst stays together; only the call being spoken stands out.
    assert [(view.call.label, view.highlighted(at(15))) for view in shown.calls] == [
        ("A2", True),
        ("A1", False),
    ]
    assert not board.now_calling(at(19)).highlighted


def test_an_early_announcement_never_shortens_a_highlight() -> None:
    board, first, _ = burst_board()
    assert not board.highlight_from(first, at(0))
    assert board.now_calling(at(10.5)).highlighted


def test_a_superseded_call_is_left_alone() -> None:
    board, first, _ = burst_board()
    board.apply(
        TicketChanged(
            ticket("a1", CALLED, called_at=at(1), recalled_count=1, recalled_at=[at(20)])
        ),
        at(20),
    )
    assert not board.highlight_from(first, at(40))
    assert not board.now_calling(at(45)).highlighted
