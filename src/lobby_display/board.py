"""The board: the queue screen's view model, built from the feeds' updates (pure, no I/O).

`Board.apply(update, now)` takes an update of `updates.py` and returns `Changes`, naming what to
redraw; its read-only views (`views.py`) are what the widgets draw. Every rule about what the
screen means lives here: docs/architecture.md says where and how.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from functools import lru_cache
from types import MappingProxyType
from typing import Final

from lobby_display.config import DisplaySettings, Settings
from lobby_display.models import (
    LOCALES,
    WAITING_STATES,
    Counter,
    Endpoint,
    Place,
    Queue,
    QueueState,
    Ticket,
    TicketState,
    clean_text,
    pick_name,
)
from lobby_display.updates import (
    Call,
    CounterChanged,
    CountersSnapshot,
    Feed,
    FeedHealth,
    FeedStatus,
    QueueStateChanged,
    QueueStatesSnapshot,
    ReferenceData,
    TicketChanged,
    TicketRemoved,
    TicketsSnapshot,
    Update,
)
from lobby_display.views import (
    PART_FEED,
    AppointmentTypeView,
    CallView,
    CounterView,
    Freshness,
    HealthView,
    NowCalling,
    Part,
    QueueStatus,
    QueueView,
    TimeslotView,
)

__all__ = [
    "Board",
    "BoardMemory",
    "BoardSettings",
    "Changes",
    "RememberedCall",
    "WaitingCount",
    "first_availability",
    "queue_status",
]

#: Most calls the "now calling" area shows at once (simultaneous calls share its space).
NOW_CALLING_MAX: Final = 6


@dataclass(frozen=True, slots=True)
class BoardSettings:
    """The few settings the board's rules need."""

    queue_ids: tuple[str, ...] = ()
    """Queues shown, in this order; empty: every queue the board hears of, by name."""
    counter_ids: tuple[str, ...] = ()
    """Counters shown, in this order; empty: every counter the board hears of, by name."""
    locales: tuple[str, ...] = ("en_US",)
    """The locales shown; the first one's names order the rows when no order is configured."""
    recent_calls: int = 6
    highlight_seconds: float = 12.0
    call_max_age_seconds: float = 600.0
    group_size: int = 1
    stale_after_seconds: float = 30.0
    withdraw_after_seconds: float = 300.0
    seen_calls_limit: int = 4096
    """Tickets whose calls are remembered (against re-announcing after a reconnect)."""

    def __post_init__(self) -> None:
        if self.seen_calls_limit < 1 or self.recent_calls < 0 or self.group_size < 1:
            raise ValueError("seen_calls_limit and group_size must be positive, recent_calls >= 0")
        if self.withdraw_after_seconds < self.stale_after_seconds:
            raise ValueError("withdraw_after_seconds must not be shorter than stale_after_seconds")

    @classmethod
    def from_display(
        cls,
        display: DisplaySettings,
        queue_ids: Iterable[str] = (),
        counter_ids: Iterable[str] = (),
    ) -> BoardSettings:
        """Board settings from the `[display]` section and the place's queue and counter ids."""
        return cls(
            queue_ids=tuple(queue_ids),
            counter_ids=tuple(counter_ids),
            locales=tuple(display.locales),
            recent_calls=display.recent_calls,
            highlight_seconds=display.highlight_seconds,
            call_max_age_seconds=display.call_max_age_seconds,
            group_size=display.group_size,
            stale_after_seconds=display.stale_after_seconds,
            withdraw_after_seconds=display.withdraw_after_seconds,
        )

    @classmethod
    def from_settings(cls, settings: Settings) -> BoardSettings:
        """Board settings from a screen's whole configuration."""
        return cls.from_display(settings.display, settings.place.queues, settings.place.counters)


@dataclass(frozen=True, slots=True)
class Changes:
    """What one update changed, so the screen redraws only that."""

    queues: frozenset[str] = frozenset()
    """Queue rows whose content changed."""
    layout: bool = False
    """Queue rows or counters appeared, disappeared or moved."""
    calls: bool = False
    """Now calling or the recent calls changed."""
    new_calls: tuple[Call, ...] = ()
    """Calls to highlight and announce, in the order they happened (calls too old to announce
    are listed in the recent calls but not here)."""
    counters: frozenset[str] = frozenset()
    """Counters whose name or value changed."""
    health: frozenset[Feed] = frozenset()
    """Feeds whose health report changed (status, attempt, error, next try)."""
    reference: bool = False
    """Names changed (place, queues, endpoints, counters, appointment types)."""

    def __bool__(self) -> bool:
        return bool(
            self.queues
            or self.layout
            or self.calls
            or self.new_calls
            or self.counters
            or self.health
            or self.reference
        )


@dataclass(frozen=True, slots=True)
class BoardSizes:
    """How much the board holds (for the bounded-memory check and the service's log)."""

    current_tickets: int
    seen_calls: int
    recent_calls: int
    queues: int
    counters: int


@dataclass(frozen=True, slots=True)
class WaitingCount:
    """Waiting tickets and people of one queue as counted from its tickets."""

    tickets: int
    people: int
    by_type: Mapping[str, tuple[int, int]]
    """Appointment type id -> (tickets, people)."""


@dataclass(frozen=True, slots=True)
class RememberedCall:
    """A listed call, as kept across a restart."""

    call: Call
    seen_at: datetime
    ticket_counter_names: Mapping[str, str]
    """The endpoint's name as the ticket gave it (completed by reference data when restored)."""


@dataclass(frozen=True, slots=True)
class BoardMemory:
    """What a board keeps across a restart (`Board.memory`, `Board.from_memory`); the state
    module writes it to disk and reads it back."""

    data_as_of: Mapping[Feed, datetime]
    """When each feed's part was last current."""
    reference: ReferenceData
    queue_states: Mapping[str, QueueState]
    counters: Mapping[str, Counter]
    ticket_queue_names: Mapping[str, Mapping[str, str]]
    """Queue id -> names by locale, as tickets gave them."""
    ticket_type_names: Mapping[str, Mapping[str, Mapping[str, str]]]
    """Queue id -> appointment type id -> names by locale, as tickets gave them."""
    waiting_from_tickets: Mapping[str, WaitingCount] | None
    """Counts made from the tickets, by queue id; None before any tickets snapshot."""
    seen_calls: Mapping[str, int]
    """Ticket id -> highest call number seen, for the tickets still called."""
    recent_calls: tuple[RememberedCall, ...]
    """Newest first."""


# --- pure rules ------------------------------------------------------------------------------


def queue_status(state: QueueState | None, reference: Queue | None = None) -> QueueStatus:
    """The status a queue row shows; the first rule that holds wins.

    1. CLOSED when `queue_is_opened` is false: nobody serves, so nothing else matters to the
       people waiting (a pause flag left on a closed queue must not promise a quick resume).
    2. PAUSED when `pause` is true (the queue record's `state.pause` when the state is silent).
    3. BOOKING_CLOSED when `booking_is_opened` is false: the operators' decision explains any
       fullness that comes with it.
    4. FULL when `queue_is_full`, or when full for FIFO and for appointments alike.
    5. FULL_TODAY when `queue_is_full_for_the_day` (later days may have room).
    6. FULL_FOR_FIFO, then 7. FULL_FOR_APPOINTMENTS (beta flags: one kind of ticket remains).
    8. OPEN otherwise. A flag the service leaves out counts as not set. Without any state and
       without a pause in the queue record: UNKNOWN.
    """
    reference_pause = bool(reference and reference.state and reference.state.pause)
    if state is None:
        return QueueStatus.PAUSED if reference_pause else QueueStatus.UNKNOWN
    pause = state.pause if state.pause is not None else reference_pause
    if state.queue_is_opened is False:
        return QueueStatus.CLOSED
    if pause:
        return QueueStatus.PAUSED
    if state.booking_is_opened is False:
        return QueueStatus.BOOKING_CLOSED
    if state.queue_is_full or (
        state.queue_is_full_for_fifo and state.queue_is_full_for_appointment
    ):
        return QueueStatus.FULL
    if state.queue_is_full_for_the_day:
        return QueueStatus.FULL_TODAY
    if state.queue_is_full_for_fifo:
        return QueueStatus.FULL_FOR_FIFO
    if state.queue_is_full_for_appointment:
        return QueueStatus.FULL_FOR_APPOINTMENTS
    return QueueStatus.OPEN


def first_availability(
    by_group_size: Mapping[int, datetime | None], group_size: int
) -> tuple[datetime | None, int | None]:
    """The first availability for `group_size` people and the group size it is for.

    The configured size when the service gives it (its value may be None: no room for such a
    group, which is shown as such rather than replaced by a smaller group's date). Otherwise the
    nearest smaller size the service gives. Otherwise nothing: a larger group's date would say
    nothing true about a smaller group. Returns (None, None) when no size fits.
    """
    if group_size in by_group_size:
        return by_group_size[group_size], group_size
    smaller = [size for size in by_group_size if size < group_size]
    if not smaller:
        return None, None
    size = max(smaller)
    return by_group_size[size], size


@lru_cache(maxsize=64)
def _locale_of(lang: str) -> str:
    """The locale code a ticket's `lang` names ("fr", "fr-FR", "fr_FR" -> fr_FR); "" if none."""
    text = clean_text(lang, 16).replace("-", "_")
    if text in LOCALES:
        return text
    language = text.split("_", 1)[0].lower()
    if not language:
        return ""
    return next((code for code in LOCALES if code.split("_", 1)[0] == language), "")


def _recall_number(ticket: Ticket) -> int:
    """0 for a first call; each recall adds one (by either sign the service gives of it)."""
    return max(ticket.recalled_count, len(ticket.timeline.recalled_at), 0)


def _call_moment(ticket: Ticket, recall: int) -> datetime | None:
    """When call number `recall` of `ticket` happened, if the ticket says."""
    timeline = ticket.timeline
    if recall == 0:
        return timeline.called_at
    if len(timeline.recalled_at) >= recall:
        return max(timeline.recalled_at)
    return None


def _ticket_names(ticket_lang: str, name: str) -> dict[str, str]:
    return {_locale_of(ticket_lang): name} if name else {}


# --- internal records ------------------------------------------------------------------------


@dataclass(slots=True)
class _Tally:
    """Waiting tickets and people of one queue, counted from the current tickets."""

    tickets: int = 0
    people: int = 0
    by_type: dict[str, list[int]] = field(default_factory=dict)
    """Appointment type id -> [tickets, people]."""

    def add(self, ticket: Ticket, sign: int) -> None:
        people = max(ticket.group_size, 1)
        self.tickets += sign
        self.people += sign * people
        type_id = ticket.appointment_type.id
        if type_id:
            counts = self.by_type.setdefault(type_id, [0, 0])
            counts[0] += sign
            counts[1] += sign * people
            if counts[0] == 0 and counts[1] == 0:
                del self.by_type[type_id]

    def count(self) -> WaitingCount:
        return WaitingCount(
            self.tickets,
            self.people,
            {type_id: (counts[0], counts[1]) for type_id, counts in self.by_type.items()},
        )

    @classmethod
    def of(cls, count: WaitingCount) -> _Tally:
        by_type = {
            type_id: [tickets, people] for type_id, (tickets, people) in count.by_type.items()
        }
        return cls(count.tickets, count.people, by_type)


@dataclass(slots=True)
class _Called:
    """A listed call, with what the board needs to keep it up to date."""

    call: Call
    seen_at: datetime
    highlight_until: datetime | None
    ticket_counter_names: dict[str, str]
    """The endpoint's name as the ticket gave it (kept for when reference data changes)."""
    order: int
    """Arrival order: breaks ties between calls of the same moment (the later seen is newer)."""


@dataclass(slots=True)
class _FeedTrack:
    """What the board knows of one feed's health."""

    status: FeedStatus = FeedStatus.CONNECTING
    down_since: datetime | None = None
    attempt: int = 0
    next_try_at: datetime | None = None
    error: str = ""
    restored: bool = False

    def key(self) -> tuple[object, ...]:
        return (
            self.status,
            self.down_since,
            self.attempt,
            self.next_try_at,
            self.error,
            self.restored,
        )


class _ChangeSet:
    """The mutable tally of one `apply`, frozen into `Changes` at its end."""

    def __init__(self) -> None:
        self.queues: set[str] = set()
        self.layout = False
        self.calls = False
        self.new_calls: list[Call] = []
        self.counters: set[str] = set()
        self.health: set[Feed] = set()
        self.reference = False

    def freeze(self) -> Changes:
        return Changes(
            queues=frozenset(self.queues),
            layout=self.layout,
            calls=self.calls,
            new_calls=tuple(self.new_calls),
            counters=frozenset(self.counters),
            health=frozenset(self.health),
            reference=self.reference,
        )


# --- the board -------------------------------------------------------------------------------


class Board:
    """The view model of one screen: apply updates, read views. Not thread-safe."""

    def __init__(self, settings: BoardSettings, started_at: datetime | None = None) -> None:
        self.settings = settings
        self.revision = 0
        """Counts the updates that changed what the screen shows (to save only what changed)."""
        self._queue_filter = frozenset(settings.queue_ids)
        self._counter_filter = frozenset(settings.counter_ids)
        self._started_at: datetime | None = None
        # Reference data.
        self._place: Place | None = None
        self._ref_queues: dict[str, Queue] = {}
        self._ref_endpoints: dict[str, Endpoint] = {}
        self._ref_counters: dict[str, Counter] = {}
        # Tickets and what is derived from them, kept incrementally.
        self._tickets: dict[str, Ticket] = {}
        self._tallies: dict[str, _Tally] = {}
        self._restored_tallies: dict[str, _Tally] | None = None
        self._ticket_queue_names: dict[str, dict[str, str]] = {}
        self._ticket_type_names: dict[str, dict[str, dict[str, str]]] = {}
        self._had_tickets_snapshot = False
        # Calls.
        self._seen_calls: OrderedDict[str, int] = OrderedDict()
        self._recent: list[_Called] = []
        self._call_order = 0
        # Queue states and counters.
        self._states: dict[str, QueueState] = {}
        self._counters: dict[str, Counter] = {}
        # Feeds.
        self._feeds: dict[Feed, _FeedTrack] = {feed: _FeedTrack() for feed in Feed}
        # Row order, recomputed only when the set of rows or their names may have changed.
        self._queue_order: tuple[str, ...] | None = None
        self._counter_order: tuple[str, ...] | None = None
        if started_at is not None:
            self._start(started_at)

    # --- applying updates ----------------------------------------------------------------

    def apply(self, update: Update, now: datetime) -> Changes:
        """Apply one update at `now`; return what changed on the screen."""
        self._start(now)
        changes = _ChangeSet()
        layout_before = (self._queue_ids(), self._counter_ids())
        match update:
            case TicketChanged(ticket=ticket):
                self._apply_ticket(ticket, now, changes)
            case TicketRemoved(ticket_id=ticket_id):
                self._drop_ticket(ticket_id, changes)
            case TicketsSnapshot(tickets=tickets):
                self._apply_tickets_snapshot(tickets, now, changes)
            case QueueStateChanged(state=state):
                self._apply_queue_state(state, changes)
            case QueueStatesSnapshot(states=states):
                self._apply_queue_states_snapshot(states, changes)
            case CounterChanged(counter=counter):
                self._apply_counter(counter, changes)
            case CountersSnapshot(counters=counters):
                self._apply_counters_snapshot(counters, changes)
            case FeedHealth():
                self._apply_health(update, changes)
            case ReferenceData():
                self._apply_reference(update, changes)
        if (self._queue_ids(), self._counter_ids()) != layout_before:
            changes.layout = True
        frozen = changes.freeze()
        if frozen:
            self.revision += 1
        return frozen

    def _start(self, now: datetime) -> None:
        if self._started_at is None:
            self._started_at = now
            for track in self._feeds.values():
                if track.status is not FeedStatus.LIVE and track.down_since is None:
                    track.down_since = now

    def _wants_queue(self, queue_id: str | None) -> bool:
        if not queue_id:
            return not self._queue_filter
        return not self._queue_filter or queue_id in self._queue_filter

    def _wants_counter(self, counter_id: str) -> bool:
        return bool(counter_id) and (not self._counter_filter or counter_id in self._counter_filter)

    # tickets

    def _apply_ticket(self, ticket: Ticket, now: datetime, changes: _ChangeSet) -> None:
        if ticket.is_finished or not self._wants_queue(ticket.queue.id):
            self._drop_ticket(ticket.ticket_id, changes)
            return
        self._put_ticket(ticket, changes)
        called = self._detect_call(ticket, now, first_snapshot=False)
        if called is not None:
            self._list_call(called, changes)

    def _apply_tickets_snapshot(
        self, tickets: Iterable[Ticket], now: datetime, changes: _ChangeSet
    ) -> None:
        first = not self._had_tickets_snapshot
        self._had_tickets_snapshot = True
        self._data_arrived(Feed.TICKETS, changes)
        if self._restored_tallies is not None:
            changes.queues.update(self._restored_tallies)
            self._restored_tallies = None
        incoming: dict[str, Ticket] = {}
        for ticket in tickets:
            if not ticket.is_finished and self._wants_queue(ticket.queue.id):
                incoming[ticket.ticket_id] = ticket
        for ticket_id in [known for known in self._tickets if known not in incoming]:
            self._drop_ticket(ticket_id, changes)
        detected: list[_Called] = []
        for ticket in incoming.values():
            self._put_ticket(ticket, changes)
            called = self._detect_call(ticket, now, first_snapshot=first)
            if called is not None:
                detected.append(called)
        # Several calls found at once are listed in the order they happened.
        detected.sort(key=lambda called: called.call.called_at)
        for called in detected:
            called.order = self._next_order()
            self._list_call(called, changes)

    def _put_ticket(self, ticket: Ticket, changes: _ChangeSet) -> None:
        old = self._tickets.get(ticket.ticket_id)
        self._tickets[ticket.ticket_id] = ticket
        self._count(old, -1, changes)
        self._count(ticket, +1, changes)
        self._learn_ticket_names(ticket, changes)

    def _drop_ticket(self, ticket_id: str, changes: _ChangeSet) -> None:
        old = self._tickets.pop(ticket_id, None)
        self._count(old, -1, changes)

    def _count(self, ticket: Ticket | None, sign: int, changes: _ChangeSet) -> None:
        if ticket is None or ticket.state not in WAITING_STATES:
            return
        queue_id = ticket.queue.id or ""
        tally = self._tallies.get(queue_id)
        if tally is None:
            tally = self._tallies[queue_id] = _Tally()
        tally.add(ticket, sign)
        if tally.tickets == 0 and tally.people == 0 and not tally.by_type:
            del self._tallies[queue_id]
        if queue_id and queue_id not in self._states:
            # The row counts from the tickets only while its queue has no state.
            changes.queues.add(queue_id)

    def _learn_ticket_names(self, ticket: Ticket, changes: _ChangeSet) -> None:
        queue_id = ticket.queue.id
        if not queue_id:
            return
        locale = _locale_of(ticket.lang)
        names = self._ticket_queue_names.get(queue_id)
        if names is None:
            names = self._ticket_queue_names[queue_id] = {}
            self._queue_order = None  # a queue heard of through a ticket may be a new row
            changes.queues.add(queue_id)
        if ticket.queue.name and names.get(locale) != ticket.queue.name:
            names[locale] = ticket.queue.name
            self._queue_order = None
            changes.queues.add(queue_id)
        type_id = ticket.appointment_type.id
        if type_id and ticket.appointment_type.name:
            by_type = self._ticket_type_names.setdefault(queue_id, {})
            type_names = by_type.setdefault(type_id, {})
            if type_names.get(locale) != ticket.appointment_type.name:
                type_names[locale] = ticket.appointment_type.name
                changes.queues.add(queue_id)

    # calls

    def _detect_call(self, ticket: Ticket, now: datetime, first_snapshot: bool) -> _Called | None:
        """The call this sight of `ticket` makes, if it is a new one; remembers it as seen."""
        ticket_id = ticket.ticket_id
        if ticket.state in WAITING_STATES:
            # Sent back to wait: calling it again will be a new call.
            self._seen_calls.pop(ticket_id, None)
            return None
        if ticket.state != TicketState.CALLED:
            return None
        recall = _recall_number(ticket)
        seen = self._seen_calls.get(ticket_id)
        if seen is not None:
            self._seen_calls.move_to_end(ticket_id)
            if recall <= seen:
                return None
        self._seen_calls[ticket_id] = recall
        self._seen_calls.move_to_end(ticket_id)
        while len(self._seen_calls) > self.settings.seen_calls_limit:
            self._seen_calls.popitem(last=False)
        moment = _call_moment(ticket, recall)
        if moment is None:
            called_at = now
            announce = not first_snapshot
        else:
            called_at = moment
            announce = (now - moment).total_seconds() <= self.settings.call_max_age_seconds
        ticket_counter_names = _ticket_names(ticket.lang, ticket.endpoint.name)
        call = Call(
            ticket_id=ticket_id,
            label=ticket.label,
            queue_id=ticket.queue.id or "",
            endpoint_id=ticket.endpoint.id,
            counter_names=self._endpoint_names(ticket.endpoint.id, ticket_counter_names),
            called_at=called_at,
            recall=recall,
            announce=announce,
        )
        highlight_until = (
            now + timedelta(seconds=self.settings.highlight_seconds) if announce else None
        )
        return _Called(call, now, highlight_until, ticket_counter_names, self._next_order())

    def _next_order(self) -> int:
        self._call_order += 1
        return self._call_order

    def _list_call(self, called: _Called, changes: _ChangeSet) -> None:
        """Put a call in the recent calls (newest first, one entry per ticket)."""
        recent = [entry for entry in self._recent if entry.call.ticket_id != called.call.ticket_id]
        recent.append(called)
        recent.sort(key=lambda entry: (entry.call.called_at, entry.order), reverse=True)
        del recent[self._recent_capacity() :]
        self._recent = recent
        changes.calls = True
        if called.call.announce:
            changes.new_calls.append(called.call)

    def _recent_capacity(self) -> int:
        return max(self.settings.recent_calls, NOW_CALLING_MAX)

    def _endpoint_names(
        self, endpoint_id: str | None, fallback: Mapping[str, str]
    ) -> dict[str, str]:
        """An endpoint's names: the reference data's, completed by the ticket's own name."""
        names = dict(fallback)
        endpoint = self._ref_endpoints.get(endpoint_id) if endpoint_id else None
        if endpoint is not None:
            names.update(endpoint.name)
        return names

    # queue states

    def _apply_queue_state(self, state: QueueState, changes: _ChangeSet) -> None:
        queue_id = state.queue_id
        if not queue_id or not self._wants_queue(queue_id):
            return
        if self._states.get(queue_id) != state:
            if queue_id not in self._states:
                self._queue_order = None
            self._states[queue_id] = state
            changes.queues.add(queue_id)

    def _apply_queue_states_snapshot(
        self, states: Mapping[str, QueueState], changes: _ChangeSet
    ) -> None:
        self._data_arrived(Feed.QUEUES, changes)
        wanted: dict[str, QueueState] = {}
        for key, state in states.items():
            queue_id = state.queue_id or key
            if queue_id and self._wants_queue(queue_id):
                wanted[queue_id] = (
                    state if state.queue_id else state.model_copy(update={"queue_id": queue_id})
                )
        for queue_id in set(self._states) | set(wanted):
            if self._states.get(queue_id) != wanted.get(queue_id):
                changes.queues.add(queue_id)
        if set(self._states) != set(wanted):
            self._queue_order = None
        self._states = wanted

    # counters

    def _apply_counter(self, counter: Counter, changes: _ChangeSet) -> None:
        if not self._wants_counter(counter.counter_id):
            return
        old = self._counters.get(counter.counter_id)
        if old != counter:
            self._counters[counter.counter_id] = counter
            changes.counters.add(counter.counter_id)
            if old is None or old.name != counter.name:
                self._counter_order = None

    def _apply_counters_snapshot(
        self, counters: Mapping[str, Counter], changes: _ChangeSet
    ) -> None:
        self._data_arrived(Feed.COUNTERS, changes)
        wanted = {
            counter.counter_id: counter
            for counter in counters.values()
            if self._wants_counter(counter.counter_id)
        }
        for counter_id in set(self._counters) | set(wanted):
            if self._counters.get(counter_id) != wanted.get(counter_id):
                changes.counters.add(counter_id)
        self._counters = wanted
        self._counter_order = None

    # health and reference data

    def _data_arrived(self, feed: Feed, changes: _ChangeSet) -> None:
        """A feed's snapshot replaced its part: whatever was restored from disk is gone."""
        track = self._feeds[feed]
        if track.restored:
            track.restored = False
            changes.health.add(feed)

    def _apply_health(self, health: FeedHealth, changes: _ChangeSet) -> None:
        track = self._feeds[health.feed]
        before = track.key()
        if health.status is FeedStatus.LIVE:
            track.down_since = None
            track.restored = False
        elif track.status is FeedStatus.LIVE or track.down_since is None:
            track.down_since = health.at
        track.status = health.status
        track.attempt = health.attempt
        track.next_try_at = health.next_try_at
        track.error = health.error
        if track.key() != before:
            changes.health.add(health.feed)

    def _apply_reference(self, reference: ReferenceData, changes: _ChangeSet) -> None:
        self._place = reference.place
        self._ref_queues = {key: queue for key, queue in reference.queues.items() if key}
        self._ref_endpoints = dict(reference.endpoints)
        self._ref_counters = dict(reference.counters)
        self._queue_order = None
        self._counter_order = None
        changes.reference = True
        changes.queues.update(self._queue_ids())
        changes.counters.update(self._counter_ids())
        self._refresh_call_names(changes)

    def _refresh_call_names(self, changes: _ChangeSet) -> None:
        for entry in self._recent:
            names = self._endpoint_names(entry.call.endpoint_id, entry.ticket_counter_names)
            if names != entry.call.counter_names:
                entry.call = replace(entry.call, counter_names=names)
                changes.calls = True
        # Queue names of the calls come from the reference data too.
        if self._recent:
            changes.calls = True

    # --- reading: order of rows ----------------------------------------------------------

    def _queue_ids(self) -> tuple[str, ...]:
        if self._queue_order is None:
            if self.settings.queue_ids:
                self._queue_order = tuple(dict.fromkeys(self.settings.queue_ids))
            else:
                known = set(self._ref_queues) | set(self._states) | set(self._ticket_queue_names)
                self._queue_order = tuple(
                    sorted(
                        known,
                        key=lambda queue_id: self._sort_key(self.queue_names(queue_id), queue_id),
                    )
                )
        return self._queue_order

    def _counter_ids(self) -> tuple[str, ...]:
        if self._counter_order is None:
            if self.settings.counter_ids:
                self._counter_order = tuple(dict.fromkeys(self.settings.counter_ids))
            else:
                known = {key for key in self._ref_counters if key} | set(self._counters)
                self._counter_order = tuple(
                    sorted(
                        known,
                        key=lambda counter_id: self._sort_key(
                            self.counter_names(counter_id), counter_id
                        ),
                    )
                )
        return self._counter_order

    def _sort_key(self, names: Mapping[str, str], key: str) -> tuple[str, str]:
        locales = self.settings.locales or ("en_US",)
        return (pick_name(names, locales[0], locales).casefold(), key)

    # --- reading: names --------------------------------------------------------------------

    @property
    def place(self) -> Place | None:
        """The place's record from reference data (or restored from disk); None before."""
        return self._place

    def place_names(self) -> Mapping[str, str]:
        """The place's names by locale (empty before reference data)."""
        return MappingProxyType(dict(self._place.name)) if self._place else MappingProxyType({})

    def queue_names(self, queue_id: str) -> Mapping[str, str]:
        """A queue's names by locale: the reference data's, completed by what tickets say."""
        names = dict(self._ticket_queue_names.get(queue_id, {}))
        queue = self._ref_queues.get(queue_id)
        if queue is not None:
            names.update(queue.name)
        return names

    def counter_names(self, counter_id: str) -> Mapping[str, str]:
        """A counter's names by locale: the reference data's, completed by the feed's."""
        names: dict[str, str] = {}
        counter = self._counters.get(counter_id)
        if counter is not None:
            names.update(counter.name)
        reference = self._ref_counters.get(counter_id)
        if reference is not None:
            names.update(reference.name)
        return names

    # --- reading: views --------------------------------------------------------------------

    def queues(self) -> tuple[QueueView, ...]:
        """The queue rows, in the configured order (else by name in the first locale)."""
        return tuple(self._queue_view(queue_id) for queue_id in self._queue_ids())

    def queue(self, queue_id: str) -> QueueView | None:
        """One queue row, or None when the queue is not on the board."""
        return self._queue_view(queue_id) if queue_id in self._queue_ids() else None

    def _queue_view(self, queue_id: str) -> QueueView:
        state = self._states.get(queue_id)
        reference = self._ref_queues.get(queue_id)
        group_size = self.settings.group_size
        tally: _Tally | None = None
        counts_from_tickets = state is None
        if state is not None:
            waiting_tickets: int | None = state.queue_length.queue_ticket_length
            waiting_people: int | None = state.queue_length.queue_people_length
        else:
            tallies = self._restored_tallies
            if tallies is None and self._had_tickets_snapshot:
                tallies = self._tallies
            if tallies is None:
                waiting_tickets = waiting_people = None
            else:
                tally = tallies.get(queue_id, _Tally())
                waiting_tickets, waiting_people = tally.tickets, tally.people
        type_ids: dict[str, None] = {}
        if reference is not None:
            type_ids.update(dict.fromkeys(reference.appointment_types))
        # Types the reference data does not list are shown when the numbers name them.
        extra: set[str] = set()
        if state is not None:
            extra = set(state.queue_length.by_appointment_type) | set(
                state.all_first_availabilities
            )
        elif tally is not None:
            extra = set(tally.by_type)
        type_ids.update(dict.fromkeys(sorted(extra - set(type_ids))))
        types = tuple(
            self._appointment_type_view(queue_id, type_id, state, tally, reference)
            for type_id in type_ids
        )
        firsts = [view.first_availability for view in types if view.first_availability]
        return QueueView(
            queue_id=queue_id,
            names=MappingProxyType(dict(self.queue_names(queue_id))),
            status=queue_status(state, reference),
            waiting_tickets=waiting_tickets,
            waiting_people=waiting_people,
            counts_from_tickets=counts_from_tickets,
            appointment_types=types,
            first_availability=min(firsts) if firsts else None,
            group_size=group_size,
            today_timeslots=tuple(
                TimeslotView(slot.start_time, slot.end_time) for slot in state.day_queue_timeslot
            )
            if state is not None
            else (),
            next_timeslot=TimeslotView(
                state.next_queue_timeslot.start_time, state.next_queue_timeslot.end_time
            )
            if state is not None and state.next_queue_timeslot is not None
            else None,
        )

    def _appointment_type_view(
        self,
        queue_id: str,
        type_id: str,
        state: QueueState | None,
        tally: _Tally | None,
        reference: Queue | None,
    ) -> AppointmentTypeView:
        names = dict(self._ticket_type_names.get(queue_id, {}).get(type_id, {}))
        if reference is not None and type_id in reference.appointment_types:
            names.update(reference.appointment_types[type_id].name)
        waiting_tickets: int | None = None
        waiting_people: int | None = None
        first: datetime | None = None
        size: int | None = None
        if state is not None:
            part = state.queue_length.by_appointment_type.get(type_id)
            if part is not None:
                waiting_tickets, waiting_people = part.queue_ticket_length, part.queue_people_length
            by_size = state.all_first_availabilities.get(type_id)
            if by_size:
                first, size = first_availability(by_size, self.settings.group_size)
        elif tally is not None:
            waiting_tickets, waiting_people = tally.by_type.get(type_id, (0, 0))
        return AppointmentTypeView(
            appointment_type_id=type_id,
            names=MappingProxyType(names),
            waiting_tickets=waiting_tickets,
            waiting_people=waiting_people,
            first_availability=first,
            availability_group_size=size,
        )

    def counters(self) -> tuple[CounterView, ...]:
        """The counters, in the configured order (else by name in the first locale)."""
        views = []
        for counter_id in self._counter_ids():
            # Values come from the feed only: the reference data's may be half an hour old.
            source = self._counters.get(counter_id)
            views.append(
                CounterView(
                    counter_id=counter_id,
                    names=MappingProxyType(dict(self.counter_names(counter_id))),
                    value=source.infos.value if source is not None else None,
                )
            )
        return tuple(views)

    def highlight_from(self, call: Call, now: datetime) -> Changes:
        """Highlight `call` for `highlight_seconds` from `now`, when its announcement starts.

        Calls of a burst are announced one after the other; renewing each call's highlight when
        its own sound starts keeps the screen and the voice in step. A call no longer listed, or
        already followed by a recall of the same ticket, is left alone.
        """
        for entry in self._recent:
            if entry.call.ticket_id != call.ticket_id:
                continue
            if entry.call.recall != call.recall or not entry.call.announce:
                break
            until = now + timedelta(seconds=self.settings.highlight_seconds)
            if entry.highlight_until is None or entry.highlight_until < until:
                entry.highlight_until = until
                self.revision += 1
                return Changes(calls=True)
            break
        return Changes()

    def recent_calls(self) -> tuple[CallView, ...]:
        """The last `recent_calls` distinct tickets called, newest first."""
        return tuple(self._call_view(entry) for entry in self._recent[: self.settings.recent_calls])

    def now_calling(self, now: datetime) -> NowCalling:
        """The latest call and the calls made in the `highlight_seconds` before it (newest
        first), the ones a visitor may still be looking for.

        Each is highlighted until its own highlight ends; the group stays on the screen, steady,
        until the next call. Cards that vanished one by one as their highlights ended would
        make the other labels jump in size every few seconds (and lay the screen out again).
        """
        if not self._recent:
            return NowCalling((), False)
        latest = self._recent[0]
        since = latest.seen_at - timedelta(seconds=self.settings.highlight_seconds)
        with_it = [
            entry
            for entry in self._recent[1:]
            if entry.highlight_until is not None and entry.seen_at > since
        ]
        group = [latest, *with_it[: NOW_CALLING_MAX - 1]]
        highlighted = any(
            entry.highlight_until is not None and now < entry.highlight_until for entry in group
        )
        return NowCalling(tuple(self._call_view(entry) for entry in group), highlighted)

    def _call_view(self, entry: _Called) -> CallView:
        return CallView(
            call=entry.call,
            queue_names=MappingProxyType(dict(self.queue_names(entry.call.queue_id))),
            seen_at=entry.seen_at,
            highlight_until=entry.highlight_until,
        )

    def health(self, now: datetime) -> Mapping[Feed, HealthView]:
        """Each feed's health and freshness at `now`."""
        self._start(now)
        return MappingProxyType({feed: self._health_view(feed, now) for feed in Feed})

    def parts(self, now: datetime) -> Mapping[Part, HealthView]:
        """How fresh each part of the screen is at `now` (it changes with time alone)."""
        self._start(now)
        return MappingProxyType(
            {part: self._health_view(feed, now) for part, feed in PART_FEED.items()}
        )

    def freshness(self, part: Part, now: datetime) -> Freshness:
        """How fresh one part of the screen is at `now`."""
        return self.parts(now)[part].freshness

    def _health_view(self, feed: Feed, now: datetime) -> HealthView:
        track = self._feeds[feed]
        if track.status is FeedStatus.LIVE:
            freshness = Freshness.LIVE
        else:
            down_since = track.down_since or now
            down = (now - down_since).total_seconds()
            if down >= self.settings.withdraw_after_seconds:
                freshness = Freshness.WITHDRAWN
            elif down >= self.settings.stale_after_seconds or track.restored:
                freshness = Freshness.STALE
            else:
                freshness = Freshness.RECONNECTING
        return HealthView(
            feed=feed,
            freshness=freshness,
            status=track.status,
            down_since=track.down_since if track.status is not FeedStatus.LIVE else None,
            attempt=track.attempt,
            next_try_at=track.next_try_at,
            error=track.error,
            restored=track.restored,
        )

    def next_change_at(self, now: datetime) -> datetime | None:
        """The next moment after `now` at which a highlight ends or a part's freshness changes
        with time alone (None: nothing will change until the next update)."""
        moments: list[datetime] = [
            entry.highlight_until
            for entry in self._recent
            if entry.highlight_until is not None and entry.highlight_until > now
        ]
        freshness = self.next_freshness_change_at(now)
        if freshness is not None:
            moments.append(freshness)
        return min(moments) if moments else None

    def next_freshness_change_at(self, now: datetime) -> datetime | None:
        """The next moment after `now` at which a part's freshness changes with time alone (it
        turns stale, or is withdrawn); None: none will until the next update."""
        moments: list[datetime] = []
        for track in self._feeds.values():
            if track.status is not FeedStatus.LIVE and track.down_since is not None:
                for seconds in (
                    self.settings.stale_after_seconds,
                    self.settings.withdraw_after_seconds,
                ):
                    moment = track.down_since + timedelta(seconds=seconds)
                    if moment > now:
                        moments.append(moment)
        return min(moments) if moments else None

    @property
    def tickets(self) -> Mapping[str, Ticket]:
        """The current tickets by id (read-only)."""
        return MappingProxyType(self._tickets)

    def sizes(self) -> BoardSizes:
        """How much the board holds."""
        return BoardSizes(
            current_tickets=len(self._tickets),
            seen_calls=len(self._seen_calls),
            recent_calls=len(self._recent),
            queues=len(self._queue_ids()),
            counters=len(self._counter_ids()),
        )

    # --- across a restart ---------------------------------------------------------------

    def memory(self, now: datetime) -> BoardMemory:
        """What the screen shows at `now`, to show again after a restart (`state.SavedBoard`)."""
        self._start(now)
        data_as_of = {
            feed: now if track.status is FeedStatus.LIVE else (track.down_since or now)
            for feed, track in self._feeds.items()
        }
        # The calls of tickets still called: a restart must not announce them again.
        seen = {
            ticket_id: self._seen_calls[ticket_id]
            for ticket_id, ticket in self._tickets.items()
            if ticket.state == TicketState.CALLED and ticket_id in self._seen_calls
        }
        waiting: dict[str, WaitingCount] | None = None
        if self._restored_tallies is not None or self._had_tickets_snapshot:
            # Restored counts stand until the tickets feed speaks.
            tallies = self._tallies if self._restored_tallies is None else self._restored_tallies
            waiting = {key: tally.count() for key, tally in tallies.items() if key}
        return BoardMemory(
            data_as_of=data_as_of,
            reference=ReferenceData(
                place=self._place,
                queues=dict(self._ref_queues),
                endpoints=dict(self._ref_endpoints),
                counters=dict(self._ref_counters),
            ),
            queue_states=dict(self._states),
            counters=dict(self._counters),
            ticket_queue_names={
                key: dict(names) for key, names in self._ticket_queue_names.items()
            },
            ticket_type_names={
                key: {type_id: dict(names) for type_id, names in by_type.items()}
                for key, by_type in self._ticket_type_names.items()
            },
            waiting_from_tickets=waiting,
            seen_calls=seen,
            recent_calls=tuple(
                RememberedCall(entry.call, entry.seen_at, dict(entry.ticket_counter_names))
                for entry in self._recent
            ),
        )

    @classmethod
    def from_memory(cls, settings: BoardSettings, memory: BoardMemory, now: datetime) -> Board:
        """A board showing what `memory` kept: every part marked restored (STALE at least) until
        its feed is live again, no call highlighted or announced again."""
        board = cls(settings, started_at=now)
        for feed, track in board._feeds.items():
            track.restored = True
            track.down_since = memory.data_as_of.get(feed, now)
        scratch = _ChangeSet()
        board._apply_reference(memory.reference, scratch)
        for state in memory.queue_states.values():
            board._apply_queue_state(state, scratch)
        for counter in memory.counters.values():
            board._apply_counter(counter, scratch)
        for queue_id, names in memory.ticket_queue_names.items():
            board._ticket_queue_names[queue_id] = dict(names)
        for queue_id, by_type in memory.ticket_type_names.items():
            board._ticket_type_names[queue_id] = {
                type_id: dict(names) for type_id, names in by_type.items()
            }
        if memory.waiting_from_tickets is not None:
            board._restored_tallies = {
                queue_id: _Tally.of(count)
                for queue_id, count in memory.waiting_from_tickets.items()
            }
        board._seen_calls.update(memory.seen_calls)
        # Kept newest first; numbered oldest first, so calls of one moment keep their order.
        for remembered in reversed(memory.recent_calls):
            call = remembered.call
            names = board._endpoint_names(call.endpoint_id, remembered.ticket_counter_names)
            board._recent.append(
                _Called(
                    # A restored call has been announced already, or is too old to be.
                    call=replace(call, counter_names=names, announce=False),
                    seen_at=remembered.seen_at,
                    highlight_until=None,
                    ticket_counter_names=dict(remembered.ticket_counter_names),
                    order=board._next_order(),
                )
            )
            previous = board._seen_calls.get(call.ticket_id, -1)
            board._seen_calls[call.ticket_id] = max(previous, call.recall)
        board._recent.sort(key=lambda entry: (entry.call.called_at, entry.order), reverse=True)
        del board._recent[board._recent_capacity() :]
        board._queue_order = None
        board._counter_order = None
        return board
