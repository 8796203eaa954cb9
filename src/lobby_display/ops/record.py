"""`lobby-display record`: the place's three feeds and the REST answers they used, into a file.

Connects as the kiosk does (the display's key cache left alone) and writes a recording
(`recording`, no secret) until `--minutes` have passed or Ctrl-C; `lobby-display replay` serves it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import sys
from pathlib import Path

from lobby_display.config import Settings
from lobby_display.ops.common import client_for, config_name
from lobby_display.recording import FileRecorder, start_line
from lobby_display.redaction import EscapingFormatter, RedactingFilter
from lobby_display.source import feeds_source
from lobby_display.updates import Feed, FeedHealth, FeedStatus, Update

log = logging.getLogger(__name__)

EXIT_OK = 0
EXIT_PROBLEM = 1


def record(settings: Settings, out: Path, minutes: float | None = None) -> int:
    """Record until `minutes` have passed (None: until stopped); the exit code."""
    if minutes is not None and minutes <= 0:
        print("lobby-display record: --minutes must be more than 0", file=sys.stderr)
        return EXIT_PROBLEM
    _log_to_stderr()
    start = start_line(
        place=settings.place.id,
        service_url=settings.service.display_url,
        langs=settings.display.locales,
        queues=settings.place.queues,
        counters=settings.place.counters,
    )
    try:
        recorder = FileRecorder(out, start)
    except OSError as error:
        print(f"lobby-display record: cannot write {out}: {error.strerror}", file=sys.stderr)
        return EXIT_PROBLEM
    until = "until Ctrl-C" if minutes is None else f"for {minutes:g} min (or until Ctrl-C)"
    print(f"Recording place {settings.place.id} ({config_name(settings)}) to {out} {until}")
    try:
        with contextlib.suppress(KeyboardInterrupt):
            asyncio.run(_record(settings, recorder, minutes))
    finally:
        with contextlib.suppress(OSError):
            recorder.close()
    if recorder.failure is not None:
        reason = recorder.failure.strerror or recorder.failure
        print(
            f"lobby-display record: cannot write {out}: {reason}; it holds what came before",
            file=sys.stderr,
        )
        return EXIT_PROBLEM
    counts = recorder.counts
    print(
        f"Recorded {counts['message']} feed messages and {counts['answer']} REST answers "
        f"to {out}. Replay: lobby-display replay {out}"
    )
    return EXIT_OK


async def _record(settings: Settings, recorder: FileRecorder, minutes: float | None) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    recorder.on_failure = lambda _error: stop.set()  # a full disk ends the recording
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    live: dict[Feed, FeedStatus] = {}

    def seen(update: Update) -> None:
        if isinstance(update, FeedHealth) and live.get(update.feed) != update.status:
            live[update.feed] = update.status
            words = f": {update.error}" if update.error else ""
            print(f"  {update.feed} feed {update.status}{words}", flush=True)

    # The commands' client: the kiosk's credentials, without touching its key cache.
    source = feeds_source(settings, client_factory=client_for, observer=recorder)
    feeds = asyncio.ensure_future(source(seen))
    try:
        timeout = None if minutes is None else minutes * 60
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), timeout)
    finally:
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(signum)
        feeds.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await feeds


def _log_to_stderr() -> None:
    """Warnings of the feeds (reconnections) on standard error, secrets masked as always."""
    root = logging.getLogger()
    if root.handlers:
        return
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(EscapingFormatter("lobby-display record: %(message)s"))
    handler.addFilter(RedactingFilter())
    root.addHandler(handler)
    root.setLevel(logging.WARNING)
