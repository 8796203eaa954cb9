"""The messages that flow one way from the feeds to the board, and the calls the board hands on.

Feeds decode the network into these plain, immutable values; the board applies them. Nothing
here knows HTTP or the terminal. A *snapshot* replaces a feed's whole part of the board (after
every (re)connect); a *change* updates one record.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum

from lobby_display.models import Counter, Endpoint, Place, Queue, QueueState, Ticket

#: Gives the current moment, timezone-aware: the feeds, the screen, the announcer and the
#: recorders read the time through one (tests and replays set their own).
Clock = Callable[[], datetime]


def utc_now() -> datetime:
    """The default clock: now, in UTC."""
    return datetime.now(UTC)


class Feed(StrEnum):
    """The three live feeds of the display service."""

    TICKETS = "tickets"
    QUEUES = "queues"
    COUNTERS = "counters"


class FeedStatus(StrEnum):
    """Where a feed stands."""

    CONNECTING = "connecting"
    """Never connected yet (start-up)."""
    LIVE = "live"
    """Connected, first message applied, events or heartbeats arriving."""
    RECONNECTING = "reconnecting"
    """The stream ended or failed; waiting for the next attempt."""
    REFUSED = "refused"
    """The service refuses our credentials even after a fresh API key."""


@dataclass(frozen=True, slots=True)
class FeedHealth:
    """A feed's health report. The board derives freshness (stale, withdrawn) from these."""

    feed: Feed
    status: FeedStatus
    at: datetime
    """When this report was made."""
    last_message_at: datetime | None = None
    """Last event or heartbeat received (None before the first)."""
    attempt: int = 0
    """Reconnection attempts since the feed was last live."""
    next_try_at: datetime | None = None
    """When the next connection attempt is due, while reconnecting."""
    error: str = ""
    """The last error in words, secrets removed ("" when none)."""


@dataclass(frozen=True, slots=True)
class TicketsSnapshot:
    """Every current ticket of the configured queues: replaces the board's tickets."""

    tickets: tuple[Ticket, ...]


@dataclass(frozen=True, slots=True)
class TicketChanged:
    """One ticket as it is now (a done or canceled ticket leaves the board)."""

    ticket: Ticket


@dataclass(frozen=True, slots=True)
class TicketRemoved:
    """A ticket that is no longer current."""

    ticket_id: str


@dataclass(frozen=True, slots=True)
class QueueStatesSnapshot:
    """The state of every configured queue: replaces the board's queue states."""

    states: Mapping[str, QueueState]


@dataclass(frozen=True, slots=True)
class QueueStateChanged:
    """The new state of one queue."""

    state: QueueState


@dataclass(frozen=True, slots=True)
class CountersSnapshot:
    """Every configured counter: replaces the board's counters."""

    counters: Mapping[str, Counter]


@dataclass(frozen=True, slots=True)
class CounterChanged:
    """One counter as it is now."""

    counter: Counter


@dataclass(frozen=True, slots=True)
class ReferenceData:
    """Names and structure loaded over REST: the place, its queues, endpoints and counters.

    Names are locale maps holding every configured locale. Replaces earlier reference data.
    """

    place: Place | None
    queues: Mapping[str, Queue] = field(default_factory=dict)
    endpoints: Mapping[str, Endpoint] = field(default_factory=dict)
    counters: Mapping[str, Counter] = field(default_factory=dict)


Update = (
    FeedHealth
    | TicketsSnapshot
    | TicketChanged
    | TicketRemoved
    | QueueStatesSnapshot
    | QueueStateChanged
    | CountersSnapshot
    | CounterChanged
    | ReferenceData
)


@dataclass(frozen=True, slots=True)
class Call:
    """A ticket called to a counter: what the screen highlights and the announcer speaks."""

    ticket_id: str
    label: str
    queue_id: str
    endpoint_id: str | None
    counter_names: Mapping[str, str]
    """The endpoint's name by locale ("" key: locale unknown), as the ticket and reference data
    give it; pick one with `models.pick_name`."""
    called_at: datetime
    """When the ticket was called (or recalled, for a recall)."""
    recall: int = 0
    """0 for the first call, 1 for the first recall, and so on."""
    announce: bool = True
    """False for a call first seen too long after it happened (after a restart, say): listed,
    but neither highlighted nor announced."""

    @property
    def is_recall(self) -> bool:
        """True when this call repeats an earlier one."""
        return self.recall > 0
