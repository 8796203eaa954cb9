"""The feeds in a process of their own: the kiosk's source of updates on two cores or more.

The child (`python -m lobby_display.feed_process`) reads its job (`FeedJob`) on its input, runs
`source.feeds_source` with the flight recorder and writes each update, log record and activity
count to its output, which the screen emits as the in-process source would (architecture.md)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import pickle
import signal
import struct
import sys
import threading
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import IO, TYPE_CHECKING, Any, Final

from lobby_display.activity import ACTIVITY, Activity
from lobby_display.children import child_environment
from lobby_display.config import Settings
from lobby_display.recording import flight_recorder
from lobby_display.redaction import redact
from lobby_display.service import QUIET_LOGGERS
from lobby_display.source import Emit, feeds_source
from lobby_display.updates import Feed, FeedHealth, FeedStatus, Update

if TYPE_CHECKING:
    from lobby_display.app import Source

log = logging.getLogger(__name__)

#: The child's command: this interpreter, this module.
CHILD_ARGV: Final = (sys.executable, "-m", "lobby_display.feed_process")
#: A message's length prefix (big-endian, unsigned 32 bits).
_LENGTH: Final = struct.Struct(">I")
#: Kinds of message the child sends.
UPDATE: Final = "update"
LOG: Final = "log"
ACTIVITY_KIND: Final = "activity"
#: Seconds between the child's activity reports (when something changed).
ACTIVITY_EVERY: Final = 1.0
#: Seconds the child has to end after its input closes, then after SIGTERM, before SIGKILL.
STOP_GRACE: Final = 2.0
#: Largest message accepted from the child (a big place's first snapshot is large).
MAX_MESSAGE: Final = 256 * 1024 * 1024


@dataclass(frozen=True)
class FeedJob:
    """What the child runs: the kiosk's feeds for these settings."""

    settings: Settings
    known_ids: tuple[Sequence[str], Sequence[str]] = ((), ())
    """The queue and counter ids of the saved board (`kiosk.saved_ids`)."""
    record: bool = True
    """Whether the child keeps the flight recorder (as `[state]` asks)."""


class FeedProcessEnded(Exception):
    """The feeds' process ended (or could not start); the source is started again."""


# --- the screen's side ---------------------------------------------------------------------------


def feed_process_source(
    settings: Settings,
    *,
    known_ids: tuple[Sequence[str], Sequence[str]] = ((), ()),
    record: bool = True,
    argv: Sequence[str] = CHILD_ARGV,
    activity: Activity = ACTIVITY,
) -> Source:
    """The app's source of updates: the place's feeds, read by a child process.

    `record`: the child keeps the flight recorder. `activity`: where the child's counts are
    added up (the process's, which `monitoring.Monitor` reads).
    """
    job = FeedJob(settings, (list(known_ids[0]), list(known_ids[1])), record)

    async def source(emit: Emit) -> None:
        try:
            child = await asyncio.create_subprocess_exec(
                *argv,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                # Never the screen's terminal: a word there would be drawn over the board.
                stderr=asyncio.subprocess.DEVNULL,
                env=child_environment(ours=True),
                close_fds=True,
            )
        except OSError as error:
            raise FeedProcessEnded(f"the feeds' process cannot start ({error})") from error
        assert child.stdin is not None and child.stdout is not None
        try:
            child.stdin.write(pickle.dumps(job, protocol=pickle.HIGHEST_PROTOCOL))
            await child.stdin.drain()
            await _relay(child.stdout, emit, activity)
            code = await child.wait()
            why = f"the feeds' process ended (exit status {code})"
        except (OSError, MessageError) as error:
            why = f"the feeds' process failed ({error})"
        finally:
            await _stop(child)
        _report_ended(emit, why)
        raise FeedProcessEnded(why)

    return source


class MessageError(Exception):
    """A message from the child that cannot be read."""


async def _relay(stream: asyncio.StreamReader, emit: Emit, activity: Activity) -> None:
    """Hand each message of the child's to its place until the child's output ends."""
    unread = bytearray()
    while chunk := await stream.read(1 << 16):
        unread += chunk
        start = 0
        while len(unread) - start >= _LENGTH.size:
            (length,) = _LENGTH.unpack_from(unread, start)
            if length > MAX_MESSAGE:
                raise MessageError(f"a message of {length} bytes")
            end = start + _LENGTH.size + length
            if len(unread) < end:
                break
            message = bytes(unread[start + _LENGTH.size : end])
            start = end
            _take(message, emit, activity)
        del unread[:start]


def _take(message: bytes, emit: Emit, activity: Activity) -> None:
    """One message of the child's: an update to emit, a record to log, activity to add up."""
    try:
        kind, payload = pickle.loads(message)  # noqa: S301 (our own child's, see the docstring)
    except Exception as error:
        raise MessageError(f"unreadable: {type(error).__name__}") from error
    if kind == UPDATE:
        emit(payload)
    elif kind == LOG:
        level, name, text = payload
        logging.getLogger(name).log(level, "%s", text)
    elif kind == ACTIVITY_KIND:
        _add_activity(activity, payload)


def _add_activity(activity: Activity, report: ActivityReport) -> None:
    activity.last_message_at.update(report.last_message_at)
    activity.reconnections.update(report.reconnections)
    activity.key_renewals += report.key_renewals


def _report_ended(emit: Emit, why: str) -> None:
    """Every feed reconnecting, with the reason: the screen shows no data as live meanwhile."""
    now = datetime.now(UTC)
    for feed in Feed:
        emit(FeedHealth(feed=feed, status=FeedStatus.RECONNECTING, at=now, error=why))


async def _stop(child: asyncio.subprocess.Process) -> None:
    """End the child: its input closed, then SIGTERM, then SIGKILL, each after `STOP_GRACE`."""
    if child.stdin is not None:
        child.stdin.close()
    for then in (child.terminate, child.kill, None):
        try:
            await asyncio.wait_for(asyncio.shield(child.wait()), STOP_GRACE)
            return
        except TimeoutError:
            if then is None:
                log.warning("the feeds' process (pid %d) did not end", child.pid)
                return
            with contextlib.suppress(ProcessLookupError):
                then()


# --- the child's side ----------------------------------------------------------------------------


@dataclass
class ActivityReport:
    """What the child's activity gained since its last report."""

    last_message_at: dict[str, datetime] = field(default_factory=dict)
    reconnections: Counter[str] = field(default_factory=Counter)
    key_renewals: int = 0


class Messages:
    """The child's half of the pipe: each message written whole, in order.

    On the child's loop, the messages of one turn (the events of one network read) are written
    together at its end: one write and one wake-up of the screen for all of them. From another
    thread (a library logging), or before the loop runs, a message is written at once.
    """

    def __init__(self, out: IO[bytes]) -> None:
        self._out = out
        self._lock = threading.Lock()
        self._pending = bytearray()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._loop_thread = 0
        self._scheduled = False

    def batch_on(self, loop: asyncio.AbstractEventLoop | None) -> None:
        """Write the messages sent on `loop`'s thread at the end of each of its turns (None:
        each at once, when the loop ends)."""
        self.flush()
        self._loop, self._loop_thread = loop, threading.get_ident()

    def send(self, kind: str, payload: Any) -> None:
        """Send one message (the write blocks while the pipe is full: the screen reads it)."""
        body = pickle.dumps((kind, payload), protocol=pickle.HIGHEST_PROTOCOL)
        with self._lock:
            self._pending += _LENGTH.pack(len(body))
            self._pending += body
            if self._loop is None or threading.get_ident() != self._loop_thread:
                self._write()
            elif not self._scheduled:
                self._scheduled = True
                self._loop.call_soon(self.flush)

    def flush(self) -> None:
        """Write what was sent and not written yet."""
        with self._lock:
            self._scheduled = False
            self._write()

    def _write(self) -> None:
        if self._pending:
            self._out.write(self._pending)
            self._out.flush()
            self._pending.clear()


class ForwardingHandler(logging.Handler):
    """The child's log handler: every record, formatted and with secrets masked, goes to the
    screen's process, which logs it where the display logs."""

    def __init__(self, messages: Messages) -> None:
        super().__init__()
        self._messages = messages

    def emit(self, record: logging.LogRecord) -> None:
        try:
            text = record.getMessage()
            if record.exc_info:
                text += "\n" + logging.Formatter().formatException(record.exc_info)
            self._messages.send(LOG, (record.levelno, record.name, redact(text)))
        except Exception:
            self.handleError(record)


class _ActivityWatch:
    """Sends what `ACTIVITY` gained since the last report."""

    def __init__(self, messages: Messages) -> None:
        self._messages = messages
        self._sent = Activity()

    def report(self) -> None:
        sent = self._sent
        seen = {
            feed: at
            for feed, at in ACTIVITY.last_message_at.items()
            if sent.last_message_at.get(feed) != at
        }
        reconnections = ACTIVITY.reconnections - sent.reconnections
        renewals = ACTIVITY.key_renewals - sent.key_renewals
        if not seen and not reconnections and not renewals:
            return
        self._messages.send(ACTIVITY_KIND, ActivityReport(seen, reconnections, renewals))
        sent.last_message_at.update(seen)
        sent.reconnections.update(reconnections)
        sent.key_renewals = ACTIVITY.key_renewals


async def run_job(job: FeedJob, messages: Messages, stop: asyncio.Event) -> None:
    """Run the job's feeds, sending every update, until `stop` is set."""
    settings = job.settings
    recorder = flight_recorder(settings) if job.record else None
    watch = _ActivityWatch(messages)

    def send(update: Update) -> None:
        messages.send(UPDATE, update)

    async def report_activity() -> None:
        while True:
            await asyncio.sleep(ACTIVITY_EVERY)
            watch.report()

    source = feeds_source(settings, known_ids=job.known_ids, observer=recorder)
    tasks = [asyncio.ensure_future(source(send)), asyncio.ensure_future(report_activity())]
    stopping = asyncio.ensure_future(stop.wait())
    try:
        done, _ = await asyncio.wait([*tasks, stopping], return_when=asyncio.FIRST_COMPLETED)
        for task in done:
            if task is not stopping:
                task.result()  # a failure of the feeds' own ends the child with its reason
    finally:
        for task in [*tasks, stopping]:
            task.cancel()
        await asyncio.gather(*tasks, stopping, return_exceptions=True)
        watch.report()
        if recorder is not None:
            recorder.close()


async def _watch_input(stop: asyncio.Event) -> None:
    """Set `stop` when the screen's process closes the child's input (or dies)."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin.buffer)
    while await reader.read(4096):
        pass
    stop.set()


async def _child(job: FeedJob, messages: Messages) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    messages.batch_on(loop)
    loop.add_signal_handler(signal.SIGTERM, stop.set)
    watching = asyncio.ensure_future(_watch_input(stop))
    try:
        await run_job(job, messages, stop)
    finally:
        watching.cancel()
        messages.batch_on(None)


def main() -> int:
    """The child's program: read the job, run it, send what comes; its exit status."""
    # The screen's signals are the screen's: a Ctrl-C on its terminal reaches this process too.
    for number in (signal.SIGINT, signal.SIGHUP, signal.SIGUSR1, signal.SIGUSR2):
        signal.signal(number, signal.SIG_IGN)
    out = os.fdopen(os.dup(1), "wb")
    # Whatever else writes to standard output (a library's print) must not enter the pipe.
    with open(os.devnull, "wb") as devnull:
        os.dup2(devnull.fileno(), 1)
    messages = Messages(out)
    handler = ForwardingHandler(messages)
    root = logging.getLogger()
    root.addHandler(handler)
    try:
        job = pickle.load(sys.stdin.buffer)  # noqa: S301 (written by the screen's process, our parent)
        if not isinstance(job, FeedJob):
            raise TypeError(f"not a FeedJob: {type(job).__name__}")
    except Exception as error:
        log.error("the feeds' process got no job (%s)", error)
        return 2
    root.setLevel(job.settings.log.level)
    for name in QUIET_LOGGERS:  # as in the screen's process: not sent to be dropped there
        logging.getLogger(name).setLevel(logging.WARNING)
    logging.captureWarnings(True)
    try:
        asyncio.run(_child(job, messages))
    except BrokenPipeError:
        return 0  # the screen's process is gone
    except Exception:
        log.exception("the feeds' process failed")
        return 1
    return 0


if __name__ == "__main__":
    # As `python -m`, this module is `__main__`: the job's pickle names the module's real name.
    from lobby_display import feed_process

    sys.exit(feed_process.main())
