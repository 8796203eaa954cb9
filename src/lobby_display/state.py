"""The last board, saved atomically in the state directory and shown again after a restart.

A restart (an update, a crash, a power cut) must not blank the screen: the board is written when
it changed, at most every `SAVE_INTERVAL_SECONDS` (and at a clean stop), and read back at
start, where every part shows as out of date until its feed is live again. A corrupt file, or
one written for another place or by another version, is ignored with a log line: the screen
then starts from "connecting" as on a first boot.
"""

from __future__ import annotations

import json
import logging
import threading
from datetime import datetime
from pathlib import Path
from typing import Any, Final

from lobby_display.board import Board, BoardSettings
from lobby_display.files import (
    FileRefused,
    expected_owners,
    private_directory,
    read_regular,
    write_atomically,
)

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
            board = Board.from_state(settings, data.get("board") or {}, now)
        except ValueError as error:
            log.warning("ignored the saved board %s: %s", self.path, error)
            return None
        log.info("showing the board saved at %s until the feeds are live", data.get("saved_at"))
        return board

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
        payload = {
            "format": FORMAT,
            "place_id": self.place_id,
            "saved_at": now.isoformat(),
            "board": board.to_state(now),
        }
        self._saved_at, self._saved_revision = now, board.revision
        if wait:
            return self._write(payload)
        # The payload is made of new dicts and lists (`Board.to_state`): the board may change
        # while it is turned into JSON and written.
        self._writing = threading.Thread(
            target=self._write, args=(payload,), name="board-save", daemon=True
        )
        self._writing.start()
        return True

    def flush(self) -> None:
        """Wait for a save under way (before a stop, or a test that reads the file)."""
        if self._writing is not None:
            self._writing.join()
            self._writing = None

    def _write(self, payload: dict[str, Any]) -> bool:
        try:
            write_atomically(self.path, json.dumps(payload, ensure_ascii=False))
        except OSError as error:
            if not self._failed:
                why = str(error) if isinstance(error, FileRefused) else _why(error)
                log.warning("cannot save the board in %s: %s", self.path.parent, why)
            self._failed = True
            self._saved_at = None  # try again at the next save
            return False
        self._failed = False
        return True


def _why(error: BaseException) -> str:
    if isinstance(error, OSError) and error.strerror:
        return error.strerror
    return type(error).__name__
