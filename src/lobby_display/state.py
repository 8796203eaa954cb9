"""The last board, saved atomically in the state directory and shown again after a restart.

`BoardStore` writes it when it changed (at most every `SAVE_INTERVAL_SECONDS`, and at a clean
stop) and reads it back at start, every part out of date until its feed is live; a file it
cannot use is ignored with a log line.
"""

from __future__ import annotations

import json
import logging
import threading
from datetime import datetime
from pathlib import Path
from typing import Annotated, Any, Final, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PlainSerializer,
    ValidationError,
)

from lobby_display.board import (
    Board,
    BoardMemory,
    BoardSettings,
    RememberedCall,
    WaitingCount,
)
from lobby_display.files import (
    FileRefused,
    expected_owners,
    private_directory,
    read_regular,
    write_atomically,
)
from lobby_display.models import (
    CleanLabel,
    Counter,
    Endpoint,
    Id,
    Names,
    OptionalId,
    Place,
    Queue,
    QueueState,
    clean_text,
    parse_datetime,
)
from lobby_display.updates import Call, Feed, ReferenceData

log = logging.getLogger(__name__)

STATE_FILE: Final = "board.json"
FORMAT: Final = "lobby-display board"
#: Seconds after which an unchanged board is saved again (so "out of date since" stays close).
RESAVE_UNCHANGED_SECONDS: Final = 60.0
#: Least time between two saves of a changed board. A restored board is shown out of date
#: anyway; saving a busy board every few seconds cost more than the rest of a quiet minute.
SAVE_INTERVAL_SECONDS: Final = 30.0
#: A saved board larger than this is not read back (it cannot be ours).
MAX_STATE_BYTES: Final = 20_000_000
#: Version of the saved board's format (`SavedBoard.version`); any other is refused.
STATE_VERSION: Final = 1

#: A date-time in the file: ISO 8601 with its offset, as `datetime.isoformat` writes it.
Moment = Annotated[
    datetime,
    BeforeValidator(parse_datetime),
    PlainSerializer(datetime.isoformat, return_type=str, when_used="json"),
]


class _Saved(BaseModel):
    """Base of the file's parts: unknown keys ignored (a later version may add some)."""

    model_config = ConfigDict(extra="ignore", frozen=True)


class SavedCount(_Saved):
    """Waiting tickets and people of one queue, counted from its tickets."""

    tickets: int
    people: int
    by_type: dict[Id, tuple[int, int]] = Field(default_factory=dict)
    """Appointment type id -> [tickets, people]."""


class SavedCall(_Saved):
    """A listed call."""

    ticket_id: Id
    label: CleanLabel = ""
    queue_id: Id = ""
    endpoint_id: OptionalId = None
    counter_names: Names = Field(default_factory=dict)
    ticket_counter_names: Names = Field(default_factory=dict)
    """The endpoint's name as the ticket gave it."""
    called_at: Moment
    recall: int = 0
    seen_at: Moment | None = None
    """When the board saw the call (absent: its moment)."""


class SavedBoard(_Saved):
    """What the screen showed, as `board.json` keeps it (`Board.memory`, version 1).

    The service's records (place, queues, endpoints, counters, queue states) are kept under
    the wire's own field names.
    """

    version: Literal[1]
    saved_at: Moment
    data_as_of: dict[str, Moment] = Field(default_factory=dict)
    """Feed name -> when its part was last current (absent: `saved_at`)."""
    had_tickets: bool = False
    """A tickets snapshot had come: `waiting_from_tickets` holds counts worth showing."""
    place: Place | None = None
    queues: dict[str, Queue] = Field(default_factory=dict)
    endpoints: dict[str, Endpoint] = Field(default_factory=dict)
    reference_counters: dict[str, Counter] = Field(default_factory=dict)
    queue_states: dict[str, QueueState] = Field(default_factory=dict)
    counters: dict[str, Counter] = Field(default_factory=dict)
    ticket_queue_names: dict[Id, Names] = Field(default_factory=dict)
    ticket_type_names: dict[Id, dict[Id, Names]] = Field(default_factory=dict)
    waiting_from_tickets: dict[Id, SavedCount] = Field(default_factory=dict)
    seen_calls: dict[Id, int] = Field(default_factory=dict)
    """Ticket id -> highest call number seen (the tickets still called)."""
    recent_calls: list[SavedCall] = Field(default_factory=list)
    """Newest first."""

    @classmethod
    def of(cls, memory: BoardMemory, saved_at: datetime) -> SavedBoard:
        """The file's form of what a board kept at `saved_at`."""
        reference = memory.reference
        return cls(
            version=STATE_VERSION,
            saved_at=saved_at,
            data_as_of={feed.value: moment for feed, moment in memory.data_as_of.items()},
            had_tickets=memory.waiting_from_tickets is not None,
            place=reference.place,
            queues=dict(reference.queues),
            endpoints=dict(reference.endpoints),
            reference_counters=dict(reference.counters),
            queue_states=dict(memory.queue_states),
            counters=dict(memory.counters),
            ticket_queue_names={
                key: dict(names) for key, names in memory.ticket_queue_names.items()
            },
            ticket_type_names={
                key: {type_id: dict(names) for type_id, names in by_type.items()}
                for key, by_type in memory.ticket_type_names.items()
            },
            waiting_from_tickets={
                key: SavedCount(
                    tickets=count.tickets, people=count.people, by_type=dict(count.by_type)
                )
                for key, count in (memory.waiting_from_tickets or {}).items()
            },
            seen_calls=dict(memory.seen_calls),
            recent_calls=[_saved_call(remembered) for remembered in memory.recent_calls],
        )

    def memory(self) -> BoardMemory:
        """What the board is to show again (`Board.from_memory`)."""
        return BoardMemory(
            data_as_of={feed: self.data_as_of.get(feed.value, self.saved_at) for feed in Feed},
            reference=ReferenceData(
                place=self.place,
                queues={queue.queue_id: queue for queue in self.queues.values()},
                endpoints={endpoint.endpoint_id: endpoint for endpoint in self.endpoints.values()},
                counters={
                    counter.counter_id: counter for counter in self.reference_counters.values()
                },
            ),
            queue_states=dict(self.queue_states),
            counters=dict(self.counters),
            ticket_queue_names=self.ticket_queue_names,
            ticket_type_names=self.ticket_type_names,
            waiting_from_tickets=(
                {
                    key: WaitingCount(count.tickets, count.people, count.by_type)
                    for key, count in self.waiting_from_tickets.items()
                }
                if self.had_tickets
                else None
            ),
            seen_calls=self.seen_calls,
            recent_calls=tuple(_remembered_call(saved) for saved in self.recent_calls),
        )

    def restore(self, settings: BoardSettings, now: datetime) -> Board:
        """A board showing this, out of date until its feeds are live again."""
        return Board.from_memory(settings, self.memory(), now)

    def to_json(self) -> str:
        """The JSON text of this board (the records under the wire's names)."""
        return self.model_dump_json(by_alias=True)


class SavedFile(_Saved):
    """The whole `board.json`: whose board, when it was saved, the board."""

    format: Literal["lobby-display board"]
    place_id: str
    saved_at: Moment
    board: SavedBoard


def _saved_call(remembered: RememberedCall) -> SavedCall:
    call = remembered.call
    return SavedCall(
        ticket_id=call.ticket_id,
        label=call.label,
        queue_id=call.queue_id,
        endpoint_id=call.endpoint_id,
        counter_names=dict(call.counter_names),
        ticket_counter_names=dict(remembered.ticket_counter_names),
        called_at=call.called_at,
        recall=call.recall,
        seen_at=remembered.seen_at,
    )


def _remembered_call(saved: SavedCall) -> RememberedCall:
    call = Call(
        ticket_id=saved.ticket_id,
        label=saved.label,
        queue_id=saved.queue_id,
        endpoint_id=saved.endpoint_id,
        counter_names=saved.counter_names,
        called_at=saved.called_at,
        recall=saved.recall,
        # A restored call has been announced already, or is too old to be.
        announce=False,
    )
    return RememberedCall(call, saved.seen_at or saved.called_at, saved.ticket_counter_names)


class BoardStore:
    """Saves and restores the board of one place in `directory`."""

    def __init__(
        self, directory: Path, place_id: str, min_interval: float = SAVE_INTERVAL_SECONDS
    ) -> None:
        self.path = directory / STATE_FILE
        self.place_id = place_id
        self.min_interval = min_interval
        self._saved_at: datetime | None = None
        self._saved_revision: int | None = None
        self._failed = False
        self._writing: threading.Thread | None = None

    def load(self, settings: BoardSettings, now: datetime) -> Board | None:
        """The saved board, marked out of date; None when there is none that can be trusted."""
        try:
            # Not a link, a FIFO, a device, another user's file or a huge one: those are
            # refused at once (a FIFO would hang the start).
            directory = private_directory(self.path.parent, create=False)
            read = read_regular(
                self.path,
                limit=MAX_STATE_BYTES,
                what="a saved board",
                follow_links=False,
                owners=expected_owners(directory),
            )
            data: Any = json.loads(read.data.decode("utf-8"))
        except FileNotFoundError:
            return None
        except FileRefused as refused:
            log.error("ignored the saved board: %s", refused)
            return None
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
            log.warning("ignored the saved board %s: unreadable (%s)", self.path, _why(error))
            return None
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            log.warning("ignored the saved board %s: not a lobby-display board", self.path)
            return None
        if data.get("place_id") != self.place_id:
            log.warning("ignored the saved board %s: it is another place's", self.path)
            return None
        try:
            saved = SavedFile.model_validate(data)
        except ValidationError as error:
            log.warning("ignored the saved board %s: %s", self.path, _summary(error))
            return None
        log.info("showing the board saved at %s until the feeds are live", saved.saved_at)
        return saved.board.restore(settings, now)

    def save(self, board: Board, now: datetime, *, force: bool = False, wait: bool = True) -> bool:
        """Write the board if it changed and `min_interval` has passed since the last write
        (an unchanged board every `RESAVE_UNCHANGED_SECONDS`), or at once with `force`.

        The board is read on the caller's thread (it is the UI's); without `wait` it is turned into
        JSON, written and synced on a thread of its own, so the screen never waits for the disk (a
        sync took over 0.1 s here, every 30 s, and held back every call drawn meanwhile); a save
        while the last one is still being written is skipped. Returns True when written (or handed
        to the writing thread), for its owner only (0600). Failures (a full disk, a read-only
        directory, one others may write to) are logged once and never raise: the screen matters more
        than the file.
        """
        if not wait and self._writing is not None and self._writing.is_alive():
            return False
        self.flush()
        if not force and self._saved_at is not None:
            since = (now - self._saved_at).total_seconds()
            unchanged = board.revision == self._saved_revision
            if since < self.min_interval or (unchanged and since < RESAVE_UNCHANGED_SECONDS):
                return False
        # New dicts and tuples of frozen records (`Board.memory`): the board may change while
        # they are turned into JSON and written.
        memory = board.memory(now)
        self._saved_at, self._saved_revision = now, board.revision
        if wait:
            return self._write(memory, now)
        self._writing = threading.Thread(
            target=self._write, args=(memory, now), name="board-save", daemon=True
        )
        self._writing.start()
        return True

    def flush(self) -> None:
        """Wait for a save under way (before a stop, or a test that reads the file)."""
        if self._writing is not None:
            self._writing.join()
            self._writing = None

    def _write(self, memory: BoardMemory, now: datetime) -> bool:
        saved = SavedFile(
            format=FORMAT, place_id=self.place_id, saved_at=now, board=SavedBoard.of(memory, now)
        )
        try:
            write_atomically(self.path, saved.model_dump_json(by_alias=True))
        except OSError as error:
            if not self._failed:
                why = str(error) if isinstance(error, FileRefused) else _why(error)
                log.warning("cannot save the board in %s: %s", self.path.parent, why)
            self._failed = True
            self._saved_at = None  # try again at the next save
            return False
        self._failed = False
        return True


def _summary(error: ValidationError) -> str:
    """What does not fit, in one line that quotes no value of the file."""
    details = error.errors(include_input=False, include_url=False)
    where = ".".join(clean_text(part, 40) for part in details[0]["loc"]) or "the file"
    more = f" (and {len(details) - 1} more)" if len(details) > 1 else ""
    return f"not a saved board of version {STATE_VERSION}: {where}: {details[0]['msg']}{more}"


def _why(error: BaseException) -> str:
    if isinstance(error, OSError) and error.strerror:
        return error.strerror
    return type(error).__name__
