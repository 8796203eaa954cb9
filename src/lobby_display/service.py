"""systemd's side of the kiosk: sd_notify messages (ready, status, watchdog) and the logs.

Logs go to the configured file, the journal or standard error, never onto the screen (under both
units Textual draws on standard error), with secrets masked. Signals, the PID file and reloads
are `process.py`'s; the kiosk (kiosk.py) wires both.
"""

from __future__ import annotations

import io
import logging
import logging.handlers
import os
import socket
import stat
import struct
import sys
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Final, TextIO

from lobby_display.config import Settings
from lobby_display.files import make_directories
from lobby_display.models import clean_text
from lobby_display.redaction import EscapingFormatter, RedactingFilter, redact
from lobby_display.updates import Feed, FeedHealth, FeedStatus

log = logging.getLogger(__name__)

#: journald's native protocol socket (a datagram socket; sockets stay reachable under
#: `ProtectSystem=strict`).
JOURNAL_SOCKET: Final = "/run/systemd/journal/socket"
#: Name the log lines carry in the journal (`journalctl -t lobby-display`).
SYSLOG_IDENTIFIER: Final = "lobby-display"
#: Log file used when nothing else fits (an interactive terminal without a journal).
FALLBACK_LOG_NAME: Final = "lobby-display.log"
#: Longest journal message sent; journald's datagrams are capped well above this.
_MAX_JOURNAL_MESSAGE: Final = 48 * 1024
#: Longest STATUS= line: `systemctl status` shows one line.
_MAX_STATUS: Final = 240
#: Third-party loggers that are chatty at INFO (httpx logs every request, with its URL).
_QUIET_LOGGERS: Final = ("httpx", "httpcore", "hpack", "asyncio", "markdown_it")
#: Marks the handlers `setup_logging` installs, so a second call replaces them.
_OURS: Final = "_lobby_display_handler"


# ---------------------------------------------------------------------------------------------
# sd_notify


class Notifier:
    """Sends sd_notify messages to systemd over `$NOTIFY_SOCKET`; does nothing when it is unset.

    The address is a file-system path or `@name` (the abstract namespace). Messages go out
    without blocking; a failure to send is logged once and never raised (a screen must not stop
    because systemd is busy).
    """

    def __init__(self, environ: Mapping[str, str] | None = None) -> None:
        env = os.environ if environ is None else environ
        self.address: str | None = _notify_address(env.get("NOTIFY_SOCKET", ""))
        self._socket: socket.socket | None = None
        self._warned = False

    @property
    def enabled(self) -> bool:
        """True when running under systemd with a notification socket."""
        return self.address is not None

    def notify(self, *assignments: str) -> bool:
        """Send `KEY=value` assignments in one datagram; True when it was sent."""
        if self.address is None or not assignments:
            return False
        message = "\n".join(assignments).encode("utf-8", "replace")
        try:
            if self._socket is None:
                self._socket = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
            self._socket.sendto(message, socket.MSG_DONTWAIT | socket.MSG_NOSIGNAL, self.address)
        except OSError as error:
            if not self._warned:
                self._warned = True
                log.warning(
                    "cannot notify systemd at %s (%s); further failures are not logged",
                    self.address.replace("\0", "@"),
                    error.strerror or error,
                )
            return False
        return True

    def ready(self, status: str | None = None) -> bool:
        """`READY=1`: the screen is up (with an optional status line)."""
        if status is None:
            return self.notify("READY=1")
        return self.notify("READY=1", f"STATUS={_status_line(status)}")

    def watchdog(self) -> bool:
        """`WATCHDOG=1`: the UI's event loop is alive."""
        return self.notify("WATCHDOG=1")

    def status(self, text: str) -> bool:
        """`STATUS=...`: one line for `systemctl status` (cleaned, secrets masked)."""
        return self.notify(f"STATUS={_status_line(text)}")

    def stopping(self) -> bool:
        """`STOPPING=1`: leaving on purpose."""
        return self.notify("STOPPING=1")

    def reloading(self) -> bool:
        """`RELOADING=1` with `MONOTONIC_USEC=` (systemd 253+ wants it; 252 ignores it)."""
        now_usec = time.clock_gettime_ns(time.CLOCK_MONOTONIC) // 1000
        return self.notify("RELOADING=1", f"MONOTONIC_USEC={now_usec}")

    def close(self) -> None:
        """Close the socket (a later message opens a new one)."""
        if self._socket is not None:
            self._socket.close()
            self._socket = None


def _notify_address(value: str) -> str | None:
    if value.startswith("/"):
        return value
    if value.startswith("@") and len(value) > 1:
        return "\0" + value[1:]
    if value:
        log.warning("NOTIFY_SOCKET=%r is not a path or an abstract name: not notifying", value)
    return None


def _status_line(text: str) -> str:
    return clean_text(redact(text), _MAX_STATUS)


def watchdog_period(
    environ: Mapping[str, str] | None = None, pid: int | None = None
) -> float | None:
    """Seconds between `WATCHDOG=1` pings, or None when systemd's watchdog is not on for us.

    Half of `$WATCHDOG_USEC`, as sd_watchdog_enabled(3) advises. Like it, a `$WATCHDOG_PID`
    naming another process means the watchdog is not ours. (The kiosk unit starts the app as
    `env -u WATCHDOG_PID ...` because its main process is cage, not the app.)
    """
    env = os.environ if environ is None else environ
    try:
        usec = int(env.get("WATCHDOG_USEC", ""))
    except ValueError:
        return None
    if usec <= 0:
        return None
    if (owner := env.get("WATCHDOG_PID")) is not None:
        try:
            if int(owner) != (os.getpid() if pid is None else pid):
                return None
        except ValueError:
            return None
    return usec / 2 / 1_000_000


# ---------------------------------------------------------------------------------------------
# Feed health in words


_ORDER: Final = (Feed.TICKETS, Feed.QUEUES, Feed.COUNTERS)


def status_text(health: Mapping[Feed, FeedHealth] | Iterable[FeedHealth]) -> str:
    """The feeds' health in words for `STATUS=`.

    Like "tickets live, queues reconnecting (attempt 3: read timeout), counters live". Given
    several reports for one feed, the latest counts; a feed with no report yet is "starting".
    """
    reports = health.values() if isinstance(health, Mapping) else health
    latest: dict[Feed, FeedHealth] = {}
    for report in reports:
        known = latest.get(report.feed)
        if known is None or report.at >= known.at:
            latest[report.feed] = report
    return ", ".join(_feed_words(feed, latest.get(feed)) for feed in _ORDER)


def _feed_words(feed: Feed, report: FeedHealth | None) -> str:
    if report is None:
        return f"{feed.value} starting"
    error = clean_text(redact(report.error), 60)
    if report.status is FeedStatus.LIVE:
        return f"{feed.value} live"
    if report.status is FeedStatus.REFUSED:
        return f"{feed.value} refused by the service ({error or 'credentials rejected'})"
    words = f"{feed.value} {report.status.value}"
    details = f"attempt {report.attempt}" if report.attempt else ""
    if error:
        details = f"{details}: {error}" if details else error
    return f"{words} ({details})" if details else words


# ---------------------------------------------------------------------------------------------
# Logging


def setup_logging(
    settings: Settings,
    environ: Mapping[str, str] | None = None,
    stderr: TextIO | None = None,
    journal_socket: str = JOURNAL_SOCKET,
) -> logging.Handler:
    """Send the program's logs somewhere other than the screen, with secrets masked.

    In order: the configured `log.file` (if it cannot be opened: the next choice, with a
    warning); standard error when it is the journal's stream (the `$JOURNAL_STREAM` check; no
    timestamps, `<N>` priority prefixes); the journal's own socket when standard error is a
    terminal (under both units, where Textual draws on standard error); standard error when it
    is neither (a pipe, a file); else `lobby-display.log` in the state directory. Replaces the
    handler of an earlier call; returns the new one.
    """
    env = os.environ if environ is None else environ
    stream = sys.stderr if stderr is None else stderr
    unusable = ""
    handler: logging.Handler | None = None
    if settings.log.file is not None:
        try:
            handler = _QuietFileHandler(settings.log.file)
            handler.setFormatter(EscapingFormatter(_TIMESTAMPED))
        except OSError as error:
            # Under ProtectSystem=strict most paths are read-only: log elsewhere, still start.
            unusable = f"cannot write the log file {settings.log.file} ({error.strerror or error})"
    if handler is None:
        handler = _choose_handler(settings, env, stream, journal_socket)
    setattr(handler, _OURS, True)
    handler.addFilter(RedactingFilter())
    root = logging.getLogger()
    for old in [h for h in root.handlers if getattr(h, _OURS, False)]:
        root.removeHandler(old)
        old.close()
    root.addHandler(handler)
    root.setLevel(settings.log.level)
    for name in _QUIET_LOGGERS:
        logging.getLogger(name).setLevel(logging.WARNING)
    # A warning printed by the warnings module would land on the screen.
    logging.captureWarnings(True)
    if unusable:
        log.warning("%s; logging to %s instead", unusable, _describe_handler(handler))
    return handler


def _describe_handler(handler: logging.Handler) -> str:
    if isinstance(handler, JournalHandler):
        return "the journal"
    if isinstance(handler, logging.FileHandler):
        return handler.baseFilename
    if isinstance(handler, logging.StreamHandler):
        return "standard error"
    return "nowhere"


_TIMESTAMPED: Final = "%(asctime)s %(levelname)s %(name)s: %(message)s"


def _choose_handler(
    settings: Settings, env: Mapping[str, str], stream: TextIO, journal_socket: str
) -> logging.Handler:
    handler: logging.Handler
    is_tty = _stream_isatty(stream)
    if not is_tty and _is_journal_stream(stream, env):
        handler = _QuietStreamHandler(stream)
        handler.setFormatter(_PriorityFormatter("%(name)s: %(message)s"))
        return handler
    if is_tty and _is_socket(journal_socket):
        handler = JournalHandler(journal_socket)
        handler.setFormatter(EscapingFormatter("%(name)s: %(message)s"))
        return handler
    if not is_tty:
        handler = _QuietStreamHandler(stream)
        handler.setFormatter(EscapingFormatter(_TIMESTAMPED))
        return handler
    fallback = settings.state_directory(env) / FALLBACK_LOG_NAME
    try:
        handler = _QuietFileHandler(fallback)
    except OSError:
        return logging.NullHandler()
    handler.setFormatter(EscapingFormatter(_TIMESTAMPED))
    return handler


def _stream_isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (OSError, ValueError):
        return False


def _is_journal_stream(stream: TextIO, env: Mapping[str, str]) -> bool:
    """True when `stream` is the journal's stream (systemd's documented `$JOURNAL_STREAM` test)."""
    device, _, inode = env.get("JOURNAL_STREAM", "").partition(":")
    try:
        info = os.fstat(stream.fileno())
        return (info.st_dev, info.st_ino) == (int(device), int(inode))
    except (OSError, ValueError, AttributeError):
        return False


def _is_socket(path: str) -> bool:
    try:
        return stat.S_ISSOCK(os.stat(path).st_mode)
    except OSError:
        return False


class _QuietErrors:
    """Drop a record that cannot be written instead of printing "Logging error" on the screen."""

    dropped = 0

    def handleError(self, record: logging.LogRecord) -> None:
        self.dropped += 1


class _QuietStreamHandler(_QuietErrors, logging.StreamHandler):  # type: ignore[type-arg]
    pass


class _QuietFileHandler(_QuietErrors, logging.handlers.WatchedFileHandler):
    """Appends to a file; reopens it after logrotate moves it."""

    def __init__(self, path: Path) -> None:
        make_directories(path.parent)
        super().__init__(path, encoding="utf-8")

    def _open(self) -> io.TextIOWrapper:
        # Created for its owner only (0600), at the first write as after logrotate moved it.
        descriptor = os.open(
            self.baseFilename, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600
        )
        return open(descriptor, "a", encoding=self.encoding, errors=self.errors)


# journald reads `<N>` at the start of each line of a stream as the line's priority.
_PRIORITIES: Final = ((logging.CRITICAL, 2), (logging.ERROR, 3), (logging.WARNING, 4))


def _priority(level: int) -> int:
    for threshold, priority in _PRIORITIES:
        if level >= threshold:
            return priority
    return 6 if level >= logging.INFO else 7


class _PriorityFormatter(EscapingFormatter):
    def format(self, record: logging.LogRecord) -> str:
        prefix = f"<{_priority(record.levelno)}>"
        return "\n".join(prefix + line for line in super().format(record).splitlines())


class JournalHandler(_QuietErrors, logging.Handler):
    """Writes records to journald's native socket, with priority and source fields.

    Used when standard error is the screen; the entries belong to the unit, so
    `journalctl -u UNIT` shows them. Pure standard library (no python3-systemd needed).
    """

    def __init__(self, address: str = JOURNAL_SOCKET, identifier: str = SYSLOG_IDENTIFIER):
        super().__init__()
        self.address = address
        self.identifier = identifier
        self._socket = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)

    def emit(self, record: logging.LogRecord) -> None:
        try:
            message = self.format(record)
            if len(message) > _MAX_JOURNAL_MESSAGE:
                message = message[:_MAX_JOURNAL_MESSAGE] + " [cut]"
            fields = {
                "MESSAGE": message,
                "PRIORITY": str(_priority(record.levelno)),
                "SYSLOG_IDENTIFIER": self.identifier,
                "LOGGER": record.name,
                "CODE_FILE": record.pathname,
                "CODE_LINE": str(record.lineno),
                "CODE_FUNC": record.funcName,
            }
            self._socket.sendto(journal_datagram(fields), self.address)
        except Exception:
            self.handleError(record)

    def close(self) -> None:
        """Close the socket."""
        self._socket.close()
        super().close()


def journal_datagram(fields: Mapping[str, str]) -> bytes:
    """One journald native-protocol datagram: `KEY=value` lines, length-framed when multi-line."""
    parts: list[bytes] = []
    for key, value in fields.items():
        data = value.encode("utf-8", "replace")
        if b"\n" in data:
            parts.append(key.encode() + b"\n" + struct.pack("<Q", len(data)) + data + b"\n")
        else:
            parts.append(key.encode() + b"=" + data + b"\n")
    return b"".join(parts)


__all__ = [
    "JOURNAL_SOCKET",
    "JournalHandler",
    "Notifier",
    "journal_datagram",
    "setup_logging",
    "status_text",
    "watchdog_period",
]
