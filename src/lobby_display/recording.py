"""Recordings of a place's feeds: the format (gzip JSON lines), its writer and reader, and the
kiosk's flight recorder.

Each feed message and REST answer with its arrival time, never a key, token or credential; the
reader is tolerant. The format and the flight recorder: docs/operations.md.
"""

from __future__ import annotations

import contextlib
import gzip
import json
import logging
import os
import queue
import re
import threading
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import IO, TYPE_CHECKING, Annotated, Any, Final, Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from lobby_display import __version__
from lobby_display.redaction import may_hold_secret, redact
from lobby_display.updates import Clock, Feed, utc_now

if TYPE_CHECKING:
    from lobby_display.config import Settings

log = logging.getLogger(__name__)

FORMAT: Final = "lobby-display-recording"
VERSION: Final = 1
#: Query parameters and JSON fields that hold a secret: never written.
SECRET_NAMES: Final = frozenset(
    {"key", "apikey", "api_key", "token", "access_token", "jwttoken", "private_key", "password"}
)
#: The flight recorder's folder in the state directory, and its files' names.
FLIGHT_FOLDER: Final = "flight"
FLIGHT_PREFIX: Final = "flight-"
FLIGHT_SUFFIX: Final = ".jsonl.gz"
_FLIGHT_NAME: Final = re.compile(r"^flight-\d{8}T\d{6}(?:\.\d{6})?Z(?:-\d+)?\.jsonl\.gz$")
#: Default byte cap of the flight recorder (all its files together).
DEFAULT_FLIGHT_BYTES: Final = 16 * 1024 * 1024
#: REST routes whose answers the flight recorder does not repeat in each file (the tickets'
#: checkpoint holds them all).
_TICKET_ROUTES: Final = "/queues/tickets/"
#: Seconds between flushes of a recording to disk (a line older than that survives a crash).
FLUSH_EVERY: Final = 1.0
_FLUSH_DELTA: Final = timedelta(seconds=FLUSH_EVERY)

# --- the lines --------------------------------------------------------------------------------


class _Line(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)

    at: datetime
    """When it arrived (UTC)."""


class Start(_Line):
    """The first line: what was recorded, and how."""

    kind: Literal["start"] = "start"
    format: str = FORMAT
    version: int = VERSION
    recorder: str = f"lobby-display {__version__}"
    service: str = ""
    """The service's address, scheme and host only."""
    place: str
    langs: list[str] = Field(default_factory=list)
    queues: list[str] = Field(default_factory=list)
    """Queues configured (`[place] queues`); empty: every queue of the place."""
    counters: list[str] = Field(default_factory=list)
    """Counters configured (`[place] counters`); empty: every counter of the place."""


class Message(_Line):
    """One message of a feed, its data as the service sent it."""

    kind: Literal["message"] = "message"
    feed: Feed
    first: bool = False
    """The first message of a connection: a snapshot of the feed."""
    checkpoint: bool = False
    """Not sent by the service: the feed's records as the display knew them when a flight
    recorder file began (a snapshot, so that each file replays on its own)."""
    data: str


class Answer(_Line):
    """The JSON answer of one REST route the feeds used."""

    kind: Literal["answer"] = "answer"
    path: str
    """Relative to `/v1`, with a leading slash (`/places/P1/queues`)."""
    query: dict[str, str] = Field(default_factory=dict)
    body: Any = None


Line = Annotated[Start | Message | Answer, Field(discriminator="kind")]
Event = Message | Answer
_LINE: Final[TypeAdapter[Start | Message | Answer]] = TypeAdapter(Line)


def clean_query(query: Mapping[str, str]) -> dict[str, str]:
    """`query` without any parameter that carries a secret (the API key is `key`)."""
    return {name: value for name, value in query.items() if name.lower() not in SECRET_NAMES}


def mask(text: str) -> str:
    """`text` with every secret masked (`redaction.redact`, skipped when none can be in it)."""
    return redact(text) if may_hold_secret(text) else text


def scrub(value: Any) -> Any:
    """A JSON value with secret fields dropped and every string's secrets masked."""
    if isinstance(value, str):
        return mask(value)
    if isinstance(value, Mapping):
        return {
            str(name): scrub(item)
            for name, item in value.items()
            if str(name).lower() not in SECRET_NAMES
        }
    if isinstance(value, list | tuple):
        return [scrub(item) for item in value]
    return value


def service_address(url: str) -> str:
    """Scheme and host of a service URL: no user, password, path or query."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{host}{port}" if parts.scheme else ""


def dump_line(line: Start | Message | Answer) -> bytes:
    """One line of a recording, newline included."""
    return line.model_dump_json().encode() + b"\n"


# --- writing ----------------------------------------------------------------------------------


class RecordingWriter:
    """A recording file being written: gzip, mode 0600 (tickets may carry people's names)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        self._raw: IO[bytes] = os.fdopen(descriptor, "wb")
        self._gzip = gzip.GzipFile(fileobj=self._raw, mode="wb", compresslevel=6)
        self.pending = 0
        """Bytes written since the last flush (not yet counted in `size`)."""
        self.lines = 0

    def write(self, line: Start | Message | Answer | bytes) -> int:
        """Write one line (or its `dump_line` bytes); returns its size before compression."""
        data = line if isinstance(line, bytes) else dump_line(line)
        self._gzip.write(data)
        self.pending += len(data)
        self.lines += 1
        return len(data)

    def flush(self) -> None:
        """Everything written so far readable from the file (a sync flush of the compressor)."""
        self._gzip.flush(zlib.Z_SYNC_FLUSH)
        self._raw.flush()
        self.pending = 0

    @property
    def size(self) -> int:
        """Bytes on disk at the last flush."""
        return self._raw.tell()

    def close(self) -> None:
        """Finish the gzip stream and close the file."""
        try:
            self._gzip.close()
        finally:
            self._raw.close()


class Recorder:
    """The feeds' observer: turns what arrives into lines (see `feeds.FeedObserver`)."""

    def __init__(self, clock: Clock = utc_now) -> None:
        self.clock = clock

    def message(self, feed: Feed, data: str, first: bool) -> None:
        """A feed's message arrived (its data as sent)."""
        self.write(Message(at=self.clock(), feed=feed, first=first, data=mask(data)))

    def follow(self, feed: Feed, records: Callable[[], Any]) -> None:
        """A feed's connection is live: `records()` gives its records now, as a first message."""

    def answer(self, path: str, query: Mapping[str, str], body: Any) -> None:
        """A REST route answered `body` (JSON)."""
        self.write(
            Answer(
                at=self.clock(),
                path="/" + path.lstrip("/"),
                query=clean_query(query),
                body=scrub(body),
            )
        )

    def write(self, line: Message | Answer) -> None:
        """Keep one line (subclasses)."""
        raise NotImplementedError


class FileRecorder(Recorder):
    """Records into one file (`lobby-display record`)."""

    def __init__(
        self,
        path: Path,
        start: Start,
        clock: Clock = utc_now,
        on_failure: Callable[[OSError], None] | None = None,
    ) -> None:
        super().__init__(clock)
        self.writer = RecordingWriter(path)
        self.writer.write(start)
        self.writer.flush()
        self._flushed_at = clock()
        self.counts: dict[str, int] = {"message": 0, "answer": 0}
        self.failure: OSError | None = None
        """Why the file could not be written (a full disk), once it happened; nothing more is
        written then, and `on_failure` was called."""
        self.on_failure = on_failure

    def write(self, line: Message | Answer) -> None:
        if self.failure is not None:
            return
        try:
            self.writer.write(line)
            if (line.at - self._flushed_at).total_seconds() >= FLUSH_EVERY:
                self.writer.flush()
                self._flushed_at = line.at
        except OSError as error:
            self.failure = error
            if self.on_failure is not None:
                self.on_failure(error)
            return
        self.counts[line.kind] += 1

    def close(self) -> None:
        """Finish the file (raises OSError when it cannot be)."""
        self.writer.close()


# --- reading ----------------------------------------------------------------------------------


@dataclass
class Recording:
    """A recording read back: its start line and its messages and answers, in order."""

    start: Start | None = None
    lines: list[Event] = field(default_factory=list)
    skipped: int = 0
    """Lines that could not be read (each logged with its file and number)."""

    @property
    def began(self) -> datetime | None:
        """When the first line arrived."""
        if self.start is not None:
            return self.start.at
        return self.lines[0].at if self.lines else None

    @property
    def seconds(self) -> float:
        """How long the recording lasts."""
        began = self.began
        if began is None or not self.lines:
            return 0.0
        return max(0.0, (self.lines[-1].at - began).total_seconds())


class RecordingError(Exception):
    """A recording that cannot be read at all (no such file, not a recording)."""


def read_recording(source: Path | Iterable[Path]) -> Recording:
    """Read a recording file, a flight recorder's folder, or several files in order.

    Bad lines are skipped and logged (file and line number); raises `RecordingError` when
    nothing could be read or a file cannot be opened.
    """
    if isinstance(source, Path):
        paths = flight_paths(source) if source.is_dir() else [source]
        if source.is_dir() and not paths:
            raise RecordingError(f"{source}: no flight recorder files ({FLIGHT_PREFIX}*)")
    else:
        paths = list(source)
    recording = Recording()
    for path in paths:
        for number, text in _lines_of(path):
            try:
                line = _LINE.validate_json(text)
            except ValidationError as error:
                recording.skipped += 1
                problem = error.errors()[0]
                where = ".".join(str(part) for part in problem.get("loc", ()))
                log.warning(
                    "%s: line %d skipped: %s%s",
                    path,
                    number,
                    problem.get("msg", "unreadable"),
                    f" ({where})" if where else "",
                )
                continue
            if isinstance(line, Start):
                if line.format != FORMAT or line.version > VERSION:
                    raise RecordingError(
                        f"{path}: line {number}: a {line.format!r} file of version "
                        f"{line.version}; this program reads {FORMAT!r} up to version {VERSION}"
                    )
                if recording.start is None:
                    recording.start = line
                continue
            recording.lines.append(line)
    if recording.start is None and not recording.lines:
        raise RecordingError(f"{', '.join(map(str, paths))}: no recording lines in it")
    recording.lines.sort(key=lambda line: line.at)
    return recording


def _lines_of(path: Path) -> Iterator[tuple[int, bytes]]:
    try:
        with path.open("rb") as handle:
            compressed = handle.read(2) == b"\x1f\x8b"
    except OSError as error:
        raise RecordingError(f"{path}: cannot read ({error.strerror})") from None
    number = 0
    try:
        with gzip.open(path, "rb") if compressed else path.open("rb") as stream:
            for number, text in enumerate(stream, start=1):
                if text.strip():
                    yield number, text
    except EOFError:
        # Written up to a flush and never closed (a kiosk stopped hard): what came is kept.
        log.warning("%s: ends early after line %d (not closed); read what it holds", path, number)
    except (OSError, zlib.error) as error:
        log.warning("%s: unreadable after line %d (%s)", path, number, error)


# --- the flight recorder ----------------------------------------------------------------------


def flight_directory(state_dir: Path) -> Path:
    """Where the flight recorder keeps its files."""
    return state_dir / FLIGHT_FOLDER


def flight_paths(directory: Path) -> list[Path]:
    """The flight recorder files in `directory`, oldest first."""
    try:
        names = [entry for entry in directory.iterdir() if _FLIGHT_NAME.match(entry.name)]
    except OSError:
        return []
    return sorted(names, key=lambda path: path.name)


def flight_files(state_dir: Path) -> list[Path]:
    """The flight recorder's files for a state directory, oldest first (replayable together
    or each alone: `lobby-display replay FILE`)."""
    return flight_paths(flight_directory(state_dir))


def _flight_name(at: datetime) -> str:
    return f"{FLIGHT_PREFIX}{at.astimezone(UTC).strftime('%Y%m%dT%H%M%S.%fZ')}{FLIGHT_SUFFIX}"


@dataclass(frozen=True, slots=True)
class _NewFile:
    """The writer's order to start a new file (and what it begins with)."""

    at: datetime
    generation: int
    answers: list[bytes]
    records: list[tuple[Feed, Any]]


class FlightRecorder(Recorder):
    """The kiosk's last minutes of feeds, in files of a few minutes, within a byte cap.

    A file is closed when it covers `chunk` of time or could reach a quarter of the cap; files
    whose time is past the window, then the oldest ones while the closed files hold more than
    three quarters of the cap, are deleted: the files together never exceed `max_bytes`. Each
    file starts with the start line, the latest answer of each REST route (the place, its
    names), and a checkpoint of each live feed (its records as the display knows them then, as
    a first message), so that it replays on its own.

    The feeds call it on the screen's loop: there it only serialises the line and decides when
    a file ends; compression, the checkpoints' JSON, the files and their pruning are the work of
    a thread of its own (started at the first line), so that none of it holds the screen.
    """

    def __init__(
        self,
        state_dir: Path,
        start: Start,
        *,
        minutes: float = 30.0,
        max_bytes: int = DEFAULT_FLIGHT_BYTES,
        clock: Clock = utc_now,
    ) -> None:
        super().__init__(clock)
        self.directory = flight_directory(state_dir)
        self.start = start
        self.window = timedelta(minutes=minutes)
        self.chunk = max(timedelta(seconds=30), self.window / 6)
        self.max_bytes = max_bytes
        self.chunk_bytes = max_bytes // 4
        self._followed: dict[Feed, Callable[[], Any]] = {}
        self._answers: dict[tuple[str, tuple[tuple[str, str], ...]], bytes] = {}
        """The latest answer of each route and query (ticket pages aside): every file repeats
        them, so that the names and the place's lists come with it."""
        # The loop's side: the file being written, as far as the loop knows.
        self._generation = 0
        self._opened_at: datetime | None = None
        self._queued = 0
        """Bytes (before compression) of the lines sent to the current file."""
        self._retry_at: datetime | None = None
        # The thread's side, read by the loop: (generation, bytes on disk, `_queued` then).
        self._on_disk: tuple[int, int, int] = (0, 0, 0)
        self._broken = False
        self._jobs: queue.Queue[_NewFile | tuple[datetime, bytes] | None] = queue.Queue()
        self._thread: threading.Thread | None = None
        self._writer: RecordingWriter | None = None
        self._flushed_at: datetime | None = None
        self._generation_on_disk = 0
        self._queued_on_disk = 0
        """Bytes of lines written into the thread's file (the loop's `_queued` for it)."""
        self._warned = False
        self._closed = False

    def follow(self, feed: Feed, records: Callable[[], Any]) -> None:
        self._followed[feed] = records

    # --- the loop's side -------------------------------------------------------------------------

    def write(self, line: Message | Answer) -> None:
        if self._closed:
            return  # a last message while the kiosk stops
        try:
            data = dump_line(line)
            if isinstance(line, Answer) and not line.path.startswith(_TICKET_ROUTES):
                self._answers[(line.path, tuple(sorted(line.query.items())))] = data
            if len(data) + 1024 > self.chunk_bytes:
                log.warning(
                    "flight recorder: a %s of %d bytes is too big to keep", line.kind, len(data)
                )
                return
            if self._file_ends(line.at, len(data)):
                self._new_file(line.at)
            self._queued += len(data)
            self._send((line.at, data))
        except Exception as error:
            # Never the feeds' problem (they call this): said once.
            self._warn(error)

    def _file_ends(self, now: datetime, coming: int) -> bool:
        if self._opened_at is None:
            return True
        if self._broken:
            # Tried again at most every 10 s (a full disk, say).
            return self._retry_at is None or now >= self._retry_at
        if now - self._opened_at >= self.chunk:
            return True
        generation, size, queued_then = self._on_disk
        if generation != self._generation:
            # The thread has not begun the file yet: at most half a file of what it begins with.
            size, queued_then = self.chunk_bytes // 2, 0
        # Compressed output never exceeds its input by more than a few bytes per block: the
        # size at the last flush plus what was sent since is a bound of the size on disk.
        return size + (self._queued - queued_then) + coming + 512 > self.chunk_bytes

    def _new_file(self, now: datetime) -> None:
        self._generation += 1
        self._opened_at, self._queued = now, 0
        self._broken, self._retry_at = False, now + timedelta(seconds=10)
        # The records as they are now (taken here, where the feeds change them); written out
        # by the thread (a stored record is replaced, never changed in place).
        records = [(feed, records()) for feed, records in self._followed.items()]
        self._send(_NewFile(now, self._generation, list(self._answers.values()), records))

    def _send(self, job: _NewFile | tuple[datetime, bytes]) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="flight recorder", daemon=True)
            self._thread.start()
        self._jobs.put(job)

    def _warn(self, error: BaseException) -> None:
        if not self._warned:
            self._warned = True
            log.warning("flight recorder: cannot write in %s: %s", self.directory, error)

    def drain(self) -> None:
        """Wait until the thread has written everything sent so far (tests)."""
        if self._thread is not None:
            self._jobs.join()

    def close(self) -> None:
        """Finish the current file and stop the thread; nothing is recorded after."""
        self._closed = True
        if self._thread is not None:
            self._jobs.put(None)
            self._thread.join(10)
            self._thread = None

    # --- the thread's side -----------------------------------------------------------------------

    def _run(self) -> None:
        while True:
            # Asleep until the next line, but a second at most while some wait to be flushed.
            pending = self._writer is not None and self._writer.pending > 0
            try:
                job = self._jobs.get(timeout=FLUSH_EVERY if pending else None)
            except queue.Empty:
                self._flush()
                continue
            try:
                if job is None:
                    self._finish(self.clock())
                    return
                if isinstance(job, _NewFile):
                    self._begin(job)
                elif self._writer is not None:
                    self._queued_on_disk += self._writer.write(job[1])
                    if self._flushed_at is None or job[0] - self._flushed_at >= _FLUSH_DELTA:
                        self._flush()
            except Exception as error:
                self._warn(error)
                self._broken = True
                self._drop_writer()
            finally:
                self._jobs.task_done()

    def _flush(self) -> None:
        writer = self._writer
        if writer is None or writer.pending == 0:
            return
        try:
            writer.flush()
        except OSError as error:
            self._warn(error)
            self._broken = True
            self._drop_writer()
            return
        self._flushed_at = self.clock()
        self._on_disk = (self._generation_on_disk, writer.size, self._queued_on_disk)

    def _begin(self, job: _NewFile) -> None:
        self._finish(job.at)
        self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        self.prune(job.at)
        writer = RecordingWriter(self.directory / _flight_name(job.at))
        self._writer, self._flushed_at = writer, None
        self._generation_on_disk, self._queued_on_disk = job.generation, 0
        writer.write(self.start.model_copy(update={"at": job.at}))
        for answer in job.answers:
            if writer.pending + len(answer) < self.chunk_bytes // 4:
                writer.write(answer)
        for feed, records in job.records:
            checkpoint = Message(
                at=job.at,
                feed=feed,
                first=True,
                checkpoint=True,
                data=mask(json.dumps(records, ensure_ascii=False, separators=(",", ":"))),
            )
            data = dump_line(checkpoint)
            if writer.pending + len(data) < self.chunk_bytes // 2:
                writer.write(data)
            else:
                log.warning("flight recorder: the %s feed's records are too big to keep", feed)
        writer.flush()
        self._on_disk = (job.generation, writer.size, 0)

    def _finish(self, now: datetime) -> None:
        writer, self._writer = self._writer, None
        if writer is not None:
            writer.close()
            # Its modification time says when it ended, on the recorder's clock (pruning reads it).
            stamp = now.timestamp()
            os.utime(writer.path, (stamp, stamp))

    def _drop_writer(self) -> None:
        writer, self._writer = self._writer, None
        if writer is not None:
            with contextlib.suppress(OSError):
                writer.close()

    def prune(self, now: datetime) -> None:
        """Delete the closed files that are past the window or over the byte cap."""
        closed = flight_paths(self.directory)
        sizes = {}
        for path in closed:
            try:
                sizes[path] = path.stat().st_size
            except OSError:
                sizes[path] = 0
        # A file covers the time until it was closed (its modification time) or the next one
        # started: it is past the window when that is before the window.
        starts = [_name_time(path) for path in closed]
        keep = list(closed)
        for index, path in enumerate(closed):
            following = starts[index + 1] if index + 1 < len(closed) else None
            ended = datetime.fromtimestamp(_mtime(path), UTC)
            if following is not None:
                ended = min(ended, following)
            began = starts[index]
            # A file from the future was written while the clock was ahead (a box without a
            # battery-backed clock): its name would keep it first in line forever.
            ahead = began is not None and began > now + timedelta(minutes=1)
            if ended < now - self.window or ahead:
                self._delete(path)
                keep.remove(path)
        budget = self.max_bytes - self.chunk_bytes
        while keep and sum(sizes[path] for path in keep) > budget:
            self._delete(keep.pop(0))

    def _delete(self, path: Path) -> None:
        try:
            path.unlink()
        except FileNotFoundError:
            pass
        except OSError as error:
            log.warning("flight recorder: cannot delete %s: %s", path, error.strerror)


def _name_time(path: Path) -> datetime | None:
    stamp = path.name.removeprefix(FLIGHT_PREFIX).split("Z")[0]
    for shape in ("%Y%m%dT%H%M%S.%f", "%Y%m%dT%H%M%S"):
        try:
            return datetime.strptime(stamp, shape).replace(tzinfo=UTC)
        except ValueError:
            continue
    return None


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


def start_line(
    *,
    place: str,
    service_url: str = "",
    langs: Iterable[str] = (),
    queues: Iterable[str] = (),
    counters: Iterable[str] = (),
    at: datetime | None = None,
) -> Start:
    """The start line of a recording of `place`."""
    return Start(
        at=at or utc_now(),
        service=service_address(service_url),
        place=place,
        langs=list(langs),
        queues=list(queues),
        counters=list(counters),
    )


def flight_recorder(settings: Settings, clock: Clock = utc_now) -> FlightRecorder | None:
    """The kiosk's flight recorder as `[state]` asks (None when `record_minutes` is 0)."""
    state = settings.state
    if state.record_minutes <= 0:
        return None
    start = start_line(
        place=settings.place.id,
        service_url=settings.service.display_url,
        langs=settings.display.locales,
        queues=settings.place.queues,
        counters=settings.place.counters,
        at=clock(),
    )
    return FlightRecorder(
        settings.state_directory(),
        start,
        minutes=state.record_minutes,
        max_bytes=int(state.record_max_mb * 1024 * 1024),
        clock=clock,
    )
