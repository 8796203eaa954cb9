"""The simulated place: a pure model of a busy town hall, stepped on a virtual clock.

`Place.step(dt)` advances the clock by `dt` seconds and returns the events, in order: people
arrive and cancel, operators call, recall, serve, pause and close. No wall clock, sleep or I/O:
a seed and a start time fix the whole story (docs/architecture.md: the simulator).
"""

from __future__ import annotations

import bisect
import heapq
import math
import random
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from enum import Enum
from typing import Any, Final
from zoneinfo import ZoneInfo

from lobby_display.models import LOCALES, WAITING_STATES, TicketState
from lobby_display.simulator import names
from lobby_display.simulator.dialect import Dialect
from lobby_display.simulator.records import Records
from lobby_display.updates import Feed

#: Waiting tickets at the front of a queue that are alerted (state 100).
ALERT_AHEAD: Final = 2
#: Weights of the users' languages (a French town hall with visitors from abroad).
LANGUAGE_WEIGHTS: Final = (55, 12, 7, 5, 6, 3, 4, 4, 4)
#: Longest history kept (done and canceled tickets of the day).
MAX_HISTORY: Final = 5000
#: While calls are held, seconds after which a deferred call or outcome is tried again.
HOLD_RETRY: Final = 1.0
#: Seconds (at speed 1) before the outcome of a scripted call (recall, no-show or service).
SCRIPTED_OUTCOME: Final = 45.0


@dataclass(frozen=True, slots=True)
class PlaceEvent:
    """One change, as a feed reports it: the full record after the change."""

    feed: Feed
    action: str
    """CREATE (a new ticket), UPDATE, or DELETE (a ticket done or canceled: it leaves)."""
    key: str
    """Id of the ticket, queue or counter."""
    queue_id: str
    """The queue it belongs to (a counter's id is its queue's id)."""
    data: dict[str, Any]


@dataclass(frozen=True, slots=True)
class PlaceOptions:
    """How the place is built."""

    seed: int = 1
    speed: float = 1.0
    """How much busier than real life: 10 means ten times as many arrivals, calls and services."""
    queues: int = 5
    tickets: int | None = None
    """Current tickets at the start; default 8 per queue."""
    timezone: str = "Europe/Paris"
    start: datetime | None = None
    """The clock's start (aware); default: now. Fix it for deterministic runs."""
    dialect: Dialect = field(default_factory=Dialect)
    """How records are written: date shapes, legacy names (and, for the server, the events)."""


@dataclass(slots=True, eq=False)
class SimAppointmentType:
    """An appointment type of one queue."""

    type_id: str
    names: dict[str, str]
    index: int


@dataclass(slots=True, eq=False)
class SimEndpoint:
    """A desk or office of a queue, where an operator calls tickets."""

    endpoint_id: str
    queue_id: str
    names: dict[str, str]
    index: int
    open: bool = False
    on_break: bool = False
    closing: bool = False
    """Closes as soon as its current ticket is done (break or end of the opening hours)."""
    serving: str | None = None
    """Ticket called or in progress here."""
    pending: bool = False
    """A call of the next ticket is scheduled."""


@dataclass(slots=True, eq=False)
class SimTicket:
    """A ticket of the day."""

    ticket_id: str
    label: str
    queue_id: str
    user_id: str
    type_id: str
    appointment: bool
    group_size: int
    lang: str
    seq: int
    booked_at: float
    """Elapsed seconds (negative: before the start)."""
    booked_for: float | None
    duration: int
    """Planned minutes."""
    state: int = TicketState.BOOKED
    key: float = 0.0
    """Order in the queue: booking time (FIFO) or appointment time."""
    endpoint_id: str | None = None
    recalled_count: int = 0
    recalled_at: list[float] = field(default_factory=list)
    alerted_at: float | None = None
    to_confirm_at: float | None = None
    called_at: float | None = None
    in_progress_at: float | None = None
    on_hold_at: float | None = None
    no_show_at: float | None = None
    cancelled_at: float | None = None
    done_at: float | None = None


@dataclass(slots=True, eq=False)
class SimQueue:
    """A queue of the place, with its endpoints, opening hours and waiting line."""

    queue_id: str
    index: int
    prefix: str
    names: dict[str, str]
    appointment: bool
    types: list[SimAppointmentType]
    max_group: int
    endpoints: list[SimEndpoint]
    capacity: int
    arrival_rate: float
    """Arrivals per second at speed 1."""
    service_mean: float
    """Seconds per ticket at speed 1."""
    slot_times: list[tuple[time, time, int]]
    """Opening hours as local times; the int is the day offset of the end (0 or 1)."""
    slots: list[tuple[float, float]] = field(default_factory=list)
    pause: bool = False
    booking_open: bool = True
    next_number: int = 1
    waiting: list[tuple[float, int, str]] = field(default_factory=list)
    counts: dict[str, list[int]] = field(default_factory=dict)
    """Waiting [tickets, people] by appointment type."""
    counter_value: int = 0
    next_free: dict[str, float] = field(default_factory=dict)
    """Appointment queues: the next free appointment time by type (elapsed seconds)."""
    last_state: dict[str, Any] | None = None
    last_counter: dict[str, Any] | None = None

    def type_by_id(self, type_id: str) -> SimAppointmentType:
        """The appointment type `type_id` of this queue."""
        return next(kind for kind in self.types if kind.type_id == type_id)


class _Act(Enum):
    ARRIVAL = "arrival"
    NEXT = "next"
    OUTCOME = "outcome"
    DONE = "done"
    NO_SHOW = "no_show"
    EXPIRE = "expire"
    CANCEL = "cancel"
    CONFIRM = "confirm"
    PAUSE = "pause"
    RESUME = "resume"
    CLOSE_BOOKING = "close_booking"
    REOPEN_BOOKING = "reopen_booking"
    BREAK = "break"
    BACK = "back"
    SLOT = "slot"
    REFRESH = "refresh"
    COUNTER_FIX = "counter_fix"
    MIDNIGHT = "midnight"


class Place:
    """The simulated place. Build it, then `step(dt)`; read it through `records`."""

    def __init__(self, options: PlaceOptions | None = None) -> None:
        self.options = options or PlaceOptions()
        if self.options.speed <= 0:
            raise ValueError("speed must be positive")
        if self.options.queues < 1:
            raise ValueError("a place needs at least one queue")
        self.speed = self.options.speed
        self.tz = ZoneInfo(self.options.timezone)
        start = self.options.start or datetime.now(UTC)
        if start.tzinfo is None:
            raise ValueError("start must be an aware datetime")
        self.t0 = start.astimezone(UTC).replace(microsecond=0)
        self.elapsed = 0.0
        # A simulation, not cryptography: reproducible draws are the point.
        self.rng = random.Random(self.options.seed)  # noqa: S311
        self._burst_rng = random.Random(self.options.seed * 7919 + 17)  # noqa: S311
        self.hostile = False
        self._heap: list[tuple[float, int, _Act, str]] = []
        self._seq = 0
        self._ticket_seq = 0
        self._out: list[PlaceEvent] = []
        self._dirty_states: set[str] = set()
        self._dirty_counters: set[str] = set()
        self._burst_called: deque[str] = deque()
        self._day: tuple[float, float] | None = None
        self._script_rng = random.Random(self.options.seed * 104729 + 3)  # noqa: S311
        self.calls_held = False
        """While True, no operator calls or recalls a ticket of their own (see `hold_calls`)."""

        self.company_id = self._new_id()
        self.place_id = self._new_id()
        self.queues: dict[str, SimQueue] = {}
        self.endpoints: dict[str, SimEndpoint] = {}
        self.tickets: dict[str, SimTicket] = {}
        """Current tickets (neither done nor canceled), in booking order."""
        self.history: deque[SimTicket] = deque(maxlen=MAX_HISTORY)
        """Tickets done or canceled today, newest first."""
        self.records = Records(self)
        self._handlers = self._make_handlers()
        self._build()

    # --- the clock ---------------------------------------------------------------------------

    @property
    def now(self) -> datetime:
        """The place's current time, in its time zone."""
        return self.at(self.elapsed)

    def at(self, elapsed: float) -> datetime:
        """The place's time `elapsed` seconds after the start, in its time zone."""
        return (self.t0 + timedelta(seconds=elapsed)).astimezone(self.tz)

    def elapsed_of(self, moment: datetime) -> float:
        """Seconds from the start to `moment`."""
        return (moment - self.t0).total_seconds()

    def step(self, dt: float) -> list[PlaceEvent]:
        """Advance the clock by `dt` seconds; return the events that happened, in order."""
        if dt < 0 or math.isnan(dt):
            raise ValueError("the clock only goes forward")
        target = self.elapsed + dt
        out: list[PlaceEvent] = []
        self._out = out
        while self._heap and self._heap[0][0] <= target:
            at, _, act, subject = heapq.heappop(self._heap)
            self.elapsed = max(self.elapsed, at)
            self._handlers[act](subject)
            self._flush()
        self.elapsed = target
        return out

    def next_due(self) -> float | None:
        """Seconds until the next scheduled action (None when nothing is scheduled)."""
        if not self._heap:
            return None
        return max(0.0, self._heap[0][0] - self.elapsed)

    # --- reading -----------------------------------------------------------------------------

    def current_tickets(self, queue_ids: Iterable[str] | None = None) -> list[SimTicket]:
        """Current tickets of the given queues (all when None), in booking order."""
        if queue_ids is None:
            return list(self.tickets.values())
        wanted = set(queue_ids)
        return [ticket for ticket in self.tickets.values() if ticket.queue_id in wanted]

    def history_tickets(self, queue_ids: Iterable[str] | None = None) -> list[SimTicket]:
        """Tickets done or canceled today in the given queues, newest first."""
        if queue_ids is None:
            return list(self.history)
        wanted = set(queue_ids)
        return [ticket for ticket in self.history if ticket.queue_id in wanted]

    def in_slot(self, queue: SimQueue, elapsed: float | None = None) -> bool:
        """True when `queue` is within its opening hours."""
        moment = self.elapsed if elapsed is None else elapsed
        return any(start <= moment < end for start, end in queue.slots)

    def is_open(self, queue: SimQueue) -> bool:
        """True when an operator works the queue: opening hours and an endpoint open."""
        return self.in_slot(queue) and any(endpoint.open for endpoint in queue.endpoints)

    def waiting_totals(self, queue: SimQueue) -> tuple[int, int]:
        """Waiting tickets and people of `queue`."""
        tickets = sum(count[0] for count in queue.counts.values())
        people = sum(count[1] for count in queue.counts.values())
        return tickets, people

    def is_full(self, queue: SimQueue) -> bool:
        """True when the queue takes no more tickets."""
        return len(queue.waiting) >= queue.capacity

    def position(self, ticket: SimTicket) -> tuple[int, int]:
        """Tickets and people ahead of a waiting ticket in its queue (0, 0 otherwise)."""
        if ticket.state not in WAITING_STATES:
            return 0, 0
        queue = self.queues[ticket.queue_id]
        index = bisect.bisect_left(queue.waiting, (ticket.key, ticket.seq, ""))
        people = sum(self.tickets[entry[2]].group_size for entry in queue.waiting[:index])
        return index, people

    def positions(self, queue: SimQueue) -> dict[str, tuple[int, int]]:
        """`position` of every waiting ticket of `queue`, in one pass."""
        result: dict[str, tuple[int, int]] = {}
        people = 0
        for index, (_, _, ticket_id) in enumerate(queue.waiting):
            result[ticket_id] = (index, people)
            people += self.tickets[ticket_id].group_size
        return result

    def open_endpoints(self, queue: SimQueue) -> int:
        """Number of open endpoints of `queue`."""
        return sum(1 for endpoint in queue.endpoints if endpoint.open)

    def day_bounds(self) -> tuple[float, float]:
        """Elapsed seconds of today's local midnight and of tomorrow's."""
        cached = self._day
        if cached is not None and cached[0] <= self.elapsed < cached[1]:
            return cached
        today = self.now.date()
        bounds = self._local(today, time(0, 0)), self._local(today + timedelta(days=1), time(0, 0))
        self._day = bounds
        return bounds

    # --- faults that change the place --------------------------------------------------------

    def set_hostile(self, on: bool = True) -> list[PlaceEvent]:
        """Give every name and label a hostile twist (markup, escapes, floods) from now on.

        Returns updates for the called tickets and every counter, so feeds show it at once.
        """
        self.hostile = on
        out: list[PlaceEvent] = []
        self._out = out
        for ticket in list(self.tickets.values()):
            if ticket.state == TicketState.CALLED:
                self._emit_ticket(ticket, "UPDATE")
        for queue in self.queues.values():
            self._dirty_counters.add(queue.queue_id)
            queue.last_counter = None
        self._flush()
        return out

    def burst(self, count: int) -> list[PlaceEvent]:
        """Make `count` ticket events at once (arrivals, calls, tickets done), for benchmarks.

        These are real changes, kept consistent with the rest of the place; queue-state and
        counter changes they cause come once at the end, not once per ticket event. A burst
        draws from its own random generator, so it leaves the normal story's draws alone.
        """
        out: list[PlaceEvent] = []
        self._out = out
        made = 0
        attempts = 0
        queues = list(self.queues.values())
        while made < count and attempts < count * 4 + 10:
            attempts += 1
            before = len(out)
            self._burst_action(self._burst_rng.choice(queues))
            made += len(out) - before
        self._flush()
        return out

    # --- scripted calls (tests, screenshots) -------------------------------------------------

    def hold_calls(self, on: bool = True) -> None:
        """Hold the operators: while held, nobody calls the next ticket, recalls one or ends a
        call (those actions wait and happen once released); arrivals, cancellations, breaks
        and the rest go on. Calls made with `call_tickets` are then the only calls.
        """
        self.calls_held = on

    def call_tickets(
        self, labels: Iterable[str], counters: Iterable[int | str] | None = None
    ) -> list[PlaceEvent]:
        """Call tickets with the given labels, one after the other, as operators would.

        `counters` names the endpoint of each call, by id or by index in the place's order of
        endpoints (`list(place.endpoints)`); by default the calls go to the endpoints in turn.
        The ticket is the queue's waiting ticket with that label when there is one, else a new
        walk-in ticket with that label (created, then called: CREATE then UPDATE). A ticket the
        endpoint was serving is done first; a closed endpoint opens. The call's outcome comes
        later as usual (not while calls are held). Raises ValueError for an unknown counter or
        an empty label; nothing is changed then.
        """
        wanted = [str(label) for label in labels]
        if any(not label for label in wanted):
            raise ValueError("a ticket label cannot be empty")
        all_endpoints = list(self.endpoints.values())
        if counters is None:
            chosen = [all_endpoints[n % len(all_endpoints)] for n in range(len(wanted))]
        else:
            named = list(counters)
            if len(named) != len(wanted):
                raise ValueError("give one counter per label, or none")
            chosen = [self._endpoint_named(counter, all_endpoints) for counter in named]
        out: list[PlaceEvent] = []
        self._out = out
        for label, endpoint in zip(wanted, chosen, strict=True):
            self._scripted_call(label, endpoint)
            self._flush()
        return out

    def _endpoint_named(self, counter: int | str, endpoints: list[SimEndpoint]) -> SimEndpoint:
        if isinstance(counter, str) and counter in self.endpoints:
            return self.endpoints[counter]
        try:
            index = int(counter)
        except ValueError:
            raise ValueError(f"no counter {counter!r}: give an endpoint id or index") from None
        if not 0 <= index < len(endpoints):
            raise ValueError(f"no counter {index}: the place has {len(endpoints)} (0 to n-1)")
        return endpoints[index]

    def _scripted_call(self, label: str, endpoint: SimEndpoint) -> None:
        queue = self.queues[endpoint.queue_id]
        serving = self.tickets.get(endpoint.serving or "")
        if serving is not None and serving.state in (TicketState.CALLED, TicketState.IN_PROGRESS):
            self._finish(serving, TicketState.DONE)
            queue.counter_value += 1
            self._dirty_counters.add(queue.queue_id)
        endpoint.serving = None
        if not endpoint.open or endpoint.closing:
            endpoint.open, endpoint.closing, endpoint.on_break = True, False, False
            self._dirty_states.add(queue.queue_id)
        ticket = next(
            (
                self.tickets[ticket_id]
                for _, _, ticket_id in queue.waiting
                if self.tickets[ticket_id].label == label
            ),
            None,
        )
        if ticket is None:
            number = queue.next_number
            ticket = self._make_ticket(queue, self.elapsed, self._script_rng)
            queue.next_number = number  # the place's own numbering goes on undisturbed
            ticket.label = label
            if queue.appointment:
                ticket.booked_for = self.elapsed
            self._enter_waiting(queue, ticket)
            self._emit_ticket(ticket, "CREATE")
        endpoint.serving = ticket.ticket_id
        self._call(ticket, endpoint)
        self._at_later(SCRIPTED_OUTCOME / self.speed, _Act.OUTCOME, ticket.ticket_id)

    # --- scripted changes (tests: a day told step by step) -----------------------------------

    def queue_named(self, queue: int | str) -> SimQueue:
        """A queue by id, or by index in the place's order (`list(place.queues)`)."""
        if isinstance(queue, str) and queue in self.queues:
            return self.queues[queue]
        try:
            index = int(queue)
        except ValueError:
            raise ValueError(f"no queue {queue!r}: give a queue id or index") from None
        if not 0 <= index < len(self.queues):
            raise ValueError(f"no queue {index}: the place has {len(self.queues)} (0 to n-1)")
        return list(self.queues.values())[index]

    def _current_labelled(self, label: str) -> SimTicket:
        found = [ticket for ticket in self.tickets.values() if ticket.label == label]
        if not found:
            raise ValueError(f"no current ticket {label!r}")
        return found[-1]

    def _scripted(self, change: Callable[[], None]) -> list[PlaceEvent]:
        out: list[PlaceEvent] = []
        self._out = out
        change()
        self._flush()
        return out

    def recall_tickets(self, labels: Iterable[str]) -> list[PlaceEvent]:
        """Recall called tickets by label, as their operators would (`recalledCount` grows and
        `timeline.recalledAt` gains the moment). Raises ValueError for a ticket not called."""
        chosen = [self._current_labelled(str(label)) for label in labels]
        if any(ticket.state != TicketState.CALLED for ticket in chosen):
            raise ValueError("only a called ticket can be recalled")

        def change() -> None:
            for ticket in chosen:
                ticket.recalled_count += 1
                ticket.recalled_at.append(self.elapsed)
                self._emit_ticket(ticket, "UPDATE")

        return self._scripted(change)

    def finish_tickets(
        self, labels: Iterable[str], state: int = TicketState.DONE
    ) -> list[PlaceEvent]:
        """End current tickets by label: DONE (served: a called or served ticket counts on its
        queue's counter) or CANCELED. Their endpoints are free again (and call the next ticket
        unless calls are held)."""
        if state not in (TicketState.DONE, TicketState.CANCELED):
            raise ValueError("a ticket ends done (700) or canceled (600)")
        chosen = [self._current_labelled(str(label)) for label in labels]

        def change() -> None:
            for ticket in chosen:
                queue = self.queues[ticket.queue_id]
                served = ticket.state in (TicketState.CALLED, TicketState.IN_PROGRESS)
                self._finish(ticket, TicketState(state))
                if served and state == TicketState.DONE:
                    queue.counter_value += 1
                    self._dirty_counters.add(queue.queue_id)
                endpoint = self.endpoints.get(ticket.endpoint_id or "")
                if endpoint is not None and endpoint.serving == ticket.ticket_id:
                    self._free(endpoint)
                self._alert_front(queue)

        return self._scripted(change)

    def arrive(self, queue: int | str, count: int = 1) -> list[PlaceEvent]:
        """`count` walk-in tickets join `queue` now (even when it is full or closed: the
        script decides); their labels are the queue's next numbers."""
        chosen = self.queue_named(queue)

        def change() -> None:
            for _ in range(count):
                ticket = self._make_ticket(chosen, self.elapsed, self._script_rng)
                if chosen.appointment:
                    ticket.booked_for = self.elapsed
                self._enter_waiting(chosen, ticket)
                self._emit_ticket(ticket, "CREATE")
            self._alert_front(chosen)

        return self._scripted(change)

    def set_capacity(self, queue: int | str, capacity: int | None = None) -> list[PlaceEvent]:
        """Set how many tickets `queue` may hold waiting; None: as many as wait now, so the
        queue turns full without a ticket more or less."""
        chosen = self.queue_named(queue)

        def change() -> None:
            chosen.capacity = len(chosen.waiting) if capacity is None else max(0, capacity)
            self._dirty_states.add(chosen.queue_id)

        return self._scripted(change)

    def set_pause(self, queue: int | str, on: bool = True) -> list[PlaceEvent]:
        """An operator pauses `queue` (or resumes it)."""
        chosen = self.queue_named(queue)

        def change() -> None:
            chosen.pause = on
            self._dirty_states.add(chosen.queue_id)
            if not on:
                for endpoint in chosen.endpoints:
                    if endpoint.open and endpoint.serving is None:
                        self._wake(endpoint, self.rng.uniform(2, 10) / self.speed)

        return self._scripted(change)

    def set_booking(self, queue: int | str, open_: bool = True) -> list[PlaceEvent]:
        """Booking of `queue` closes (no new ticket) or opens again."""
        chosen = self.queue_named(queue)

        def change() -> None:
            chosen.booking_open = open_
            self._dirty_states.add(chosen.queue_id)

        return self._scripted(change)

    def set_open(self, queue: int | str, open_: bool = True) -> list[PlaceEvent]:
        """Every endpoint of `queue` closes now (nobody serves: `queueIsOpened` turns false;
        tickets being served stay so) or opens (within the opening hours)."""
        chosen = self.queue_named(queue)

        def change() -> None:
            for endpoint in chosen.endpoints:
                endpoint.closing = False
                endpoint.on_break = False
                endpoint.open = open_ and self.in_slot(chosen)
                if endpoint.open and endpoint.serving is None:
                    self._wake(endpoint, self.rng.uniform(2, 10) / self.speed)
            self._dirty_states.add(chosen.queue_id)

        return self._scripted(change)

    # --- building ----------------------------------------------------------------------------

    def _new_id(self) -> str:
        return f"{self.rng.getrandbits(96):024x}"

    def _local(self, day: date, moment: time) -> float:
        return self.elapsed_of(datetime.combine(day, moment, tzinfo=self.tz))

    def _build(self) -> None:
        rng = self.rng
        count = self.options.queues
        total = self.options.tickets if self.options.tickets is not None else 8 * count
        weights = [rng.uniform(0.6, 1.4) for _ in range(count)]
        shares = _split(total, weights)
        numbers: dict[str, int] = {"desk": 0, "office": 0}
        local_now = self.now
        today = local_now.date()
        floor30 = local_now.replace(minute=local_now.minute // 30 * 30, second=0, microsecond=0)
        for index in range(count):
            service, queue_names = names.service_for(index)
            kind = service.endpoint_kind
            endpoint_count = rng.randint(2, 4) if service.max_group > 1 else rng.randint(1, 3)
            queue_id = self._new_id()
            endpoints = []
            for _ in range(endpoint_count):
                numbers[kind.key] += 1
                endpoint = SimEndpoint(
                    self._new_id(), queue_id, kind.name(numbers[kind.key]), len(self.endpoints)
                )
                endpoints.append(endpoint)
                self.endpoints[endpoint.endpoint_id] = endpoint
            types = [
                SimAppointmentType(self._new_id(), dict(type_names), position)
                for position, type_names in enumerate(service.appointment_types)
            ]
            service_mean = rng.uniform(360, 600) if service.appointment else rng.uniform(180, 420)
            load = rng.uniform(0.75, 1.0)
            per_queue = shares[index]
            capacity = max(15, int(per_queue * 1.6) + 5)
            if index == 1 and count > 1:
                # One busy queue with little room: it fills up, refuses tickets, then drains.
                load = 1.5
                capacity = max(per_queue + 4, 8)
            opens_later = index == 3 and count >= 4
            queue = SimQueue(
                queue_id=queue_id,
                index=index,
                prefix=names.label_prefix(index),
                names=queue_names,
                appointment=service.appointment,
                types=types,
                max_group=service.max_group,
                endpoints=endpoints,
                capacity=capacity,
                arrival_rate=load * endpoint_count / service_mean,
                service_mean=service_mean,
                slot_times=self._opening_hours(floor30, opens_later),
            )
            queue.counts = {kind_.type_id: [0, 0] for kind_ in types}
            self.queues[queue_id] = queue
            self._extend_slots(queue, today)
            self._populate(queue, per_queue)
            self._schedule_queue(queue)
        for queue in self.queues.values():
            queue.last_state = self.records.queue_state(queue)
            queue.last_counter = self.records.counter(queue)
        self._at_later(self.day_bounds()[1] - self.elapsed, _Act.MIDNIGHT, self.place_id)

    def _opening_hours(self, floor30: datetime, opens_later: bool) -> list[tuple[time, time, int]]:
        """Two sessions a day around the start time, with a break at a time of their own."""
        rng = self.rng
        if opens_later:
            first = floor30 + timedelta(minutes=rng.choice((30, 45, 60)))
        else:
            first = floor30 - timedelta(minutes=rng.choice((60, 90, 120, 150)))
        pause_at = floor30 + timedelta(minutes=rng.choice((90, 120, 150, 180, 210, 240)))
        if pause_at <= first + timedelta(minutes=60):
            pause_at = first + timedelta(minutes=120)
        resume_at = pause_at + timedelta(minutes=rng.choice((30, 45, 60)))
        close_at = resume_at + timedelta(minutes=rng.choice((240, 270, 300, 330)))
        sessions = [(first, pause_at), (resume_at, close_at)]
        return [
            (start.time(), end.time(), (end.date() - start.date()).days) for start, end in sessions
        ]

    def _extend_slots(self, queue: SimQueue, through: date) -> None:
        """Make sure the queue's opening hours are known through the day after `through`."""
        known = {self.at(start).date() for start, _ in queue.slots}
        first_day = through - timedelta(days=1) if not queue.slots else min(known)
        day = first_day
        while day <= through + timedelta(days=1):
            if day not in known:
                for start, end, end_days in queue.slot_times:
                    begin = self._local(day, start)
                    finish = self._local(day + timedelta(days=end_days), end)
                    queue.slots.append((begin, finish))
            day += timedelta(days=1)
        queue.slots.sort()

    def _populate(self, queue: SimQueue, count: int) -> None:
        """Tickets of the queue at the start: history, operators at work, a waiting line."""
        rng = self.rng
        speed = self.speed
        done = rng.randint(5, 40)
        queue.counter_value = done
        since_midnight = max(60.0, self.elapsed - self.day_bounds()[0])
        for number in range(done + rng.randint(0, 4)):
            ticket = self._make_ticket(queue, -since_midnight * (1 - number / (done + 5)))
            if number < done:
                ticket.state = TicketState.DONE
                ticket.called_at = ticket.booked_at + 600 / speed
                ticket.in_progress_at = ticket.called_at + 30 / speed
                ticket.done_at = ticket.in_progress_at + queue.service_mean / speed
            else:
                ticket.state = TicketState.CANCELED
                ticket.cancelled_at = ticket.booked_at + 300 / speed
            self.history.appendleft(ticket)
        in_slot = self.in_slot(queue)
        remaining = count
        for endpoint in queue.endpoints:
            endpoint.open = in_slot
        span = min(since_midnight - 60, max(1, count) * (1 / (queue.arrival_rate * speed)))
        span = max(span, 60.0)
        first_booking = -span
        for endpoint in queue.endpoints:
            if not endpoint.open or remaining <= 0:
                continue
            ticket = self._make_ticket(queue, first_booking - rng.uniform(0, 300) / speed)
            ticket.endpoint_id = endpoint.endpoint_id
            endpoint.serving = ticket.ticket_id
            if rng.random() < 0.5:
                ticket.state = TicketState.CALLED
                ticket.called_at = -rng.uniform(5, 40) / speed
                self._at_later(rng.uniform(10, 45) / speed, _Act.OUTCOME, ticket.ticket_id)
            else:
                ticket.state = TicketState.IN_PROGRESS
                ticket.called_at = -rng.uniform(60, 120) / speed
                ticket.in_progress_at = ticket.called_at + 30 / speed
                self._at_later(
                    rng.uniform(30, queue.service_mean) / speed, _Act.DONE, ticket.ticket_id
                )
            self.tickets[ticket.ticket_id] = ticket
            remaining -= 1
        if remaining > 1 and rng.random() < 0.6:
            ticket = self._make_ticket(queue, first_booking - 120 / speed)
            ticket.state = TicketState.ON_HOLD
            ticket.endpoint_id = queue.endpoints[0].endpoint_id
            ticket.called_at = -rng.uniform(120, 240) / speed
            ticket.on_hold_at = ticket.called_at + 60 / speed
            self.tickets[ticket.ticket_id] = ticket
            self._at_later(rng.uniform(60, 240) / speed, _Act.NO_SHOW, ticket.ticket_id)
            remaining -= 1
        for position in range(max(0, remaining)):
            booked = first_booking + span * position / max(1, remaining)
            if queue.appointment:
                booked = -rng.uniform(3600, 14 * 86400)
            ticket = self._make_ticket(queue, booked)
            if queue.appointment:
                ticket.booked_for = self._book_appointment(queue, ticket.type_id, initial=True)
            self._enter_waiting(queue, ticket)
        for ticket in [self.tickets[entry[2]] for entry in queue.waiting[:ALERT_AHEAD]]:
            if ticket.state == TicketState.BOOKED and in_slot:
                ticket.state = TicketState.ALERTED
                ticket.alerted_at = -rng.uniform(30, 300) / speed

    def _schedule_queue(self, queue: SimQueue) -> None:
        rng = self.rng
        speed = self.speed
        self._at_later(rng.expovariate(queue.arrival_rate * speed), _Act.ARRIVAL, queue.queue_id)
        self._at_later(rng.expovariate(1 / 2400) / speed, _Act.PAUSE, queue.queue_id)
        self._at_later(rng.expovariate(1 / 5400) / speed, _Act.CLOSE_BOOKING, queue.queue_id)
        self._at_later(self._until_next_grain(), _Act.REFRESH, queue.queue_id)
        self._schedule_slot_change(queue)
        for endpoint in queue.endpoints:
            self._at_later(rng.expovariate(1 / 3600) / speed, _Act.BREAK, endpoint.endpoint_id)
            if endpoint.open and endpoint.serving is None:
                self._wake(endpoint, rng.uniform(2, 20) / speed)

    def _make_ticket(
        self, queue: SimQueue, booked_at: float, rng: random.Random | None = None
    ) -> SimTicket:
        rng = rng or self.rng
        self._ticket_seq += 1
        number = queue.next_number
        queue.next_number += 1
        kind = rng.choice(queue.types)
        group = 1
        if queue.max_group > 1:
            group = min(queue.max_group, 1 + int(rng.expovariate(1.6)))
        return SimTicket(
            ticket_id=f"{rng.getrandbits(96):024x}",
            label=names.ticket_label(queue.prefix, number),
            queue_id=queue.queue_id,
            user_id=f"{rng.getrandbits(96):024x}",
            type_id=kind.type_id,
            appointment=queue.appointment,
            group_size=group,
            lang=rng.choices(LOCALES, LANGUAGE_WEIGHTS)[0],
            seq=self._ticket_seq,
            booked_at=booked_at,
            booked_for=None,
            duration=max(1, round(queue.service_mean / 60)),
        )

    # --- scheduling --------------------------------------------------------------------------

    def _at_later(self, delay: float, act: _Act, subject: str) -> None:
        self._seq += 1
        heapq.heappush(self._heap, (self.elapsed + max(0.0, delay), self._seq, act, subject))

    def _wake(self, endpoint: SimEndpoint, delay: float) -> None:
        if not endpoint.pending:
            endpoint.pending = True
            self._at_later(delay, _Act.NEXT, endpoint.endpoint_id)

    def granularity(self) -> float:
        """Seconds to which first availabilities are rounded (so they move in visible steps)."""
        return max(60.0, 300.0 / self.speed)

    def grain_start(self) -> float:
        """Elapsed seconds at the start of the current grain (aligned on the epoch).

        Queue states read the time only through this, and are refreshed at each grain's start,
        so a state rendered at any moment equals the last one reported.
        """
        grain = self.granularity()
        epoch = self.t0.timestamp()
        return math.floor((epoch + self.elapsed) / grain) * grain - epoch

    def _until_next_grain(self) -> float:
        return self.grain_start() + self.granularity() - self.elapsed

    def _schedule_slot_change(self, queue: SimQueue) -> None:
        self._extend_slots(queue, self.now.date())
        for start, end in queue.slots:
            for boundary in (start, end):
                if boundary > self.elapsed:
                    self._at_later(boundary - self.elapsed, _Act.SLOT, queue.queue_id)
                    return

    # --- waiting line ------------------------------------------------------------------------

    def _enter_waiting(self, queue: SimQueue, ticket: SimTicket) -> None:
        ticket.key = ticket.booked_for if ticket.booked_for is not None else ticket.booked_at
        bisect.insort(queue.waiting, (ticket.key, ticket.seq, ticket.ticket_id))
        counts = queue.counts[ticket.type_id]
        counts[0] += 1
        counts[1] += ticket.group_size
        self.tickets[ticket.ticket_id] = ticket
        self._dirty_states.add(queue.queue_id)

    def _leave_waiting(self, ticket: SimTicket) -> None:
        queue = self.queues[ticket.queue_id]
        entry = (ticket.key, ticket.seq, ticket.ticket_id)
        index = bisect.bisect_left(queue.waiting, entry)
        if index < len(queue.waiting) and queue.waiting[index] == entry:
            del queue.waiting[index]
            counts = queue.counts[ticket.type_id]
            counts[0] -= 1
            counts[1] -= ticket.group_size
            self._dirty_states.add(queue.queue_id)

    def _finish(self, ticket: SimTicket, state: TicketState) -> None:
        """The ticket is done or canceled: it leaves the current tickets."""
        if ticket.state in WAITING_STATES:
            self._leave_waiting(ticket)
        ticket.state = state
        if state == TicketState.DONE:
            ticket.done_at = self.elapsed
        else:
            ticket.cancelled_at = self.elapsed
        self.tickets.pop(ticket.ticket_id, None)
        self.history.appendleft(ticket)
        self._emit_ticket(ticket, "DELETE")
        self._dirty_states.add(ticket.queue_id)

    def _book_appointment(self, queue: SimQueue, type_id: str, initial: bool = False) -> float:
        """The appointment time of a new booking of `type_id`; moves that type's next free time."""
        grid = queue.service_mean / self.speed
        lead = 0.0 if initial else 900 / self.speed
        earliest = self.elapsed + lead
        if initial and type_id not in queue.next_free:
            earliest = self.elapsed - 600 / self.speed
        booked_for = max(queue.next_free.get(type_id, earliest), earliest)
        step = grid * len(queue.types) / max(1, len(queue.endpoints))
        queue.next_free[type_id] = booked_for + step
        return booked_for

    def _alert_front(self, queue: SimQueue) -> None:
        for _, _, ticket_id in queue.waiting[:ALERT_AHEAD]:
            ticket = self.tickets[ticket_id]
            if ticket.state == TicketState.BOOKED:
                ticket.state = TicketState.ALERTED
                ticket.alerted_at = self.elapsed
                self._emit_ticket(ticket, "UPDATE")

    def _next_callable(self, queue: SimQueue) -> tuple[SimTicket | None, float | None]:
        """The ticket to call now, or None and when the next appointment falls due."""
        early = 300 / self.speed
        for key, _, ticket_id in queue.waiting:
            ticket = self.tickets[ticket_id]
            if ticket.state == TicketState.TO_CONFIRM:
                continue
            if queue.appointment and key > self.elapsed + early:
                return None, key - early
            return ticket, None
        return None, None

    def _call(self, ticket: SimTicket, endpoint: SimEndpoint) -> None:
        queue = self.queues[ticket.queue_id]
        self._leave_waiting(ticket)
        ticket.state = TicketState.CALLED
        ticket.called_at = self.elapsed
        ticket.endpoint_id = endpoint.endpoint_id
        self._emit_ticket(ticket, "UPDATE")
        self._alert_front(queue)

    def _free(self, endpoint: SimEndpoint) -> None:
        endpoint.serving = None
        queue = self.queues[endpoint.queue_id]
        if endpoint.closing:
            endpoint.closing = False
            endpoint.open = False
            self._dirty_states.add(queue.queue_id)
        elif endpoint.open:
            self._wake(endpoint, self.rng.uniform(5, 20) / self.speed)

    # --- actions -----------------------------------------------------------------------------

    def _make_handlers(self) -> dict[_Act, Callable[[str], None]]:
        return {
            _Act.ARRIVAL: self._on_arrival,
            _Act.NEXT: self._on_next,
            _Act.OUTCOME: self._on_outcome,
            _Act.DONE: self._on_done,
            _Act.NO_SHOW: self._on_no_show,
            _Act.EXPIRE: self._on_expire,
            _Act.CANCEL: self._on_cancel,
            _Act.CONFIRM: self._on_confirm,
            _Act.PAUSE: self._on_pause,
            _Act.RESUME: self._on_resume,
            _Act.CLOSE_BOOKING: self._on_close_booking,
            _Act.REOPEN_BOOKING: self._on_reopen_booking,
            _Act.BREAK: self._on_break,
            _Act.BACK: self._on_back,
            _Act.SLOT: self._on_slot,
            _Act.REFRESH: self._on_refresh,
            _Act.COUNTER_FIX: self._on_counter_fix,
            _Act.MIDNIGHT: self._on_midnight,
        }

    def _on_arrival(self, queue_id: str) -> None:
        queue = self.queues[queue_id]
        rng = self.rng
        speed = self.speed
        self._at_later(rng.expovariate(queue.arrival_rate * speed), _Act.ARRIVAL, queue_id)
        walk_in_hours = queue.appointment or self.in_slot(queue)
        if not queue.booking_open or self.is_full(queue) or not walk_in_hours:
            return
        ticket = self._make_ticket(queue, self.elapsed)
        if queue.appointment:
            before = dict(queue.next_free)
            booked_for = self._book_appointment(queue, ticket.type_id)
            if booked_for >= self._today_close(queue):
                queue.next_free = before
                # No appointment left today: the booking goes elsewhere, not on today's board.
                queue.next_number -= 1
                self._dirty_states.add(queue_id)
                return
            ticket.booked_for = booked_for
            if rng.random() < 0.3:
                ticket.state = TicketState.TO_CONFIRM
                ticket.to_confirm_at = self.elapsed
                self._at_later(rng.uniform(30, 120) / speed, _Act.CONFIRM, ticket.ticket_id)
        self._enter_waiting(queue, ticket)
        self._emit_ticket(ticket, "CREATE")
        self._alert_front(queue)
        if rng.random() < 0.06:
            self._at_later(rng.uniform(120, 1800) / speed, _Act.CANCEL, ticket.ticket_id)
        for endpoint in queue.endpoints:
            if endpoint.open and endpoint.serving is None:
                self._wake(endpoint, rng.uniform(3, 10) / speed)

    def _on_next(self, endpoint_id: str) -> None:
        endpoint = self.endpoints[endpoint_id]
        if self.calls_held:
            endpoint.pending = True
            self._at_later(HOLD_RETRY, _Act.NEXT, endpoint_id)
            return
        endpoint.pending = False
        queue = self.queues[endpoint.queue_id]
        if not endpoint.open or endpoint.serving or queue.pause or not self.in_slot(queue):
            return
        ticket, due = self._next_callable(queue)
        if ticket is None:
            if due is not None:
                self._wake(endpoint, due - self.elapsed)
            return
        endpoint.serving = ticket.ticket_id
        self._call(ticket, endpoint)
        self._at_later(self.rng.uniform(20, 60) / self.speed, _Act.OUTCOME, ticket.ticket_id)

    def _on_outcome(self, ticket_id: str) -> None:
        ticket = self.tickets.get(ticket_id)
        if ticket is None or ticket.state != TicketState.CALLED:
            return
        if self.calls_held:
            self._at_later(HOLD_RETRY, _Act.OUTCOME, ticket_id)
            return
        rng = self.rng
        speed = self.speed
        endpoint = self.endpoints.get(ticket.endpoint_id or "")
        roll = rng.random()
        if roll < 0.15 and ticket.recalled_count < 2:
            ticket.recalled_count += 1
            ticket.recalled_at.append(self.elapsed)
            self._emit_ticket(ticket, "UPDATE")
            self._at_later(rng.uniform(20, 45) / speed, _Act.OUTCOME, ticket_id)
        elif roll < 0.22 or (ticket.recalled_count >= 2 and roll < 0.5):
            ticket.state = TicketState.ON_HOLD
            ticket.on_hold_at = self.elapsed
            self._emit_ticket(ticket, "UPDATE")
            self._at_later(rng.uniform(120, 300) / speed, _Act.NO_SHOW, ticket_id)
            if endpoint is not None and endpoint.serving == ticket_id:
                self._free(endpoint)
        else:
            ticket.state = TicketState.IN_PROGRESS
            ticket.in_progress_at = self.elapsed
            self._emit_ticket(ticket, "UPDATE")
            service = max(60.0, rng.expovariate(1 / self.queues[ticket.queue_id].service_mean))
            self._at_later(service / speed, _Act.DONE, ticket_id)

    def _on_done(self, ticket_id: str) -> None:
        ticket = self.tickets.get(ticket_id)
        if ticket is None or ticket.state != TicketState.IN_PROGRESS:
            return
        queue = self.queues[ticket.queue_id]
        self._finish(ticket, TicketState.DONE)
        queue.counter_value += 1
        self._dirty_counters.add(queue.queue_id)
        if self.rng.random() < 0.03:
            # Now and then an operator counted one too many and takes it back.
            self._at_later(self.rng.uniform(20, 90) / self.speed, _Act.COUNTER_FIX, queue.queue_id)
        endpoint = self.endpoints.get(ticket.endpoint_id or "")
        if endpoint is not None and endpoint.serving == ticket_id:
            self._free(endpoint)

    def _on_no_show(self, ticket_id: str) -> None:
        ticket = self.tickets.get(ticket_id)
        if ticket is None or ticket.state != TicketState.ON_HOLD:
            return
        ticket.state = TicketState.NO_SHOW
        ticket.no_show_at = self.elapsed
        self._emit_ticket(ticket, "UPDATE")
        self._at_later(self.rng.uniform(300, 900) / self.speed, _Act.EXPIRE, ticket_id)

    def _on_expire(self, ticket_id: str) -> None:
        ticket = self.tickets.get(ticket_id)
        if ticket is not None and ticket.state == TicketState.NO_SHOW:
            self._finish(ticket, TicketState.CANCELED)

    def _on_cancel(self, ticket_id: str) -> None:
        ticket = self.tickets.get(ticket_id)
        if ticket is not None and ticket.state in WAITING_STATES:
            queue = self.queues[ticket.queue_id]
            self._finish(ticket, TicketState.CANCELED)
            self._alert_front(queue)

    def _on_confirm(self, ticket_id: str) -> None:
        ticket = self.tickets.get(ticket_id)
        if ticket is None or ticket.state != TicketState.TO_CONFIRM:
            return
        ticket.state = TicketState.BOOKED
        self._emit_ticket(ticket, "UPDATE")
        queue = self.queues[ticket.queue_id]
        self._alert_front(queue)
        for endpoint in queue.endpoints:
            if endpoint.open and endpoint.serving is None:
                self._wake(endpoint, self.rng.uniform(3, 10) / self.speed)

    def _on_pause(self, queue_id: str) -> None:
        queue = self.queues[queue_id]
        rng = self.rng
        pause_for = rng.uniform(120, 480) / self.speed
        if self.is_open(queue) and not queue.pause:
            queue.pause = True
            self._dirty_states.add(queue_id)
            self._at_later(pause_for, _Act.RESUME, queue_id)
        self._at_later(pause_for + rng.expovariate(1 / 2400) / self.speed, _Act.PAUSE, queue_id)

    def _on_resume(self, queue_id: str) -> None:
        queue = self.queues[queue_id]
        queue.pause = False
        self._dirty_states.add(queue_id)
        for endpoint in queue.endpoints:
            if endpoint.open and endpoint.serving is None:
                self._wake(endpoint, self.rng.uniform(2, 10) / self.speed)

    def _on_close_booking(self, queue_id: str) -> None:
        queue = self.queues[queue_id]
        rng = self.rng
        closed_for = rng.uniform(600, 1800) / self.speed
        if queue.booking_open:
            queue.booking_open = False
            self._dirty_states.add(queue_id)
            self._at_later(closed_for, _Act.REOPEN_BOOKING, queue_id)
        self._at_later(
            closed_for + rng.expovariate(1 / 5400) / self.speed, _Act.CLOSE_BOOKING, queue_id
        )

    def _on_reopen_booking(self, queue_id: str) -> None:
        self.queues[queue_id].booking_open = True
        self._dirty_states.add(queue_id)

    def _on_break(self, endpoint_id: str) -> None:
        endpoint = self.endpoints[endpoint_id]
        queue = self.queues[endpoint.queue_id]
        rng = self.rng
        away = rng.uniform(300, 1200) / self.speed
        others = sum(1 for other in queue.endpoints if other.open and other is not endpoint)
        if endpoint.open and not endpoint.on_break and not endpoint.closing and others:
            endpoint.on_break = True
            if endpoint.serving is None:
                endpoint.open = False
            else:
                endpoint.closing = True
            self._dirty_states.add(queue.queue_id)
            self._at_later(away, _Act.BACK, endpoint_id)
        self._at_later(away + rng.expovariate(1 / 3600) / self.speed, _Act.BREAK, endpoint_id)

    def _on_back(self, endpoint_id: str) -> None:
        endpoint = self.endpoints[endpoint_id]
        endpoint.on_break = False
        queue = self.queues[endpoint.queue_id]
        if self.in_slot(queue):
            endpoint.closing = False
            endpoint.open = True
            self._dirty_states.add(queue.queue_id)
            if endpoint.serving is None:
                self._wake(endpoint, self.rng.uniform(2, 10) / self.speed)

    def _on_slot(self, queue_id: str) -> None:
        queue = self.queues[queue_id]
        opening = self.in_slot(queue)
        for endpoint in queue.endpoints:
            if opening and not endpoint.on_break:
                endpoint.closing = False
                endpoint.open = True
                if endpoint.serving is None:
                    self._wake(endpoint, self.rng.uniform(2, 30) / self.speed)
            elif not opening:
                if endpoint.serving is None:
                    endpoint.open = False
                else:
                    endpoint.closing = True
        self._dirty_states.add(queue_id)
        self._schedule_slot_change(queue)

    def _on_refresh(self, queue_id: str) -> None:
        self._dirty_states.add(queue_id)
        self._at_later(self._until_next_grain(), _Act.REFRESH, queue_id)

    def _on_midnight(self, _subject: str) -> None:
        """A new day: counters restart, the day's history starts empty, hours move on."""
        self.history.clear()
        for queue in self.queues.values():
            queue.counter_value = 0
            self._dirty_counters.add(queue.queue_id)
            self._dirty_states.add(queue.queue_id)
        self._at_later(self.day_bounds()[1] - self.elapsed, _Act.MIDNIGHT, self.place_id)

    def _on_counter_fix(self, queue_id: str) -> None:
        queue = self.queues[queue_id]
        if queue.counter_value > 0:
            queue.counter_value -= 1
            self._dirty_counters.add(queue_id)

    def _burst_action(self, queue: SimQueue) -> None:
        rng = self._burst_rng
        if len(self._burst_called) >= 4:
            ticket = self.tickets.get(self._burst_called.popleft())
            if ticket is not None and ticket.state == TicketState.CALLED:
                self._finish(ticket, TicketState.DONE)
                queue = self.queues[ticket.queue_id]
                queue.counter_value += 1
                self._dirty_counters.add(queue.queue_id)
                endpoint = self.endpoints.get(ticket.endpoint_id or "")
                if endpoint is not None and endpoint.serving == ticket.ticket_id:
                    self._free(endpoint)
            return
        if queue.waiting and rng.random() < 0.5:
            ticket = self.tickets[queue.waiting[0][2]]
            endpoint = rng.choice(queue.endpoints)
            self._call(ticket, endpoint)
            self._burst_called.append(ticket.ticket_id)
            return
        ticket = self._make_ticket(queue, self.elapsed, rng)
        if queue.appointment:
            ticket.booked_for = self.elapsed
        self._enter_waiting(queue, ticket)
        self._emit_ticket(ticket, "CREATE")

    def _today_close(self, queue: SimQueue) -> float:
        _, midnight = self.day_bounds()
        ends = [end for start, end in queue.slots if start < midnight]
        return max(ends) if ends else self.elapsed

    # --- events ------------------------------------------------------------------------------

    def _emit_ticket(self, ticket: SimTicket, action: str) -> None:
        data = self.records.ticket(ticket)
        self._out.append(PlaceEvent(Feed.TICKETS, action, ticket.ticket_id, ticket.queue_id, data))

    def _flush(self) -> None:
        """Report queue states and counters that changed since they were last reported."""
        for queue_id in sorted(self._dirty_states, key=lambda key: self.queues[key].index):
            queue = self.queues[queue_id]
            state = self.records.queue_state(queue)
            if state != queue.last_state:
                queue.last_state = state
                self._out.append(PlaceEvent(Feed.QUEUES, "UPDATE", queue_id, queue_id, state))
        self._dirty_states.clear()
        for queue_id in sorted(self._dirty_counters, key=lambda key: self.queues[key].index):
            queue = self.queues[queue_id]
            counter = self.records.counter(queue)
            if counter != queue.last_counter:
                queue.last_counter = counter
                self._out.append(PlaceEvent(Feed.COUNTERS, "UPDATE", queue_id, queue_id, counter))
        self._dirty_counters.clear()


def _split(total: int, weights: list[float]) -> list[int]:
    """Split `total` into parts proportional to `weights` (largest remainders)."""
    whole = sum(weights)
    raw = [total * weight / whole for weight in weights]
    parts = [int(value) for value in raw]
    order = sorted(range(len(raw)), key=lambda index: raw[index] - parts[index], reverse=True)
    for index in order[: total - sum(parts)]:
        parts[index] += 1
    return parts
