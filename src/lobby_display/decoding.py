"""What the feeds' messages mean: snapshots that replace, updates that merge into what is known.

One decoder per feed (`TicketDecoder`, `QueueStateDecoder`, `CounterDecoder`) keeps the last
known records as JSON and turns each message into the whole-record updates of `updates.py`, or
`NotUnderstood`. The merge rules: docs/architecture.md (how an update merges).
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from collections.abc import Collection, Mapping, Sequence
from typing import Any, Final, Generic, Protocol, TypeVar

from pydantic import TypeAdapter, ValidationError

from lobby_display.models import (
    MAX_CODE_LENGTH,
    Counter,
    Id,
    QueueState,
    Record,
    Ticket,
    TicketPage,
    clean_text,
    keyed,
)
from lobby_display.updates import (
    CounterChanged,
    CountersSnapshot,
    Feed,
    QueueStateChanged,
    QueueStatesSnapshot,
    TicketChanged,
    TicketRemoved,
    TicketsSnapshot,
    Update,
)

log = logging.getLogger(__name__)

#: Action names that say a record was removed (the spec shows none; these are guesses).
_REMOVAL_ACTIONS: Final = ("DELETE", "REMOVE", "DONE", "CANCEL", "CLOSE")
#: Legacy field names of queue states, and the version-2 names they stand for.
QUEUE_STATE_LEGACY: Final = {"opened": "bookingIsOpened", "full": "queueIsFull"}
#: Tickets removed lately whose late partial updates are dropped instead of answered with a
#: fresh snapshot (a late update of a finished ticket does not make it current again).
_REMEMBERED_REMOVALS: Final = 1000

_ID: Final[TypeAdapter[str]] = TypeAdapter(Id)


class NotUnderstood(Exception):
    """An event whose content the decoder cannot map to an update."""


class TicketPages(Protocol):
    """What the tickets decoder needs of the REST client (see client.py)."""

    async def current_tickets(
        self, queue_ids: Sequence[str], *, first: TicketPage | None = None
    ) -> list[Ticket]: ...


# --- reading the shapes of a message ------------------------------------------------------------


def _unwrap(data: Any) -> tuple[str, str, Any]:
    """(actionCategory, actionName, payload) of an envelope, or ("", "", data) for a bare value."""
    if (
        isinstance(data, Mapping)
        and "data" in data
        and ("actionCategory" in data or "actionName" in data or "resource" in data)
    ):
        # Cleaned: they are quoted in the feed's error (on screen, in the log, by `screenshot`).
        category = clean_text(data.get("actionCategory"), MAX_CODE_LENGTH)
        action = clean_text(data.get("actionName"), MAX_CODE_LENGTH)
        return category, action, data["data"]
    return "", "", data


def _is_removal(category: str, action: str) -> bool:
    words = f"{category} {action}".upper()
    return any(word in words for word in _REMOVAL_ACTIONS)


def _records(payload: Any, id_field: str) -> list[Mapping[str, Any]] | None:
    """The records in a payload that is one record, a list of records or a map keyed by id."""
    if isinstance(payload, Mapping):
        if id_field in payload:
            return [payload]
        values = list(payload.values())
        if all(isinstance(value, Mapping) for value in values):
            return [
                value if value.get(id_field) else {**value, id_field: key}
                for key, value in payload.items()
            ]
        return None
    if isinstance(payload, list) and all(isinstance(item, Mapping) for item in payload):
        return payload
    return None


def normalised(record: Mapping[str, Any], legacy: Mapping[str, str]) -> dict[str, Any]:
    """`record` with its legacy field names renamed; the current name wins when both come."""
    out = dict(record)
    for old, new in legacy.items():
        if old in out:
            value = out.pop(old)
            out.setdefault(new, value)
    return out


def _key(value: object) -> str | None:
    """An id as the models read it (cleaned), or None when it cannot be one."""
    if value is None:
        return None
    try:
        key = _ID.validate_python(value)
    except ValidationError:
        return None
    return key or None


# --- the last known records -------------------------------------------------------------------

_R = TypeVar("_R", bound=Record)


class RecordStore(Generic[_R]):
    """The last known record of each id of one kind, as normalised JSON, and the merge rule."""

    def __init__(
        self,
        model: type[_R],
        id_field: str,
        what: str,
        standalone: Collection[str],
        legacy: Mapping[str, str] | None = None,
    ) -> None:
        self.model = model
        self.id_field = id_field
        self.what = what
        self.standalone = tuple(standalone)
        """Fields an update for an unknown id must carry to be taken as a whole record."""
        self.legacy = dict(legacy or {})
        self.records: dict[str, dict[str, Any]] = {}

    def __len__(self) -> int:
        return len(self.records)

    def __contains__(self, key: object) -> bool:
        return key in self.records

    def raw(self, record: Mapping[str, Any]) -> dict[str, Any]:
        """`record` with legacy names renamed (what the store keeps)."""
        return normalised(record, self.legacy) if self.legacy else dict(record)

    def replace(self, models: Mapping[str, _R], raws: Mapping[str, Mapping[str, Any]]) -> None:
        """A snapshot: keep exactly these records (the raw JSON when known, else the model's)."""
        self.records = {
            key: self.raw(raws[key])
            if key in raws
            else model.model_dump(mode="json", by_alias=True)
            for key, model in models.items()
        }

    def key_of(self, record: Mapping[str, Any]) -> str:
        """The id of an update's record; NotUnderstood when it has none."""
        key = _key(record.get(self.id_field))
        if key is None:
            raise NotUnderstood(f"a {self.what} update without a readable {self.id_field}")
        return key

    def stands_alone(self, record: Mapping[str, Any]) -> bool:
        """True when `record` carries every field a record with no known past needs."""
        return all(name in record for name in self.standalone)

    def merged(self, key: str, record: Mapping[str, Any]) -> tuple[_R, dict[str, Any]]:
        """The record `key` becomes with `record` merged in, validated, and its JSON; the store
        is not changed. NotUnderstood when it does not stand (see the module's rule)."""
        update = self.raw(record)
        known = self.records.get(key)
        if known is None:
            if not self.stands_alone(update):
                raise NotUnderstood(f"a partial {self.what} update for a {self.what} not known yet")
            whole = update
        else:
            whole = {**known, **update}
        whole[self.id_field] = key
        try:
            model = self.model.model_validate(whole)
        except ValidationError as error:
            fields = sorted({str(detail["loc"][0]) for detail in error.errors() if detail["loc"]})
            raise NotUnderstood(
                f"a {self.what} update that leaves the record unreadable ({', '.join(fields)})"
            ) from None
        return model, whole

    def put(self, key: str, whole: dict[str, Any]) -> None:
        """Keep `whole` as the last known record of `key`."""
        self.records[key] = whole

    def drop(self, key: str) -> bool:
        """Forget `key`; True when it was known."""
        return self.records.pop(key, None) is not None


def _raw_by_id(payload: Any, id_field: str) -> dict[str, Mapping[str, Any]]:
    """The raw records of a collection by cleaned id (entries without a readable id left out)."""
    found: dict[str, Mapping[str, Any]] = {}
    for record in _records(payload, id_field) or ():
        key = _key(record.get(id_field))
        if key is not None:
            found[key] = record
    return found


# --- the three feeds ------------------------------------------------------------------------------


class TicketDecoder:
    """Turns the tickets feed's messages into ticket updates (merged by ticketId)."""

    feed = Feed.TICKETS
    path = "/queues/tickets/currents/sse"

    def __init__(self, client: TicketPages, queue_ids: Sequence[str]) -> None:
        self.client = client
        self.queue_ids = list(queue_ids)
        self.store: RecordStore[Ticket] = RecordStore(
            Ticket, "ticketId", "ticket", standalone=("label", "state", "queue")
        )
        self._removed: OrderedDict[str, None] = OrderedDict()

    def params(self) -> dict[str, str]:
        """Query of the SSE route (the key is added by the runner)."""
        return {"queuesId": ",".join(self.queue_ids), "pageSize": "50"}

    async def snapshot(self, data: Any) -> list[Update]:
        """The first message: a page of current tickets, completed over REST when short."""
        _, _, payload = _unwrap(data)
        page = TicketPage.model_validate(payload)
        tickets = page.tickets
        if page.total_count > len(tickets):
            log.info(
                "tickets feed: first page holds %d of %d tickets; reading the rest",
                len(tickets),
                page.total_count,
            )
            tickets = await self.client.current_tickets(self.queue_ids, first=page)
        listed = payload.get("tickets") if isinstance(payload, Mapping) else None
        raws = _raw_by_id(listed, "ticketId")
        # The first page's tickets are kept as they came; those read over REST as the models read
        # them (the REST client gives models: a dump of one validates to the same ticket).
        from_page = {id(ticket) for ticket in page.tickets}
        self.store.replace(
            {ticket.ticket_id: ticket for ticket in tickets},
            {
                ticket.ticket_id: raws[ticket.ticket_id]
                for ticket in tickets
                if id(ticket) in from_page and ticket.ticket_id in raws
            },
        )
        return [TicketsSnapshot(tuple(tickets))]

    async def change(self, data: Any) -> list[Update]:
        """A later message; raises NotUnderstood for anything unknown."""
        category, action, payload = _unwrap(data)
        if isinstance(payload, Mapping) and "tickets" in payload:
            # A whole page again: take it as a new snapshot.
            return await self.snapshot(payload)
        records = _records(payload, "ticketId")
        if records is None:
            raise NotUnderstood(f"tickets event {category or '-'}/{action or '-'}")
        removal = _is_removal(category, action)
        updates: list[Update] = []
        for record in records:
            key = self.store.key_of(record)
            if removal:
                self._forget(key)
                updates.append(TicketRemoved(key))
                continue
            update = self._update(key, record)
            if update is not None:
                updates.append(update)
        return updates

    def records(self) -> dict[str, Any]:
        """The tickets known now, as one page (the feed's first message)."""
        tickets = list(self.store.records.values())
        return {"totalCount": len(tickets), "page": 1, "pageSize": len(tickets), "tickets": tickets}

    def _update(self, key: str, record: Mapping[str, Any]) -> Update | None:
        if key not in self.store and not self.store.stands_alone(record):
            alone = _ticket_alone(record)
            if alone is not None and alone.is_finished:
                # Done or canceled: whatever it was, it is not current.
                self._forget(key)
                return TicketRemoved(key)
            if key in self._removed and "state" not in record:
                log.debug("tickets feed: dropped a late update of a ticket that has left")
                return None
            queue_id = alone.queue.id if alone is not None else None
            if queue_id and queue_id not in self.queue_ids:
                return None  # a ticket of a queue not followed here
        ticket, whole = self.store.merged(key, record)
        if ticket.is_finished:
            self._forget(key)
        else:
            self._removed.pop(key, None)
            self.store.put(key, whole)
        return TicketChanged(ticket)

    def _forget(self, key: str) -> None:
        self.store.drop(key)
        self._removed[key] = None
        self._removed.move_to_end(key)
        while len(self._removed) > _REMEMBERED_REMOVALS:
            self._removed.popitem(last=False)


def _ticket_alone(record: Mapping[str, Any]) -> Ticket | None:
    """A partial ticket update read on its own (None when even that fails)."""
    try:
        return Ticket.model_validate(record)
    except ValidationError:
        return None


class QueueStateDecoder:
    """Turns the queue-state feed's messages into queue-state updates (merged by queueId)."""

    feed = Feed.QUEUES
    path = "/queues/state/sse"

    def __init__(self, queue_ids: Sequence[str]) -> None:
        self.queue_ids = list(queue_ids)
        self.store: RecordStore[QueueState] = RecordStore(
            QueueState,
            "queueId",
            "queue state",
            standalone=("queueLength", "queueIsOpened", "bookingIsOpened", "queueIsFull"),
            legacy=QUEUE_STATE_LEGACY,
        )

    def params(self) -> dict[str, str]:
        """Query of the SSE route."""
        return {"queuesId": ",".join(self.queue_ids)}

    async def snapshot(self, data: Any) -> list[Update]:
        """The first message: the `ALL_QUEUE_STATE` envelope with every queue's state."""
        _, _, payload = _unwrap(data)
        records = _records(payload, "queueId")
        if records is None:
            raise NotUnderstood("queue-state first message")
        states: dict[str, QueueState] = {}
        raws: dict[str, dict[str, Any]] = {}
        for record in records:
            raw = self.store.raw(record)
            state = QueueState.model_validate(raw)
            states[state.queue_id] = state
            raws[state.queue_id] = raw
        self.store.replace({key: state for key, state in states.items() if key}, raws)
        return [QueueStatesSnapshot(states)]

    def records(self) -> dict[str, Any]:
        """The queue states known now, as the feed's first message."""
        return {
            "resource": "queueState",
            "actionCategory": "ALL_QUEUE_STATE",
            "actionName": "ALL_DATA",
            "data": dict(self.store.records),
        }

    async def change(self, data: Any) -> list[Update]:
        """A later message; a new `ALL_QUEUE_STATE` is a snapshot again."""
        category, action, payload = _unwrap(data)
        if category.upper() == "ALL_QUEUE_STATE" or action.upper() == "ALL_DATA":
            return await self.snapshot(data)
        records = _records(payload, "queueId")
        if records is None or not all("queueId" in record for record in records):
            raise NotUnderstood(f"queue-state event {category or '-'}/{action or '-'}")
        updates: list[Update] = []
        for record in records:
            key = self.store.key_of(record)
            if _foreign(self.store, key, record, self.queue_ids):
                continue
            state, whole = self.store.merged(key, record)
            self.store.put(key, whole)
            updates.append(QueueStateChanged(state))
        return updates


class CounterDecoder:
    """Turns the counters feed's messages into counter updates (merged by counterId)."""

    feed = Feed.COUNTERS
    path = "/counters/sse"

    def __init__(self, counter_ids: Sequence[str], langs: Sequence[str]) -> None:
        self.counter_ids = list(counter_ids)
        self.langs = list(langs)
        self.store: RecordStore[Counter] = RecordStore(
            Counter, "counterId", "counter", standalone=("infos",)
        )

    def params(self) -> dict[str, str]:
        """Query of the SSE route."""
        return {"countersId": ",".join(self.counter_ids), "langs": ",".join(self.langs)}

    async def snapshot(self, data: Any) -> list[Update]:
        """The first message: the counters keyed by id."""
        _, _, payload = _unwrap(data)
        if _records(payload, "counterId") is None:
            raise NotUnderstood("counters first message")
        counters = keyed(Counter, payload, "counter_id")
        self.store.replace(counters, _raw_by_id(payload, "counterId"))
        return [CountersSnapshot(counters)]

    def records(self) -> dict[str, Any]:
        """The counters known now, keyed by id (the feed's first message)."""
        return dict(self.store.records)

    async def change(self, data: Any) -> list[Update]:
        """A later message: one counter or several (a map keyed by id merges each)."""
        category, action, payload = _unwrap(data)
        records = _records(payload, "counterId")
        if records is None or not all("counterId" in record for record in records):
            raise NotUnderstood(f"counters event {category or '-'}/{action or '-'}")
        updates: list[Update] = []
        for record in records:
            key = self.store.key_of(record)
            if _foreign(self.store, key, record, self.counter_ids):
                continue
            counter, whole = self.store.merged(key, record)
            self.store.put(key, whole)
            updates.append(CounterChanged(counter))
        return updates


def _foreign(
    store: RecordStore[Any], key: str, record: Mapping[str, Any], followed: Sequence[str]
) -> bool:
    """True for a partial update of an id this screen does not follow: dropped (a whole one still
    reaches the board, which may learn of a new queue from it)."""
    if key in store or key in followed:
        return False
    return not store.stands_alone(store.raw(record))
