"""The saved board's file: one written by an earlier version (before the state module held its
format) is shown again after an update, with the same rows, counters, calls and names."""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path

from lobby_display.board import Board, BoardSettings
from lobby_display.models import TicketState
from lobby_display.state import STATE_FILE, BoardStore
from lobby_display.updates import (
    CountersSnapshot,
    Feed,
    FeedStatus,
    QueueStatesSnapshot,
    TicketChanged,
    TicketsSnapshot,
)
from lobby_display.views import Freshness, Part
from tests.helpers.board_support import at, counter, health, queue_state, reference, ticket

#: board.json as written at commit 910286b (`BoardStore.save` of `earlier_board()` at `at(10)`).
EARLIER_FILE = Path(__file__).parent / "data" / "board-v1.json"
SETTINGS = BoardSettings(stale_after_seconds=30, withdraw_after_seconds=300)


def earlier_board() -> Board:
    """The board in EARLIER_FILE: names, states, counters, tickets by type, calls, a recall."""
    board = Board(SETTINGS, started_at=at(0))
    board.apply(
        reference(
            place={"en_US": "Town hall", "fr_FR": "Mairie"},
            queues={
                "q1": {
                    "name": {"en_US": "Post", "fr_FR": "Courrier"},
                    "appointmentTypes": {"visit": {"name": {"en_US": "Visit"}}},
                    "state": {"pause": True},
                },
                "q3": {"name": {"en_US": "Passports"}},
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
                    queueLength={
                        "queueTicketLength": 4,
                        "queuePeopleLength": 6,
                        "byAppointmentType": {
                            "visit": {"queueTicketLength": 2, "queuePeopleLength": 3}
                        },
                    },
                    allFirstAvailabilities={"visit": {"1": "2026-11-23T09:00:00.000Z", "2": None}},
                    dayQueueTimeslot=[
                        {"startTime": "2026-11-22T08:00:00Z", "endTime": "2026-11-22T17:00:00Z"}
                    ],
                ),
            }
        ),
        at(0),
    )
    board.apply(CountersSnapshot({"c1": counter("c1", 41)}), at(0))
    board.apply(
        TicketsSnapshot(
            (
                ticket("w", queue="q2", queue_name="Parcels", group=3),
                ticket(
                    "v",
                    queue="q2",
                    lang="fr",
                    queue_name="Colis",
                    appointment_type="rdv",
                    appointment_type_name="Rendez-vous",
                    group=2,
                ),
                ticket("a"),
            ),
        ),
        at(0),
    )
    for feed in Feed:
        board.apply(health(feed, FeedStatus.LIVE, 0), at(0))
    board.apply(health(Feed.COUNTERS, FeedStatus.RECONNECTING, 9), at(9))
    board.apply(
        TicketChanged(ticket("a", TicketState.CALLED, called_at=at(5), endpoint="e1")), at(5)
    )
    board.apply(
        TicketChanged(
            ticket(
                "b",
                TicketState.CALLED,
                called_at=at(2),
                recalled_count=1,
                recalled_at=[at(8)],
                endpoint="e2",
                endpoint_name="Room 7",
            )
        ),
        at(8),
    )
    return board


def test_a_board_saved_by_an_earlier_version_is_shown_again(tmp_path: Path) -> None:
    tmp_path.chmod(0o700)
    shutil.copy(EARLIER_FILE, tmp_path / STATE_FILE)
    (tmp_path / STATE_FILE).chmod(0o600)
    saved = earlier_board()

    restored = BoardStore(tmp_path, "P1").load(SETTINGS, at(20))

    assert restored is not None
    assert restored.queues() == saved.queues()
    assert restored.counters() == saved.counters()
    assert dict(restored.place_names()) == {"en_US": "Town hall", "fr_FR": "Mairie"}
    # The same calls, neither highlighted nor to be announced again.
    assert [view.call for view in restored.recent_calls()] == [
        replace(view.call, announce=False) for view in saved.recent_calls()
    ]
    assert [(view.call.label, view.call.recall) for view in restored.recent_calls()] == [
        ("B", 1),
        ("A", 0),
    ]
    assert not restored.now_calling(at(20)).highlighted
    parts = restored.parts(at(20))
    assert {view.freshness for view in parts.values()} == {Freshness.STALE}
    assert parts[Part.COUNTERS].down_since == at(9)
    assert parts[Part.CALLS].down_since == at(10)
    # The calls it had seen are not announced again.
    changes = restored.apply(
        TicketsSnapshot((ticket("a", TicketState.CALLED, called_at=at(5), endpoint="e1"),)), at(21)
    )
    assert changes.new_calls == ()
