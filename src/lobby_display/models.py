"""Display-service records as pydantic models: a tolerant reader that cleans every string.

The boundary where network data enters: past it, ids are strings, names locale maps, date-times
timezone-aware, and every string that can reach the screen has passed `clean_text` (what that
guarantees: docs/architecture.md). Markup is not escaped: the UI draws text literally.
"""

from __future__ import annotations

import functools
import logging
import re
import unicodedata
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime, timedelta, timezone
from enum import IntEnum
from typing import Annotated, Any, Final, Literal, TypeVar, get_args

from pydantic import (
    AliasChoices,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
)
from pydantic.alias_generators import to_camel

from lobby_display.terminal_text import for_terminal

log = logging.getLogger(__name__)

#: The nine locale codes of the booking service's conventions, in the spec's order.
Locale = Literal["fr_FR", "en_US", "es_ES", "de_DE", "zh_CN", "zh_TW", "ja_JP", "ko_KR", "th_TH"]
#: Every `Locale`, in the spec's order.
LOCALES: Final[tuple[Locale, ...]] = get_args(Locale)

#: Longest name kept (queue, place, counter, endpoint, appointment type). Longer ones are cut.
MAX_NAME_LENGTH: Final = 120
#: Longest ticket label kept.
MAX_LABEL_LENGTH: Final = 24
#: Longest id kept; ids are shown by `discover`, so they are cleaned too.
MAX_ID_LENGTH: Final = 128
#: Longest code kept (a language, a time zone like America/Argentina/ComodRivadavia, an action).
MAX_CODE_LENGTH: Final = 64
#: Combining marks kept after one base character ("zalgo" text would otherwise overflow rows).
MAX_COMBINING_RUN: Final = 3

_ELLIPSIS = "…"
_WHITESPACE_RUN = re.compile(r"\s+")
# Categories removed outright: controls (ESC, NUL, C1 controls such as CSI), format characters
# (bidi embeddings, overrides and isolates, zero-width characters), surrogates, unassigned.
_DROPPED_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Cn"})
# Separators that would break a line: replaced by a space.
_SPACE_CATEGORIES = frozenset({"Zl", "Zp", "Zs"})
# Keep these whitespace controls as spaces instead of dropping them, so "A\tB" reads "A B".
_SPACE_CONTROLS = frozenset("\t\n\r\x0b\x0c\x85")


def clean_text(value: object, max_length: int = MAX_NAME_LENGTH) -> str:
    """Return `value` as text that is safe to put on a terminal.

    Control and format characters are removed (an ESC can never reach the terminal, a bidi
    override can never flip a row), runs of white space become one space, the text is NFC
    normalised and written for the kiosk's terminal (`terminal_text.for_terminal`: Thai SARA AM
    decomposed, same width), runs of combining marks are capped, and the result is cut to
    `max_length` characters with an ellipsis. Non-strings are converted with `str()`; `None`
    gives "".
    """
    if value is None:
        return ""
    text = value if isinstance(value, str) else str(value)
    if len(text) > max_length * 8:
        # Bound the work on hostile input (a 100 KB name); what is cut is never shown anyway.
        text = text[: max_length * 8]
    if text.isascii() and text.isprintable():
        # Most ids and labels: no control, format or combining character, NFC already, and
        # the only white space is the plain space (what follows would give the same text).
        cleaned = " ".join(text.split())
    else:
        cleaned = _cleaned_characters(text)
    if len(cleaned) > max_length:
        cleaned = cleaned[: max_length - 1].rstrip() + _ELLIPSIS
    return cleaned


def _cleaned_characters(text: str) -> str:
    """`text` with controls and format characters dropped, separators as single spaces, NFC and
    `for_terminal`, runs of combining marks capped, stripped (not cut to a length)."""
    text = for_terminal(unicodedata.normalize("NFC", text))
    out: list[str] = []
    combining = 0
    for char in text:
        if char in _SPACE_CONTROLS:
            out.append(" ")
            combining = 0
            continue
        category = unicodedata.category(char)
        if category in _DROPPED_CATEGORIES:
            continue
        if category in _SPACE_CATEGORIES:
            out.append(" ")
            combining = 0
            continue
        if category in ("Mn", "Me"):
            combining += 1
            if combining > MAX_COMBINING_RUN or not out:
                continue
        else:
            combining = 0
        out.append(char)
    return _WHITESPACE_RUN.sub(" ", "".join(out)).strip()


def _clean_name(value: object) -> str:
    return clean_text(value, MAX_NAME_LENGTH)


def _clean_label(value: object) -> str:
    return clean_text(value, MAX_LABEL_LENGTH)


def _clean_id(value: object) -> str:
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise ValueError("an id must be a string or a number")
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return clean_text(value, MAX_ID_LENGTH)


def _optional_id(value: object) -> str | None:
    if value is None or value == "":
        return None
    return _clean_id(value)


def _clean_code(value: object) -> str:
    return clean_text(value, MAX_CODE_LENGTH)


CleanName = Annotated[str, BeforeValidator(_clean_name)]
#: A short code of the service's: a language, a time-zone name, an action's category or name.
CleanCode = Annotated[str, BeforeValidator(_clean_code)]
CleanLabel = Annotated[str, BeforeValidator(_clean_label)]
Id = Annotated[str, BeforeValidator(_clean_id)]
OptionalId = Annotated[str | None, BeforeValidator(_optional_id)]


def _names(value: object) -> dict[str, str]:
    """Read a locale map of names; a bare string is accepted as a name of unknown locale ("")."""
    if value is None:
        return {}
    if isinstance(value, str):
        return {"": _clean_name(value)}
    if isinstance(value, Mapping):
        names: dict[str, str] = {}
        for key, text in value.items():
            if isinstance(key, str) and isinstance(text, str | int | float):
                cleaned = _clean_name(text)
                if cleaned:
                    names[clean_text(key, 16)] = cleaned
        return names
    raise ValueError("expected a name or an object of names keyed by locale")


#: Names keyed by locale code; "" holds a name whose locale is not known.
Names = Annotated[dict[str, str], BeforeValidator(_names)]


def pick_name(names: Mapping[str, str], locale: str, fallback: Iterable[str] = ()) -> str:
    """Choose the name to show in `locale` from a locale map.

    Order: the locale itself, a locale of the same language (zh_TW for zh_CN), each locale of
    `fallback` in turn (the place's language, then the others shown), English, then any name.
    Returns "" when the map is empty.
    """
    if not names:
        return ""
    if name := names.get(locale):
        return name
    language = locale.split("_", 1)[0]
    for key, name in names.items():
        if key.split("_", 1)[0] == language and name:
            return name
    for key in (*fallback, "en_US", ""):
        if name := names.get(key):
            return name
    return next((name for name in names.values() if name), "")


# --- date-times --------------------------------------------------------------------------------

# `2026-11-22T14:05:00:00,0000+0100`: the service's own shape (date, time, a colon and two digits,
# a comma and four digits, an offset without a colon). The two sub-second groups are read as
# fractions of a second; a display only needs the second.
_SERVICE_DATETIME = re.compile(
    r"^(?P<date>\d{4}-\d{2}-\d{2})[T ](?P<h>\d{2}):(?P<m>\d{2})(?::(?P<s>\d{2}))?"
    r"(?::(?P<centi>\d{1,2}))?(?:[,.](?P<frac>\d{1,9}))?"
    r"\s*(?P<tz>Z|[+-]\d{2}:?\d{2})?$"
)


def parse_datetime(value: object) -> datetime:
    """Parse either date-time shape of the display service into an aware datetime.

    Accepts the service's `2026-11-22T14:05:00:00,0000+0100`, ISO-8601 with `Z` or an offset,
    datetimes, and epoch milliseconds. A date-time without an offset is taken as UTC.
    Raises ValueError for anything else.
    """
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    if isinstance(value, int | float) and not isinstance(value, bool):
        return datetime.fromtimestamp(value / 1000, tz=UTC)
    if not isinstance(value, str):
        raise ValueError("expected a date-time string")
    return _parse_datetime_text(value)


# A queue's state repeats its date-times (its next free slots) in every message, and a ticket's
# events repeat its own: parsed each time, they were a tenth of the time the display spent
# reading its feeds (this project's benchmark host, 100 events/s). A datetime is immutable.
@functools.lru_cache(maxsize=1024)
def _parse_datetime_text(value: str) -> datetime:
    text = value.strip()
    match = _SERVICE_DATETIME.match(text)
    if match is None:
        raise ValueError(f"not a date-time: {clean_text(text, 40)!r}")
    year, month, day = (int(part) for part in match["date"].split("-"))
    micro = 0
    if match["centi"]:
        micro = int(match["centi"].ljust(2, "0")) * 10_000
    elif match["frac"]:
        micro = int(match["frac"][:6].ljust(6, "0"))
    tz_text = match["tz"]
    tz: timezone = UTC
    if tz_text and tz_text != "Z":
        sign = 1 if tz_text[0] == "+" else -1
        digits = tz_text[1:].replace(":", "")
        tz = timezone(sign * timedelta(hours=int(digits[:2]), minutes=int(digits[2:])))
    try:
        return datetime(
            year, month, day, int(match["h"]), int(match["m"]), int(match["s"] or 0), micro, tz
        )
    except ValueError as error:
        raise ValueError(f"not a date-time: {clean_text(text, 40)!r} ({error})") from None


def _optional_datetime(value: object) -> datetime | None:
    """Tolerant date-time: missing, empty or unreadable values become None (and are logged)."""
    if value is None or value == "":
        return None
    try:
        return parse_datetime(value)
    except ValueError as error:
        log.warning("ignored an unreadable date-time: %s", error)
        return None


DateTime = Annotated[datetime, BeforeValidator(parse_datetime)]
OptionalDateTime = Annotated[datetime | None, BeforeValidator(_optional_datetime)]


def _datetime_list(value: object) -> list[datetime]:
    if value is None:
        return []
    if isinstance(value, str | int | float):
        value = [value]
    if not isinstance(value, list | tuple):
        raise ValueError("expected a list of date-times")
    return [moment for item in value if (moment := _optional_datetime(item)) is not None]


DateTimeList = Annotated[list[datetime], BeforeValidator(_datetime_list)]


def _count(value: object) -> int:
    """A count from the network: numbers, numeric strings; None is 0; negatives are kept."""
    if value is None or value == "":
        return 0
    if isinstance(value, bool):
        raise ValueError("expected a number")
    if isinstance(value, int | float):
        return int(value)
    if isinstance(value, str):
        return int(float(value))
    raise ValueError("expected a number")


Count = Annotated[int, BeforeValidator(_count)]


# --- records -----------------------------------------------------------------------------------


class Record(BaseModel):
    """Base of every record read from the service: unknown fields ignored; attributes in
    snake_case, read (and written) under the wire's camelCase names."""

    model_config = ConfigDict(
        extra="ignore", populate_by_name=True, frozen=True, alias_generator=to_camel
    )


_R = TypeVar("_R", bound=Record)


def keyed(model: type[_R], payload: object, id_field: str) -> dict[str, _R]:
    """Read a collection (an object keyed by id, or a list) into records keyed by id.

    Entries that are not valid records are skipped with a log line, so one bad entry does not
    blank the whole screen. The key of an entry fills its id field (`id_field`, a field's name:
    "queue_id") when the record lacks one.
    """
    wire_key = model.model_fields[id_field].alias or id_field
    if isinstance(payload, Mapping):
        items: Iterable[tuple[object, object]] = payload.items()
    elif isinstance(payload, list):
        items = ((None, item) for item in payload)
    else:
        raise ValueError(f"expected an object keyed by {wire_key} or a list")
    records: dict[str, _R] = {}
    for key, item in items:
        if isinstance(item, Mapping) and key is not None and not item.get(wire_key):
            item = {**item, wire_key: key}
        try:
            record = model.model_validate(item)
        except ValidationError as error:
            log.warning("skipped a %s entry that does not fit: %s", model.__name__, _summary(error))
            continue
        records[getattr(record, id_field)] = record
    return records


def _summary(error: ValidationError) -> str:
    """A one-line account of a validation error that quotes no input value."""
    parts = []
    for detail in error.errors(include_input=False, include_url=False)[:3]:
        # A location holds the service's own dictionary keys: cleaned like any of its text.
        where = ".".join(clean_text(part, 40) for part in detail["loc"]) or "record"
        parts.append(f"{where}: {detail['msg']}")
    return "; ".join(parts)


class GpsPosition(Record):
    """A point on the map."""

    lat: float | None = None
    lng: float | None = None


class Place(Record):
    """A place: the building whose waiting room the screen is in."""

    place_id: Id
    company_id: Id = ""
    name: Names = Field(default_factory=dict)
    address: CleanName = ""
    city: CleanName = ""
    country: CleanName = ""
    zip: CleanName = ""
    language: CleanCode = ""
    timezone: CleanCode = ""
    position: GpsPosition | None = None


class QueuePauseState(Record):
    """The `state` object of a queue record."""

    pause: bool = False


class AppointmentType(Record):
    """A kind of appointment offered by a queue."""

    appointment_type_id: Id
    name: Names = Field(default_factory=dict)


class Queue(Record):
    """A queue of a place (reference data: names, appointment types)."""

    queue_id: Id
    place_id: Id = ""
    company_id: Id = ""
    name: Names = Field(default_factory=dict)
    language: CleanCode = ""
    timezone: CleanCode = ""
    state: QueuePauseState | None = None
    position: GpsPosition | None = None
    appointment_types: dict[str, AppointmentType] = Field(default_factory=dict)

    @field_validator("appointment_types", mode="before")
    @classmethod
    def _appointment_types(cls, value: object) -> object:
        if value is None:
            return {}
        return keyed(AppointmentType, value, "appointment_type_id")


class CounterInfos(Record):
    """The `infos` of a counter: its value and when it next restarts from zero."""

    value: float = 0
    next_restart: OptionalDateTime = None

    @field_validator("value", mode="before")
    @classmethod
    def _value(cls, value: object) -> object:
        return 0 if value is None else value


class Counter(Record):
    """A counter of people or tickets; its id equals a queue id."""

    counter_id: Id
    place_id: Id = ""
    company_id: Id = ""
    name: Names = Field(default_factory=dict)
    language: CleanCode = ""
    timezone: CleanCode = ""
    infos: CounterInfos = Field(default_factory=CounterInfos)


class Endpoint(Record):
    """An endpoint: the desk, window or room a ticket is called to."""

    endpoint_id: Id
    queue_id: Id = ""
    place_id: Id = ""
    name: Names = Field(default_factory=dict)
    #: Values 0 and 2 appear; their meaning is not given by the spec, so nothing depends on it.
    state: int | None = None


class TimeSlot(Record):
    """A time slot of a place."""

    start_at: DateTime
    end_at: DateTime


class QueueTimeslot(Record):
    """Opening hours of a queue (`dayQueueTimeslot`, `nextQueueTimeslot`)."""

    start_time: DateTime
    end_time: DateTime


class QueueLengthPart(Record):
    """Waiting tickets and people (for one appointment type or in total)."""

    queue_ticket_length: Count = 0
    queue_people_length: Count = 0


class QueueLength(QueueLengthPart):
    """Waiting tickets and people of a queue, in total and per appointment type."""

    by_appointment_type: dict[str, QueueLengthPart] = Field(default_factory=dict)

    @field_validator("by_appointment_type", mode="before")
    @classmethod
    def _by_type(cls, value: object) -> object:
        if isinstance(value, Mapping):
            # The keys are appointment-type ids: cleaned as ids are (and as in messages).
            return {_clean_id(key): part for key, part in value.items()}
        return {} if value is None else value


def _first_availabilities(value: object) -> dict[str, dict[int, datetime | None]]:
    """`allFirstAvailabilities`: appointment type -> group size -> first free date-time."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ValueError("expected an object keyed by appointment type")
    result: dict[str, dict[int, datetime | None]] = {}
    for type_id, by_size in value.items():
        if not isinstance(by_size, Mapping):
            continue
        sizes: dict[int, datetime | None] = {}
        for size, moment in by_size.items():
            try:
                group = int(size)
            except (TypeError, ValueError):
                continue
            sizes[group] = _optional_datetime(moment)
        result[_clean_id(type_id)] = sizes
    return result


class QueueState(Record):
    """The live state of a queue: flags, waiting counts, first availabilities, opening hours."""

    queue_id: Id = ""
    booking_is_opened: bool | None = Field(
        default=None,
        validation_alias=AliasChoices("bookingIsOpened", "opened", "booking_is_opened"),
    )
    queue_is_opened: bool | None = None
    queue_is_full: bool | None = Field(
        default=None, validation_alias=AliasChoices("queueIsFull", "full", "queue_is_full")
    )
    queue_is_full_for_the_day: bool | None = None
    queue_is_full_for_fifo: bool | None = None
    queue_is_full_for_appointment: bool | None = None
    pause: bool | None = None
    queue_length: QueueLength = Field(default_factory=QueueLength)
    all_first_availabilities: Annotated[
        dict[str, dict[int, datetime | None]], BeforeValidator(_first_availabilities)
    ] = Field(default_factory=dict)
    day_queue_timeslot: list[QueueTimeslot] = Field(default_factory=list)
    next_queue_timeslot: QueueTimeslot | None = None

    @field_validator("queue_length", mode="before")
    @classmethod
    def _length(cls, value: object) -> object:
        return {} if value is None else value

    @field_validator("day_queue_timeslot", mode="before")
    @classmethod
    def _day_slots(cls, value: object) -> object:
        if value is None:
            return []
        if isinstance(value, list):
            slots = []
            for item in value:
                try:
                    slots.append(QueueTimeslot.model_validate(item))
                except ValidationError:
                    log.warning("ignored an unreadable queue time slot")
            return slots
        return value

    @field_validator("next_queue_timeslot", mode="before")
    @classmethod
    def _next_slot(cls, value: object) -> object:
        if not value:
            return None
        try:
            return QueueTimeslot.model_validate(value)
        except ValidationError:
            log.warning("ignored an unreadable next queue time slot")
            return None


class TicketState(IntEnum):
    """Ticket states of booking-service-v2.md."""

    BOOKED = 0
    TO_CONFIRM = 50
    ALERTED = 100
    CALLED = 200
    ON_HOLD = 300
    NO_SHOW = 400
    IN_PROGRESS = 500
    CANCELED = 600
    DONE = 700


#: States of tickets that are no longer current: they leave the board.
FINISHED_STATES: Final = frozenset({TicketState.CANCELED, TicketState.DONE})
#: States of tickets that wait for their turn (counted as waiting if the service gives no count).
WAITING_STATES: Final = frozenset({TicketState.BOOKED, TicketState.TO_CONFIRM, TicketState.ALERTED})


def _ref(value: object) -> object:
    if value is None:
        return {}
    if isinstance(value, str | int):
        return {"id": value}
    return value


class Ref(Record):
    """A reference inside a ticket (`queue`, `place`, `appointmentType`, `endpoint`)."""

    id: OptionalId = None
    name: CleanName = ""

    @field_validator("name", mode="before")
    @classmethod
    def _name(cls, value: object) -> object:
        # A reference may carry a locale map instead of a string: keep its first name.
        if isinstance(value, Mapping):
            return next((text for text in value.values() if isinstance(text, str) and text), "")
        return value


RefField = Annotated[Ref, BeforeValidator(_ref)]


class PositionCount(Record):
    """A position in people and in tickets."""

    nb_people: Count = 0
    nb_tickets: Count = 0


class TicketPosition(Record):
    """Position of a ticket, on the queue and on its endpoint."""

    queue: PositionCount = Field(default_factory=PositionCount, alias="global")
    """On the whole queue (the wire's `global`)."""
    endpoint: PositionCount = Field(default_factory=PositionCount)


def _ticket_position(value: object) -> object:
    # Version 1 of the booking service had a plain position number on the endpoint.
    if value is None:
        return {}
    if isinstance(value, int | float) and not isinstance(value, bool):
        return {"endpoint": {"nbTickets": value}}
    return value


class Timeline(Record):
    """When each step of a ticket's life happened (None when it has not)."""

    booked_at: OptionalDateTime = None
    in_to_confirm_at: OptionalDateTime = None
    initial_booked_for: OptionalDateTime = None
    estimated_for: OptionalDateTime = None
    alerted_at: OptionalDateTime = None
    called_at: OptionalDateTime = None
    in_progress_at: OptionalDateTime = None
    estimated_done_at: OptionalDateTime = None
    on_hold_at: OptionalDateTime = None
    no_show_at: OptionalDateTime = None
    cancelled_at: OptionalDateTime = None
    done_at: OptionalDateTime = None
    recalled_at: DateTimeList = Field(default_factory=list)


class Ticket(Record):
    """A ticket of a queue (booking-service-v2.md)."""

    ticket_id: Id
    label: CleanLabel = ""
    queue: RefField = Field(default_factory=Ref)
    place: RefField = Field(default_factory=Ref)
    user_id: OptionalId = None
    appointment_type: RefField = Field(default_factory=Ref)
    state: int = TicketState.BOOKED
    is_an_appointment: bool = False
    group_size: Count = 1
    duration: float | None = None
    ticket_position: Annotated[TicketPosition, BeforeValidator(_ticket_position)] = Field(
        default_factory=TicketPosition
    )
    recalled_count: Count = 0
    lang: CleanCode = ""
    timeline: Timeline = Field(default_factory=Timeline)
    extra_infos: dict[str, Any] = Field(default_factory=dict)
    endpoint: RefField = Field(default_factory=Ref)
    #: A free map from the service; never rendered.
    extended_attributes: dict[str, Any] = Field(default_factory=dict)

    @field_validator("timeline", mode="before")
    @classmethod
    def _timeline(cls, value: object) -> object:
        return {} if value is None else value

    @field_validator("extra_infos", "extended_attributes", mode="before")
    @classmethod
    def _free_map(cls, value: object) -> object:
        return value if isinstance(value, Mapping) else {}

    @property
    def is_finished(self) -> bool:
        """True once the ticket is done or canceled (it is no longer current)."""
        return self.state in FINISHED_STATES


class TicketPage(Record):
    """A page of tickets: the first message of the tickets feed and the REST ticket routes."""

    total_count: Count = 0
    page: Count = 1
    page_size: Count = 20
    tickets: list[Ticket] = Field(default_factory=list)

    @field_validator("tickets", mode="before")
    @classmethod
    def _tickets(cls, value: object) -> object:
        if value is None:
            return []
        return list(keyed(Ticket, value, "ticket_id").values())


class Envelope(Record):
    """The SSE event envelope `{resource, actionCategory, actionName, data}`."""

    resource: CleanCode = ""
    action_category: CleanCode = ""
    action_name: CleanCode = ""
    data: Any = None


class ServiceError(Record):
    """The error body `{error, error_description, error_uri}` of the services."""

    error: CleanName = ""
    # OAuth's names, snake_case on the wire too.
    error_description: CleanName = Field(default="", alias="error_description")
    error_uri: CleanName = Field(default="", alias="error_uri")
