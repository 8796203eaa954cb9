"""The place's records as the display service's JSON shows them (dicts ready for `json.dumps`).

Names are objects keyed by locale; dates in the service's shapes, or in the one the place's
`Dialect` chooses.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from lobby_display.models import LOCALES, TicketState
from lobby_display.simulator import names
from lobby_display.simulator.faults import hostile_code, hostile_text
from lobby_display.simulator.timefmt import iso_z, service_datetime

if TYPE_CHECKING:
    from lobby_display.simulator.model import Place, SimEndpoint, SimQueue, SimTicket

#: Endpoint `state` numbers. The spec shows 0 and 2 without their meaning; here 2 is an open
#: endpoint and 0 a closed one.
ENDPOINT_OPEN = 2
ENDPOINT_CLOSED = 0
#: The place's own language.
PLACE_LANGUAGE = "fr_FR"

_LOCALE_INDEX: dict[str, int] = {locale: index for index, locale in enumerate(LOCALES)}


class Records:
    """Renders the records of one place."""

    def __init__(self, place: Place) -> None:
        self.place = place
        self._epoch = place.t0.timestamp()
        dialect = place.options.dialect
        self._dates = dialect.dates
        self._legacy = dialect.legacy_names
        # Formatting date-times is most of the cost of a record: each second is formatted once.
        self._service_cache: dict[int, str] = {}
        self._iso_cache: dict[int, str] = {}

    def service_moment(self, elapsed: float) -> str:
        """The service's date-time shape for the second at `elapsed`, in the place's zone (ISO
        with the dialect's `dates="iso"`)."""
        second = math.floor(self._epoch + elapsed)
        text = self._service_cache.get(second)
        if text is None:
            if len(self._service_cache) > 200_000:
                self._service_cache.clear()
            moment = datetime.fromtimestamp(second, tz=UTC).astimezone(self.place.tz)
            shape = iso_z if self._dates == "iso" else service_datetime
            text = self._service_cache[second] = shape(moment)
        return text

    def iso_moment(self, timestamp: float) -> str:
        """ISO-8601 in UTC with milliseconds and Z, for `timestamp` seconds since the epoch (the
        service's shape in the place's zone with the dialect's `dates="service"`)."""
        millis = math.floor(timestamp * 1000)
        text = self._iso_cache.get(millis)
        if text is None:
            if len(self._iso_cache) > 200_000:
                self._iso_cache.clear()
            moment = datetime.fromtimestamp(millis / 1000, tz=UTC)
            if self._dates == "service":
                text = service_datetime(moment.astimezone(self.place.tz))
            else:
                text = iso_z(moment)
            self._iso_cache[millis] = text
        return text

    def iso_elapsed(self, elapsed: float) -> str:
        """`iso_moment` of the place's time at `elapsed`."""
        return self.iso_moment(self._epoch + elapsed)

    # --- helpers -----------------------------------------------------------------------------

    def names(
        self, texts: Mapping[str, str], index: int, langs: Sequence[str] | None = None
    ) -> dict[str, str]:
        """A locale map of names, restricted to `langs`, made hostile when the place is."""
        wanted = LOCALES if langs is None else [locale for locale in langs if locale in texts]
        if not self.place.hostile:
            return {locale: texts[locale] for locale in wanted}
        return {
            locale: hostile_text(texts[locale], index + _LOCALE_INDEX[locale]) for locale in wanted
        }

    def code(self, text: str, index: int) -> str:
        """A code (time zone, language), made hostile when the place is."""
        return hostile_code(text, index) if self.place.hostile else text

    def name(self, texts: Mapping[str, str], index: int, locale: str) -> str:
        """One name, in `locale`."""
        return self.names(texts, index, (locale,)).get(locale, "")

    def moment(self, elapsed: float | None) -> str | None:
        """A date-time in the service's shape, in the place's time zone (None stays None)."""
        if elapsed is None:
            return None
        return self.service_moment(elapsed)

    def _position(self) -> dict[str, float]:
        return dict(names.PLACE_POSITION)

    # --- reference data ----------------------------------------------------------------------

    def company(self, langs: Sequence[str] | None = None) -> dict[str, Any]:
        """The company record."""
        return {
            "companyId": self.place.company_id,
            "name": self.names(names.COMPANY, 0, langs),
            "language": self.code(PLACE_LANGUAGE, 3),
        }

    def place_record(self, langs: Sequence[str] | None = None) -> dict[str, Any]:
        """The place record."""
        place = self.place
        return {
            "placeId": place.place_id,
            "companyId": place.company_id,
            "name": self.names(names.PLACE, 1, langs),
            **names.PLACE_ADDRESS,
            "language": self.code(PLACE_LANGUAGE, 1),
            "timezone": self.code(place.options.timezone, 0),
            "position": self._position(),
        }

    def queue(self, queue: SimQueue, langs: Sequence[str] | None = None) -> dict[str, Any]:
        """A queue record (names, appointment types, pause flag)."""
        place = self.place
        return {
            "queueId": queue.queue_id,
            "placeId": place.place_id,
            "companyId": place.company_id,
            "name": self.names(queue.names, queue.index, langs),
            "language": self.code(PLACE_LANGUAGE, 2),
            "timezone": self.code(place.options.timezone, 1),
            "state": {"pause": queue.pause},
            "position": self._position(),
            "appointmentTypes": {
                kind.type_id: {
                    "appointmentTypeId": kind.type_id,
                    "name": self.names(kind.names, queue.index + kind.index, langs),
                }
                for kind in queue.types
            },
        }

    def endpoint(self, endpoint: SimEndpoint, langs: Sequence[str] | None = None) -> dict[str, Any]:
        """An endpoint record (the desk or office a ticket is called to)."""
        return {
            "endpointId": endpoint.endpoint_id,
            "queueId": endpoint.queue_id,
            "placeId": self.place.place_id,
            "name": self.names(endpoint.names, endpoint.index, langs),
            "state": ENDPOINT_OPEN if endpoint.open else ENDPOINT_CLOSED,
        }

    def counter(self, queue: SimQueue, langs: Sequence[str] | None = None) -> dict[str, Any]:
        """The counter of a queue: tickets done there today; it restarts at midnight."""
        place = self.place
        _, midnight = place.day_bounds()
        return {
            "counterId": queue.queue_id,
            "placeId": place.place_id,
            "companyId": place.company_id,
            "name": self.names(queue.names, queue.index, langs),
            "language": self.code(PLACE_LANGUAGE, 4),
            "timezone": self.code(place.options.timezone, 2),
            "infos": {"value": queue.counter_value, "nextRestart": self.moment(midnight)},
        }

    def timeslots(self, start: float, end: float) -> list[dict[str, str | None]]:
        """The place's opening hours (every queue's, merged) that overlap [start, end)."""
        spans = sorted(
            (begin, finish)
            for queue in self.place.queues.values()
            for begin, finish in queue.slots
            if begin < end and finish > start
        )
        merged: list[list[float]] = []
        for begin, finish in spans:
            if merged and begin <= merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], finish)
            else:
                merged.append([begin, finish])
        return [
            {"startAt": self.moment(begin), "endAt": self.moment(finish)}
            for begin, finish in merged
        ]

    # --- live data ---------------------------------------------------------------------------

    def ticket(
        self, ticket: SimTicket, positions: Mapping[str, tuple[int, int]] | None = None
    ) -> dict[str, Any]:
        """A ticket record; `positions` (from `Place.positions`) saves work for many tickets."""
        place = self.place
        queue = place.queues[ticket.queue_id]
        lang = ticket.lang
        if positions is not None:
            ahead, people = positions.get(ticket.ticket_id, (0, 0))
        else:
            ahead, people = place.position(ticket)
        service = queue.service_mean / place.speed
        if ticket.state in (TicketState.BOOKED, TicketState.TO_CONFIRM, TicketState.ALERTED):
            desks = max(1, place.open_endpoints(queue))
            estimated = place.elapsed + (ahead / desks + 0.5) * service
            if ticket.booked_for is not None:
                estimated = max(estimated, ticket.booked_for)
        elif ticket.called_at is not None:
            estimated = ticket.called_at
        else:
            estimated = ticket.booked_for if ticket.booked_for is not None else ticket.booked_at
        endpoint = place.endpoints.get(ticket.endpoint_id or "")
        kind = queue.type_by_id(ticket.type_id)
        label = ticket.label
        if place.hostile:
            label = hostile_text(label, ticket.seq)
        position = {"nbPeople": people, "nbTickets": ahead}
        return {
            "ticketId": ticket.ticket_id,
            "label": label,
            "queue": {"id": queue.queue_id, "name": self.name(queue.names, queue.index, lang)},
            "place": {"id": place.place_id, "name": self.name(names.PLACE, 1, lang)},
            "userId": ticket.user_id,
            "appointmentType": {
                "id": kind.type_id,
                "name": self.name(kind.names, queue.index + kind.index, lang),
            },
            "state": int(ticket.state),
            "isAnAppointment": ticket.appointment,
            "groupSize": ticket.group_size,
            "duration": ticket.duration,
            "ticketPosition": {"global": position, "endpoint": dict(position)},
            "recalledCount": ticket.recalled_count,
            "lang": self.code(lang, ticket.seq),
            "timeline": {
                "bookedAt": self.moment(ticket.booked_at),
                "inToConfirmAt": self.moment(ticket.to_confirm_at),
                "initialBookedFor": self.moment(ticket.booked_for),
                "estimatedFor": self.moment(estimated),
                "alertedAt": self.moment(ticket.alerted_at),
                "calledAt": self.moment(ticket.called_at),
                "inProgressAt": self.moment(ticket.in_progress_at),
                "estimatedDoneAt": self.moment(estimated + service),
                "onHoldAt": self.moment(ticket.on_hold_at),
                "noShowAt": self.moment(ticket.no_show_at),
                "cancelledAt": self.moment(ticket.cancelled_at),
                "doneAt": self.moment(ticket.done_at),
                "recalledAt": [self.moment(moment) for moment in ticket.recalled_at],
            },
            "extraInfos": {"queueDistance": 0},
            "endpoint": {
                "id": endpoint.endpoint_id if endpoint else None,
                "name": self.name(endpoint.names, endpoint.index, lang) if endpoint else "",
            },
            "extendedAttributes": {},
        }

    def tickets(self, tickets: Sequence[SimTicket]) -> list[dict[str, Any]]:
        """Many ticket records, computing each queue's positions once."""
        place = self.place
        positions: dict[str, tuple[int, int]] = {}
        for queue_id in {ticket.queue_id for ticket in tickets}:
            positions.update(place.positions(place.queues[queue_id]))
        return [self.ticket(ticket, positions) for ticket in tickets]

    def queue_state(self, queue: SimQueue) -> dict[str, Any]:
        """The live state of a queue: flags, waiting line, first availabilities, hours."""
        place = self.place
        full = place.is_full(queue)
        start_of_day, midnight = place.day_bounds()
        today_close = max(
            (end for begin, end in queue.slots if begin < midnight and end > start_of_day),
            default=place.grain_start(),
        )
        tomorrow = min((begin for begin, _ in queue.slots if begin >= midnight), default=midnight)
        availabilities, full_today = self._first_availabilities(queue, today_close, tomorrow)
        full_for_day = full or full_today
        tickets, people = place.waiting_totals(queue)
        day = [
            {"startTime": self.iso_elapsed(begin), "endTime": self.iso_elapsed(end)}
            for begin, end in queue.slots
            if begin < midnight and end > start_of_day
        ]
        upcoming = next(((b, e) for b, e in queue.slots if b > place.elapsed), None)
        state = {
            "queueId": queue.queue_id,
            "bookingIsOpened": queue.booking_open,
            "queueIsOpened": place.is_open(queue),
            "queueIsFull": full,
            "queueIsFullForTheDay": full_for_day,
            "queueIsFullForFifo": (not queue.appointment) and full_for_day,
            "queueIsFullForAppointment": queue.appointment and full_for_day,
            "pause": queue.pause,
            "queueLength": {
                "queueTicketLength": tickets,
                "queuePeopleLength": people,
                "byAppointmentType": {
                    type_id: {"queueTicketLength": count[0], "queuePeopleLength": count[1]}
                    for type_id, count in queue.counts.items()
                },
            },
            "allFirstAvailabilities": availabilities,
            "dayQueueTimeslot": day,
            "nextQueueTimeslot": (
                {
                    "startTime": self.iso_elapsed(upcoming[0]),
                    "endTime": self.iso_elapsed(upcoming[1]),
                }
                if upcoming
                else None
            ),
        }
        if self._legacy:
            state["opened"] = state.pop("bookingIsOpened")
            state["full"] = state.pop("queueIsFull")
        return state

    def _first_availabilities(
        self, queue: SimQueue, today_close: float, tomorrow: float
    ) -> tuple[dict[str, dict[str, str]], bool]:
        """First free time by appointment type and group size; True when none is left today."""
        place = self.place
        grain = place.granularity()
        service = queue.service_mean / place.speed
        desks = max(1, place.open_endpoints(queue) or len(queue.endpoints))
        base = place.grain_start()
        if not place.in_slot(queue):
            base = next((b for b, _ in queue.slots if b > place.elapsed), tomorrow)
        result: dict[str, dict[str, str]] = {}
        full_today = True
        for kind in queue.types:
            by_size: dict[str, str] = {}
            for size in range(1, queue.max_group + 1):
                if queue.appointment:
                    free = max(queue.next_free.get(kind.type_id, base), base + 900 / place.speed)
                else:
                    free = base + len(queue.waiting) / desks * service
                free += (size - 1) * service / 4
                if not queue.booking_open or place.is_full(queue) or free >= today_close:
                    free = tomorrow
                else:
                    full_today = False
                free = math.ceil((self._epoch + free) / grain) * grain
                by_size[str(size)] = self.iso_moment(free)
            result[kind.type_id] = by_size
        return result, full_today
