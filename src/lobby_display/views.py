"""Read-only views of the board: everything a widget needs to draw, in any locale, as plain data.

The board (`board.py`) builds these from the records it holds; widgets render them and never see
a pydantic record. Names are locale maps (pick one with `models.pick_name`), date-times are
timezone-aware, counts are `None` when unknown (drawn as a dash, never as a false zero).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, tzinfo
from enum import StrEnum

from lobby_display.updates import Call, Feed, FeedStatus


class QueueStatus(StrEnum):
    """What a queue row says about its queue, from its state flags.

    When several flags hold, the first of this precedence wins (see `board.queue_status`):
    CLOSED, PAUSED, BOOKING_CLOSED, FULL, FULL_TODAY, FULL_FOR_FIFO, FULL_FOR_APPOINTMENTS, OPEN.
    UNKNOWN is for a queue whose state has not arrived.
    """

    UNKNOWN = "unknown"
    CLOSED = "closed"
    """Nobody operates the queue (`queue_is_opened` false); the row gives the next opening."""
    PAUSED = "paused"
    """An operator paused the queue."""
    BOOKING_CLOSED = "booking_closed"
    """Booking is closed (`booking_is_opened` false): no new ticket, the queue still moves."""
    FULL = "full"
    """No ticket of any kind can be booked (`queue_is_full`, or full for FIFO and appointments)."""
    FULL_TODAY = "full_today"
    """No availability left today; later days may have some."""
    FULL_FOR_FIFO = "full_for_fifo"
    """No FIFO ticket left; appointments remain."""
    FULL_FOR_APPOINTMENTS = "full_for_appointments"
    """No appointment left; FIFO tickets remain."""
    OPEN = "open"


class Freshness(StrEnum):
    """How far a part of the screen can be trusted, from its feed's health and the time."""

    LIVE = "live"
    """The feed is connected: the numbers are current."""
    RECONNECTING = "reconnecting"
    """The feed is down for less than `stale_after_seconds`: shown normally, with a mark."""
    STALE = "stale"
    """Down for `stale_after_seconds` or more (or restored from disk): dimmed, "out of date
    since" `HealthView.down_since`."""
    WITHDRAWN = "withdrawn"
    """Down for `withdraw_after_seconds` or more: the numbers are not shown."""


class Part(StrEnum):
    """The parts of the screen, each fed by one feed (see `PART_FEED`)."""

    CALLS = "calls"
    """Now calling and recent calls."""
    QUEUES = "queues"
    """Queue rows."""
    COUNTERS = "counters"
    """Counters."""


#: The feed each part of the screen depends on.
PART_FEED: Mapping[Part, Feed] = {
    Part.CALLS: Feed.TICKETS,
    Part.QUEUES: Feed.QUEUES,
    Part.COUNTERS: Feed.COUNTERS,
}


@dataclass(frozen=True, slots=True)
class TimeslotView:
    """Opening hours: from `start` to `end`."""

    start: datetime
    end: datetime


def slots_of_day(
    slots: tuple[TimeslotView, ...], now: datetime, tz: tzinfo
) -> tuple[TimeslotView, ...]:
    """The opening hours of the local day of `now` in `tz`, in order, each once: the slots that
    start that day, and one still open that started the evening before. The service's list may
    repeat a slot or keep the previous evening's; a visitor reading "Today" must see neither."""
    today = now.astimezone(tz).date()
    kept = {
        (slot.start, slot.end): slot
        for slot in slots
        if slot.start.astimezone(tz).date() == today or slot.start <= now < slot.end
    }
    return tuple(kept[key] for key in sorted(kept))


@dataclass(frozen=True, slots=True)
class AppointmentTypeView:
    """One appointment type of a queue row."""

    appointment_type_id: str
    names: Mapping[str, str]
    waiting_tickets: int | None
    waiting_people: int | None
    first_availability: datetime | None
    """First free moment for `availability_group_size` people (None: none known)."""
    availability_group_size: int | None
    """The group size `first_availability` is for: the configured one, or the nearest smaller
    size the service gives when it gives none for the configured one (None: no size given)."""


@dataclass(frozen=True, slots=True)
class QueueView:
    """One queue row."""

    queue_id: str
    names: Mapping[str, str]
    status: QueueStatus
    waiting_tickets: int | None
    """Waiting tickets; None while neither the queue state nor any ticket of it is known."""
    waiting_people: int | None
    counts_from_tickets: bool
    """True when the counts were made from the current tickets (no queue state yet)."""
    appointment_types: tuple[AppointmentTypeView, ...]
    first_availability: datetime | None
    """Earliest first availability over the appointment types, for the configured group size."""
    group_size: int
    """The configured group size."""
    today_timeslots: tuple[TimeslotView, ...]
    next_timeslot: TimeslotView | None
    """The next opening (`next_queue_timeslot`): what a CLOSED row shows."""


@dataclass(frozen=True, slots=True)
class CounterView:
    """One counter."""

    counter_id: str
    names: Mapping[str, str]
    value: float | None
    """None while the counter's value has not arrived."""


@dataclass(frozen=True, slots=True)
class CallView:
    """A call as the screen lists it: the `Call`, its queue's names and its highlight."""

    call: Call
    queue_names: Mapping[str, str]
    seen_at: datetime
    """When the board learned of the call (highlights are timed from here, on the box's clock)."""
    highlight_until: datetime | None
    """End of the highlight; None for a call that is never highlighted (too old, restored)."""

    def highlighted(self, now: datetime) -> bool:
        """True while the call is highlighted at `now`."""
        return self.highlight_until is not None and now < self.highlight_until


@dataclass(frozen=True, slots=True)
class NowCalling:
    """What the "now calling" area shows: the highlighted calls, else the latest one, steady."""

    calls: tuple[CallView, ...]
    """Newest first; empty before any call."""
    highlighted: bool
    """True when `calls` are the highlighted calls, False when it is the latest call, steady."""


@dataclass(frozen=True, slots=True)
class HealthView:
    """A feed's health and how fresh its part of the screen is."""

    feed: Feed
    freshness: Freshness
    status: FeedStatus
    down_since: datetime | None
    """Since when the part's data is not current (None while live): the "out of date since"."""
    attempt: int
    next_try_at: datetime | None
    error: str
    restored: bool
    """True while the part shows data restored from disk (not yet replaced by the feed)."""
