"""Snapshots of the screen (SVG, tests/ui/__snapshots__): the fixture board in each of the nine
locales, at the smallest, the TV's (106x30), a middle and the largest size, and in its other
states.

The clock is fixed, so the date, the time and the relative times never change. After a change
to the screen: `pytest tests/ui/test_snapshots.py --snapshot-update`, then look at the SVGs
(`rsvg-convert -o x.png x.svg`) before committing them.
"""

from __future__ import annotations

from typing import Any

import pytest

from lobby_display.app import LobbyApp
from lobby_display.models import LOCALES
from lobby_display.updates import Feed, FeedHealth, FeedStatus
from tests.helpers.boards import NOW, Clock, at, board_app, call, make_board, make_settings

SnapCompare = Any


@pytest.mark.parametrize("locale", LOCALES)
def test_each_locale_at_120x34(snap_compare: SnapCompare, locale: str) -> None:
    assert snap_compare(board_app([locale]), terminal_size=(120, 34))


@pytest.mark.parametrize(
    "size", [(80, 24), (106, 30), (160, 45), (240, 67)], ids=lambda s: f"{s[0]}x{s[1]}"
)
def test_sizes(snap_compare: SnapCompare, size: tuple[int, int]) -> None:
    assert snap_compare(board_app(["en_US"]), terminal_size=size)


def test_connecting_before_any_data(snap_compare: SnapCompare) -> None:
    app = LobbyApp(make_settings(), clock=Clock())
    app.animation_level = "none"
    assert snap_compare(app, terminal_size=(120, 34))


def test_reconnecting_stale_and_withdrawn_parts(snap_compare: SnapCompare) -> None:
    settings = make_settings(stale_after_seconds=30, withdraw_after_seconds=300)
    board = make_board(settings, NOW)
    board.apply(FeedHealth(Feed.TICKETS, FeedStatus.RECONNECTING, at(-10), attempt=2), at(-10))
    board.apply(FeedHealth(Feed.QUEUES, FeedStatus.RECONNECTING, at(-120), attempt=6), at(-120))
    board.apply(FeedHealth(Feed.COUNTERS, FeedStatus.RECONNECTING, at(-900), attempt=9), at(-900))
    assert snap_compare(board_app(["en_US"], board=board), terminal_size=(120, 34))


def test_three_simultaneous_calls(snap_compare: SnapCompare) -> None:
    settings = make_settings()
    board = make_board(settings, at(-600))
    for ticket_id, label, queue_id, desk in (
        ("t-k017", "K017", "q-pass", 2),
        ("t-b050", "B050", "q-civil", 1),
        ("t-c010", "C010", "q-residence", 4),
    ):
        board.apply(call(ticket_id, label, queue_id, desk, at(-2)), at(-2))
    assert snap_compare(board_app(["en_US"], board=board), terminal_size=(160, 45))


@pytest.mark.parametrize("theme", ["high-contrast", "console"])
def test_other_themes(snap_compare: SnapCompare, theme: str) -> None:
    assert snap_compare(board_app(["fr_FR"], theme=theme), terminal_size=(120, 34))
