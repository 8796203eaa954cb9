"""The display service's two date-time shapes, as the simulator writes them."""

from __future__ import annotations

from datetime import UTC, datetime


def service_datetime(moment: datetime) -> str:
    """Ticket, counter and time-slot shape: `2026-11-22T14:05:00:00,0000+0100`.

    `moment` must be aware; it is written in its own time zone (the place's).
    """
    if moment.tzinfo is None:
        raise ValueError("a naive datetime has no offset to write")
    return moment.strftime("%Y-%m-%dT%H:%M:%S") + ":00,0000" + moment.strftime("%z")


def iso_z(moment: datetime) -> str:
    """Queue-state shape: ISO-8601 in UTC with milliseconds and `Z`, `2026-11-22T13:05:00.000Z`."""
    if moment.tzinfo is None:
        raise ValueError("a naive datetime has no offset to write")
    utc = moment.astimezone(UTC)
    return utc.strftime("%Y-%m-%dT%H:%M:%S.") + f"{utc.microsecond // 1000:03d}Z"
