"""Builders shared by the board's tests: tickets, queue states, counters, reference data, a clock.

No tests here; the board's test modules import these (pytest puts this directory on the path).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

from lobby_display.board import Board, BoardSettings
from lobby_display.models import Counter, Endpoint, Place, Queue, QueueState, Ticket
from lobby_display.updates import Feed, FeedHealth, FeedStatus, ReferenceData

#: The start of every test's day.
T0 = datetime(2026, 11, 22, 13, 0, tzinfo=UTC)


def at(seconds: float) -> datetime:
    """`seconds` after T0."""
    return T0 + timedelta(seconds=seconds)


def service_time(moment: datetime) -> str:
    """A date-time in the display service's own shape (`2026-11-22T14:05:00:00,0000+0100`)."""
    return moment.strftime("%Y-%m-%dT%H:%M:%S:00,0000%z")


def make_board(**settings: Any) -> Board:
    """A board started at T0 with `settings` over the defaults."""
    return Board(BoardSettings(**settings), started_at=T0)


def ticket(
    ticket_id: str,
    state: int = 0,
    *,
    queue: str = "q1",
    queue_name: str = "",
    label: str | None = None,
    recalled_count: int = 0,
    called_at: datetime | None = None,
    recalled_at: Iterable[datetime] = (),
    endpoint: str | None = None,
    endpoint_name: str = "",
    lang: str = "en_US",
    group: int = 1,
    appointment_type: str | None = None,
    appointment_type_name: str = "",
) -> Ticket:
    """A ticket as the service sends it (date-times in the service's shape)."""
    return Ticket.model_validate(
        {
            "ticketId": ticket_id,
            "label": label if label is not None else ticket_id.upper(),
            "queue": {"id": queue, "name": queue_name},
            "state": state,
            "groupSize": group,
            "recalledCount": recalled_count,
            "lang": lang,
            "appointmentType": {"id": appointment_type, "name": appointment_type_name},
            "endpoint": {"id": endpoint, "name": endpoint_name},
            "timeline": {
                "calledAt": service_time(called_at) if called_at else None,
                "recalledAt": [service_time(moment) for moment in recalled_at],
            },
        }
    )


def queue_state(queue_id: str, **fields: Any) -> QueueState:
    """A queue state; `fields` as the service names them (`queueIsFull`, `queueLength`, ...)."""
    return QueueState.model_validate({"queueId": queue_id, **fields})


def counter(counter_id: str, value: float, names: Mapping[str, str] | None = None) -> Counter:
    """A counter with a value and names."""
    return Counter.model_validate(
        {"counterId": counter_id, "name": dict(names or {}), "infos": {"value": value}}
    )


def reference(
    queues: Mapping[str, Mapping[str, Any]] | None = None,
    endpoints: Mapping[str, Mapping[str, str]] | None = None,
    counters: Mapping[str, Mapping[str, str]] | None = None,
    place: Mapping[str, str] | None = None,
) -> ReferenceData:
    """Reference data: queues as `{id: {"name": {...}, "appointmentTypes": {...}}}`, endpoints
    and counters as `{id: names}`."""
    return ReferenceData(
        place=Place.model_validate({"placeId": "P", "name": dict(place)}) if place else None,
        queues={
            queue_id: Queue.model_validate({"queueId": queue_id, **fields})
            for queue_id, fields in (queues or {}).items()
        },
        endpoints={
            endpoint_id: Endpoint.model_validate({"endpointId": endpoint_id, "name": dict(names)})
            for endpoint_id, names in (endpoints or {}).items()
        },
        counters={
            counter_id: Counter.model_validate({"counterId": counter_id, "name": dict(names)})
            for counter_id, names in (counters or {}).items()
        },
    )


def health(feed: Feed, status: FeedStatus, seconds: float, error: str = "") -> FeedHealth:
    """A health report of `feed` made `seconds` after T0."""
    return FeedHealth(feed=feed, status=status, at=at(seconds), error=error)


def recent_labels(board: Board) -> list[str]:
    """The labels of the recent calls, newest first."""
    return [view.call.label for view in board.recent_calls()]
