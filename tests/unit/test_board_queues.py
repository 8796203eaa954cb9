"""Board: queue rows (status and its precedence, counts, first availability, hours, order)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import pytest

from lobby_display.board import first_availability, queue_status
from lobby_display.models import Queue
from lobby_display.updates import QueueStateChanged, QueueStatesSnapshot
from lobby_display.views import QueueStatus, TimeslotView
from tests.helpers.board_support import T0, at, make_board, queue_state, reference

OPEN: dict[str, Any] = {"bookingIsOpened": True, "queueIsOpened": True, "pause": False}


@pytest.mark.parametrize(
    ("flags", "expected"),
    [
        ({}, QueueStatus.OPEN),
        ({"queueIsOpened": False}, QueueStatus.CLOSED),
        ({"pause": True}, QueueStatus.PAUSED),
        ({"bookingIsOpened": False}, QueueStatus.BOOKING_CLOSED),
        ({"queueIsFull": True}, QueueStatus.FULL),
        ({"queueIsFullForTheDay": True}, QueueStatus.FULL_TODAY),
        ({"queueIsFullForFifo": True}, QueueStatus.FULL_FOR_FIFO),
        ({"queueIsFullForAppointment": True}, QueueStatus.FULL_FOR_APPOINTMENTS),
        # Precedence: the first of CLOSED, PAUSED, BOOKING_CLOSED, FULL, FULL_TODAY, FIFO, APPT.
        ({"queueIsOpened": False, "pause": True}, QueueStatus.CLOSED),
        ({"pause": True, "bookingIsOpened": False}, QueueStatus.PAUSED),
        ({"bookingIsOpened": False, "queueIsFull": True}, QueueStatus.BOOKING_CLOSED),
        ({"queueIsFull": True, "queueIsFullForTheDay": True}, QueueStatus.FULL),
        ({"queueIsFullForTheDay": True, "queueIsFullForFifo": True}, QueueStatus.FULL_TODAY),
        (
            {"queueIsFullForFifo": True, "queueIsFullForAppointment": True},
            QueueStatus.FULL,
        ),
    ],
)
def test_status_precedence(flags: dict[str, Any], expected: QueueStatus) -> None:
    board = make_board()

    board.apply(QueueStateChanged(queue_state("q1", **{**OPEN, **flags})), at(0))

    row = board.queue("q1")
    assert row is not None and row.status is expected


def test_status_reads_the_legacy_flag_names() -> None:
    assert queue_status(queue_state("q1", queueIsOpened=True, opened=False)) is (
        QueueStatus.BOOKING_CLOSED
    )
    assert queue_status(queue_state("q1", queueIsOpened=True, full=True)) is QueueStatus.FULL


def test_status_is_unknown_without_state_and_paused_if_the_queue_record_says_so() -> None:
    paused = Queue.model_validate({"queueId": "q1", "state": {"pause": True}})

    assert queue_status(None) is QueueStatus.UNKNOWN
    assert queue_status(None, paused) is QueueStatus.PAUSED
    assert queue_status(queue_state("q1", **OPEN), paused) is QueueStatus.OPEN
    assert queue_status(queue_state("q1", queueIsOpened=True), paused) is QueueStatus.PAUSED


def _slot(start: str, end: str) -> dict[str, str]:
    """A queue time slot of T0's day (queue-state date-times are ISO-8601 with `Z`)."""
    return {"startTime": f"2026-11-22T{start}:00.000Z", "endTime": f"2026-11-22T{end}:00.000Z"}


def test_a_closed_queue_row_gives_the_next_opening_and_todays_hours() -> None:
    board = make_board()

    board.apply(
        QueueStateChanged(
            queue_state(
                "q1",
                queueIsOpened=False,
                dayQueueTimeslot=[
                    {
                        "startTime": "2026-11-22T08:00:00.000Z",
                        "endTime": "2026-11-22T12:00:00.000Z",
                    },
                    {
                        "startTime": "2026-11-22T14:00:00.000Z",
                        "endTime": "2026-11-22T17:00:00.000Z",
                    },
                ],
                nextQueueTimeslot={
                    "startTime": "2026-11-22T14:00:00.000Z",
                    "endTime": "2026-11-22T17:00:00.000Z",
                },
            )
        ),
        at(0),
    )

    row = board.queue("q1")
    assert row is not None and row.status is QueueStatus.CLOSED
    assert row.next_timeslot == TimeslotView(T0.replace(hour=14), T0.replace(hour=17))
    assert [slot.start.hour for slot in row.today_timeslots] == [8, 14]


def test_waiting_counts_per_appointment_type_with_their_names() -> None:
    board = make_board()
    board.apply(
        reference(
            queues={
                "q1": {
                    "name": {"en_US": "Post"},
                    "appointmentTypes": {
                        "visit": {"name": {"en_US": "Visit", "fr_FR": "Visite"}},
                        "parcel": {"name": {"en_US": "Parcel"}},
                    },
                }
            }
        ),
        at(0),
    )

    board.apply(
        QueueStateChanged(
            queue_state(
                "q1",
                queueLength={
                    "queueTicketLength": 5,
                    "queuePeopleLength": 8,
                    "byAppointmentType": {
                        "visit": {"queueTicketLength": 3, "queuePeopleLength": 6},
                        "parcel": {"queueTicketLength": 2, "queuePeopleLength": 2},
                    },
                },
            )
        ),
        at(1),
    )

    row = board.queue("q1")
    assert row is not None
    assert (row.waiting_tickets, row.waiting_people) == (5, 8)
    assert [
        (view.appointment_type_id, dict(view.names), view.waiting_tickets, view.waiting_people)
        for view in row.appointment_types
    ] == [
        ("visit", {"en_US": "Visit", "fr_FR": "Visite"}, 3, 6),
        ("parcel", {"en_US": "Parcel"}, 2, 2),
    ]


def _availabilities(by_size: dict[str, str | None]) -> dict[str, Any]:
    return {"allFirstAvailabilities": {"visit": by_size}}


@pytest.mark.parametrize(
    ("group_size", "by_size", "expected_hour", "expected_size"),
    [
        (2, {"1": "2026-11-22T15:00:00.000Z", "2": "2026-11-22T16:00:00.000Z"}, 16, 2),
        # Not given for 3: the nearest smaller size given (2), not the smallest (1).
        (3, {"1": "2026-11-22T15:00:00.000Z", "2": "2026-11-22T16:00:00.000Z"}, 16, 2),
        # Only larger sizes given: nothing true can be said.
        (1, {"2": "2026-11-22T16:00:00.000Z"}, None, None),
        # Given for the size, but no room: shown as none, not replaced by a smaller size's date.
        (2, {"1": "2026-11-22T15:00:00.000Z", "2": None}, None, 2),
    ],
)
def test_first_availability_for_the_group_size_with_fallback(
    group_size: int,
    by_size: dict[str, str | None],
    expected_hour: int | None,
    expected_size: int | None,
) -> None:
    board = make_board(group_size=group_size)

    board.apply(QueueStateChanged(queue_state("q1", **_availabilities(by_size))), at(0))

    row = board.queue("q1")
    assert row is not None
    (visit,) = row.appointment_types
    moment = visit.first_availability
    assert (moment.hour if moment else None) == expected_hour
    assert visit.availability_group_size == expected_size
    assert row.group_size == group_size


def test_the_rows_first_availability_is_the_earliest_of_its_types() -> None:
    board = make_board()
    board.apply(
        QueueStateChanged(
            queue_state(
                "q1",
                allFirstAvailabilities={
                    "visit": {"1": "2026-11-22T16:00:00.000Z"},
                    "parcel": {"1": "2026-11-22T15:30:00.000Z"},
                },
            )
        ),
        at(0),
    )

    row = board.queue("q1")
    assert row is not None and row.first_availability == T0.replace(hour=15, minute=30)


def test_first_availability_function_on_an_empty_map() -> None:
    empty: dict[int, datetime | None] = {}

    assert first_availability(empty, 2) == (None, None)


def test_rows_follow_the_configured_order() -> None:
    board = make_board(queue_ids=("q3", "q1", "q2"))

    board.apply(
        QueueStatesSnapshot({key: queue_state(key) for key in ("q1", "q2", "q3", "q9")}), at(0)
    )

    assert [row.queue_id for row in board.queues()] == ["q3", "q1", "q2"]


def test_without_configured_order_rows_are_sorted_by_name_in_the_first_locale() -> None:
    board = make_board(locales=("fr_FR", "en_US"))
    board.apply(
        reference(
            queues={
                "q1": {"name": {"fr_FR": "Colis", "en_US": "Parcels"}},
                "q2": {"name": {"fr_FR": "accueil", "en_US": "Welcome"}},
                "q3": {"name": {"en_US": "Banking"}},
            }
        ),
        at(0),
    )

    assert [row.queue_id for row in board.queues()] == ["q2", "q3", "q1"]


def test_a_queue_states_snapshot_replaces_the_states() -> None:
    board = make_board()
    board.apply(QueueStatesSnapshot({"q1": queue_state("q1"), "q2": queue_state("q2")}), at(0))

    board.apply(QueueStatesSnapshot({"q2": queue_state("q2", queueIsFull=True)}), at(1))

    assert [(row.queue_id, row.status) for row in board.queues()] == [("q2", QueueStatus.FULL)]
