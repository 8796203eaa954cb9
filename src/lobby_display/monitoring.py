"""The kiosk's health for monitoring: a Prometheus textfile for node-exporter, and `health.json`.

`Monitor` writes the health every `WRITE_EVERY_SECONDS`, off the UI loop, each file replaced
atomically: `health.json` (read by `lobby-display status`) and, with `[monitoring] textfile`,
the Prometheus text format.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Final

from pydantic import BaseModel, ConfigDict

from lobby_display import __version__
from lobby_display.activity import ACTIVITY, Activity
from lobby_display.config import Settings
from lobby_display.files import write_atomically
from lobby_display.updates import Feed, FeedStatus

if TYPE_CHECKING:
    from lobby_display.board import Board

log = logging.getLogger(__name__)

#: Seconds between two writes of the health (node-exporter is scraped every 15 s or more).
WRITE_EVERY_SECONDS: Final = 5.0
#: The health file `lobby-display status` reads.
HEALTH_FILE_NAME: Final = "health.json"
#: Mode of the textfile: node-exporter runs as another user and must read it (no secret in it).
TEXTFILE_MODE: Final = 0o644


class FeedHealthRecord(BaseModel):
    """One feed's health as written."""

    model_config = ConfigDict(frozen=True)

    status: FeedStatus
    last_message_at: datetime | None = None
    """When the feed last received anything (an event or a heartbeat); None: never."""
    reconnections: int = 0
    error: str = ""
    """Why it is not live (free of secrets and control characters), "" when it is."""

    @property
    def live(self) -> bool:
        """True when the feed is live."""
        return self.status is FeedStatus.LIVE


class Health(BaseModel):
    """The kiosk's health at one moment: what the textfile and `health.json` hold."""

    model_config = ConfigDict(frozen=True)

    version: str
    place_id: str
    screen: str = ""
    """The screen's name: its config file's, without `.toml` (the units' instance name)."""
    pid: int
    started_at: datetime
    written_at: datetime
    feeds: dict[Feed, FeedHealthRecord]
    api_key_renewals: int = 0
    calls_shown: int = 0

    def seconds_since_last_message(self, feed: Feed) -> float | None:
        """Seconds from the feed's last message to the time this was written (None: never)."""
        last = self.feeds[feed].last_message_at
        return None if last is None else max(0.0, (self.written_at - last).total_seconds())


def screen_name(settings: Settings) -> str:
    """The screen's name: its config file's without `.toml` (`hall`), else the place's id."""
    return settings.source.stem if settings.source is not None else settings.place.id


def runtime_directory(environ: Mapping[str, str]) -> Path | None:
    """systemd's `$RUNTIME_DIRECTORY` (its first part), if set."""
    first = environ.get("RUNTIME_DIRECTORY", "").split(":", 1)[0]
    return Path(first) if first else None


def health_file(settings: Settings, environ: Mapping[str, str] | None = None) -> Path:
    """Where the kiosk writes `health.json`: its runtime directory (a tmpfs under systemd: no
    wear on the box's flash, gone when the unit stops), else its state directory."""
    env = os.environ if environ is None else environ
    directory = runtime_directory(env) or settings.state_directory(env)
    return directory / HEALTH_FILE_NAME


class Monitor:
    """Gathers the kiosk's health and writes it at most every `WRITE_EVERY_SECONDS`.

    `calls` is told the calls shown; `tick` (every second, on the UI loop) reads the board's
    feed statuses and, when a write is due and none is under way, writes on a worker thread.
    """

    def __init__(
        self,
        settings: Settings,
        *,
        environ: Mapping[str, str] | None = None,
        activity: Activity = ACTIVITY,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self.settings = settings
        self.activity = activity
        self.clock = clock
        self.started_at = clock()
        self.health_path = health_file(settings, environ)
        self.textfile = settings.monitoring.textfile
        self.calls_shown = 0
        self._last_write: datetime | None = None
        self._writing: asyncio.Future[None] | None = None
        self._warned: set[Path] = set()

    def calls(self, count: int) -> None:
        """`count` calls or recalls were shown as new."""
        self.calls_shown += count

    def health(self, board: Board, now: datetime) -> Health:
        """The health at `now`: the board's feed statuses with the process's activity."""
        views = board.health(now)
        feeds = {
            feed: FeedHealthRecord(
                status=views[feed].status,
                last_message_at=self.activity.last_message_at.get(feed),
                reconnections=self.activity.reconnections[feed],
                error="" if views[feed].status is FeedStatus.LIVE else views[feed].error,
            )
            for feed in Feed
        }
        return Health(
            version=__version__,
            place_id=self.settings.place.id,
            screen=screen_name(self.settings),
            pid=os.getpid(),
            started_at=self.started_at,
            written_at=now,
            feeds=feeds,
            api_key_renewals=self.activity.key_renewals,
            calls_shown=self.calls_shown,
        )

    def tick(self, board: Board) -> None:
        """Write the health when it is due (call it from the running loop)."""
        now = self.clock()
        if self._writing is not None and not self._writing.done():
            return  # a slow disk: the next tick tries again
        if (
            self._last_write is not None
            and (now - self._last_write).total_seconds() < WRITE_EVERY_SECONDS
        ):
            return
        self._last_write = now
        health = self.health(board, now)
        loop = asyncio.get_running_loop()
        self._writing = loop.run_in_executor(None, self.write, health)

    def write(self, health: Health) -> None:
        """Write `health` to the health file and the textfile (each failure logged once)."""
        self._write(self.health_path, health.model_dump_json(), private=True)
        if self.textfile is not None:
            self._write(self.textfile, metrics_text(health), private=False)

    def _write(self, path: Path, text: str, *, private: bool) -> None:
        try:
            if not private and not path.parent.is_dir():
                # Not made here: a directory made for us would be unreadable by node-exporter.
                raise FileNotFoundError(f"the directory {path.parent} does not exist")
            write_atomically(
                path,
                text,
                0o600 if private else TEXTFILE_MODE,
                private_parent=private,
                sync=False,  # rewritten every few seconds: no sync to wear the flash
            )
        except OSError as error:
            if path not in self._warned:
                self._warned.add(path)
                log.warning(
                    "cannot write the health file %s (%s); further failures are not logged",
                    path,
                    error.strerror or error,
                )
        else:
            if path in self._warned:
                self._warned.discard(path)
                log.info("the health file %s is written again", path)


# --- the Prometheus text format --------------------------------------------------------------


def metrics_text(health: Health) -> str:
    """`health` in the Prometheus text exposition format (version 0.0.4).

    Every sample carries `screen` (several screens on one PC write files of their own, and
    node-exporter refuses the same series twice); per feed, `feed` too.
    """
    lines: list[str] = []
    screen = health.screen or health.place_id

    def _labels(**labels: str) -> str:
        return _label_text(screen=screen, **labels)

    def family(name: str, kind: str, help_text: str, samples: list[tuple[str, float]]) -> None:
        lines.append(f"# HELP {name} {help_text}")
        lines.append(f"# TYPE {name} {kind}")
        lines.extend(f"{name}{labels} {_number(value)}" for labels, value in samples)

    info = _labels(version=health.version, place=health.place_id)
    family(
        "lobby_display_info", "gauge", "The display's version and place (always 1).", [(info, 1)]
    )
    family(
        "lobby_display_start_time_seconds",
        "gauge",
        "When the display started, in seconds since the Unix epoch.",
        [(_labels(), health.started_at.timestamp())],
    )
    family(
        "lobby_display_feed_live",
        "gauge",
        "1 when the feed is live, 0 when it is connecting, reconnecting or refused.",
        [(_labels(feed=feed), int(record.live)) for feed, record in health.feeds.items()],
    )
    ages = [
        (_labels(feed=feed), age)
        for feed in health.feeds
        if (age := health.seconds_since_last_message(feed)) is not None
    ]
    family(
        "lobby_display_feed_last_message_age_seconds",
        "gauge",
        "Seconds since the feed last received anything (an event or a heartbeat), when written.",
        ages,
    )
    family(
        "lobby_display_feed_last_message_timestamp_seconds",
        "gauge",
        "When the feed last received anything, in seconds since the Unix epoch.",
        [
            (_labels(feed=feed), record.last_message_at.timestamp())
            for feed, record in health.feeds.items()
            if record.last_message_at is not None
        ],
    )
    family(
        "lobby_display_feed_reconnections_total",
        "counter",
        "Times the feed's connection ended or failed and a new attempt was scheduled.",
        [(_labels(feed=feed), record.reconnections) for feed, record in health.feeds.items()],
    )
    family(
        "lobby_display_api_key_renewals_total",
        "counter",
        "API keys obtained from the service in place of an earlier one (due, or refused).",
        [(_labels(), health.api_key_renewals)],
    )
    family(
        "lobby_display_calls_shown_total",
        "counter",
        "Calls and recalls shown (highlighted) as new since the display started.",
        [(_labels(), health.calls_shown)],
    )
    family(
        "lobby_display_health_written_timestamp_seconds",
        "gauge",
        "When this file was written, in seconds since the Unix epoch.",
        [(_labels(), health.written_at.timestamp())],
    )
    return "\n".join(lines) + "\n"


def _label_text(**labels: str) -> str:
    inner = ",".join(f'{name}="{_escape(value)}"' for name, value in labels.items())
    return "{" + inner + "}"


def _escape(value: str) -> str:
    """A label value as the format wants it: backslash, double quote and newline escaped."""
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _number(value: float) -> str:
    if isinstance(value, int) or float(value).is_integer():
        return str(int(value))
    return repr(float(value))
