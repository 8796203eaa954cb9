"""Ticket label pictures made ahead in a process of their own, on the small PC's other core.

A called ticket's picture (its label drawn from the font, then sixel-encoded) is the largest
single cost of a call's frame, and the screen's thread did it while the second core stood
idle. The screen asks for the picture as soon as it knows the call's card (`PictureMaker.ask`),
words and lays out the rest of the frame meanwhile, and takes the picture when it draws the
card (`PictureMaker.take`). A picture not asked for, not ready in time, or whose maker is gone
is drawn in the screen's own process, as before: the maker only ever saves time.

The picture is the sixel sequence's `sixel.body` (the same bytes either way); its colours are
the `sixel.header`, written by the screen. Run as `python -m lobby_display.graphics.pictures`:
one request a line on stdin (a JSON array: label, width and height in pixels, CJK locale, the
largest font size), one answer a line on stdout (the request, then the body or null, then an
error or null), after a first line that says it is ready. It ends at the end of its input.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import threading
import time
from collections import OrderedDict
from concurrent.futures import Future
from typing import IO, Final

from lobby_display.children import child_environment
from lobby_display.graphics import sixel
from lobby_display.graphics.raster import place_ink

log = logging.getLogger(__name__)

#: A picture: the label, the box's width and height in pixels, the CJK locale, the largest font
#: size (0: as large as it fits).
PictureKey = tuple[str, int, int, str, int]

#: Pictures asked for and not taken yet, at most: a call's card that is laid out otherwise than
#: foreseen never takes its picture, and asking stops until the oldest is dropped.
MAX_PENDING: Final = 12
#: How long the screen waits for a picture under way before drawing it itself (the maker is
#: stuck or its core busy: a picture takes a few milliseconds).
WAIT_SECONDS: Final = 0.05
#: The maker's first line: its modules are loaded, it answers from now on.
READY: Final = b'"ready"'
#: After the maker ended or failed, how long before it is started again (meanwhile the screen
#: draws its pictures itself).
RESTART_SECONDS: Final = 60.0


def picture_body(key: PictureKey) -> bytes | None:
    """The sixel body of `key`'s picture, paper left transparent (None: the label is not drawn
    in that box: no font for it, nothing to ink)."""
    label, width, height, cjk_locale, max_size = key
    placed = place_ink(label, width, height, cjk_locale, max_size)
    if placed is None:
        return None
    return sixel.body(
        placed.ink, placed.left, placed.top, (placed.width, placed.height), paint_background=False
    )


def key_of(asked: object) -> PictureKey:
    """The picture a request (or an answer) names; ValueError when it names none."""
    if not isinstance(asked, list) or len(asked) != 5:
        raise ValueError("a picture is [label, width, height, cjk_locale, max_size]")
    label, width, height, cjk_locale, max_size = asked
    if not isinstance(label, str) or not isinstance(cjk_locale, str):
        raise ValueError("a picture's label and locale are strings")
    return label, int(width), int(height), cjk_locale, int(max_size)


def two_cores() -> bool:
    """Whether this process may run on two cores or more (else a maker only takes turns with
    the screen for the one core)."""
    try:
        return len(os.sched_getaffinity(0)) >= 2
    except (AttributeError, OSError):
        return (os.cpu_count() or 1) >= 2


class PictureMaker:
    """The screen's side of the process that makes pictures ahead (started at the first `ask`)."""

    def __init__(self, argv: list[str] | None = None) -> None:
        self._argv = argv or [sys.executable, "-m", "lobby_display.graphics.pictures"]
        self._process: subprocess.Popen[bytes] | None = None
        self._pending: OrderedDict[PictureKey, Future[bytes | None]] = OrderedDict()
        self._lock = threading.Lock()
        self._retry_at = 0.0
        self._ready = threading.Event()
        """Set once the running maker said it is ready (its modules loaded): until then a
        picture is not waited for (the first call after a start would wait in vain)."""
        self.made = 0
        """Pictures the maker made that the screen took."""

    @property
    def running(self) -> bool:
        """Whether the maker's process runs."""
        return self._process is not None and self._process.poll() is None

    def ask(self, key: PictureKey) -> None:
        """Make `key`'s picture ahead (nothing when it is under way, or no maker can run)."""
        with self._lock:
            if key in self._pending:
                return
            while len(self._pending) >= MAX_PENDING:
                _, dropped = self._pending.popitem(last=False)
                dropped.cancel()
        process = self._started()
        if process is None or process.stdin is None:
            return
        future: Future[bytes | None] = Future()
        with self._lock:
            self._pending[key] = future
        try:
            process.stdin.write(json.dumps(list(key)).encode() + b"\n")
            process.stdin.flush()
        except (OSError, ValueError):
            self._lost("its input closed")

    def take(self, key: PictureKey) -> bytes | None:
        """`key`'s picture, made ahead: waited for while under way (at most `WAIT_SECONDS`).
        Raises LookupError when it was not asked for or cannot be had: draw it yourself."""
        with self._lock:
            future = self._pending.get(key)
        if future is None:
            raise LookupError(key)
        try:
            # Left with the others until answered: the answer is handed to the pictures pending.
            body = future.result(WAIT_SECONDS if self._ready.is_set() else 0)
        except Exception as error:  # timed out, cancelled, failed: the screen draws it
            raise LookupError(key) from error
        finally:
            with self._lock:
                self._pending.pop(key, None)
        self.made += 1
        return body

    def close(self) -> None:
        """End the maker's process (its input closed; killed if it does not end at once)."""
        process, self._process = self._process, None
        self._fail_pending()
        if process is None:
            return
        try:
            if process.stdin is not None:
                process.stdin.close()
            process.wait(timeout=1)
        except (OSError, subprocess.TimeoutExpired):
            process.kill()
            process.wait()

    def _started(self) -> subprocess.Popen[bytes] | None:
        """The maker's process, started when it is not running and may be (after a failure, not
        before `RESTART_SECONDS`)."""
        if self.running:
            return self._process
        if self._process is not None:
            self._lost(f"it ended (exit status {self._process.returncode})")
        if time.monotonic() < self._retry_at:
            return None
        try:
            process = subprocess.Popen(  # noqa: S603 (this interpreter, our own module)
                self._argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                # Never the screen's terminal: a word there would be drawn over the board.
                stderr=subprocess.DEVNULL,
                env=child_environment(),
                close_fds=True,
            )
        except OSError as error:
            log.warning("the picture maker cannot start (%s); pictures are drawn here", error)
            self._retry_at = time.monotonic() + RESTART_SECONDS
            return None
        self._process = process
        self._ready.clear()
        threading.Thread(
            target=self._read, args=(process,), name="picture-answers", daemon=True
        ).start()
        return process

    def _read(self, process: subprocess.Popen[bytes]) -> None:
        """Hand each answer of `process` to the picture waiting for it."""
        assert process.stdout is not None
        if process.stdout.readline().strip() == READY:
            self._ready.set()
        for line in process.stdout:
            try:
                asked, body, error = json.loads(line)
                key = key_of(asked)
            except (ValueError, TypeError):
                log.warning("the picture maker answered something unreadable; ignored")
                continue
            if error:
                log.warning("the picture maker could not draw a label: %s", error)
            with self._lock:
                future = self._pending.get(key)
            if future is not None and not future.done():
                future.set_result(None if body is None else str(body).encode("latin-1"))

    def _lost(self, why: str) -> None:
        """The maker is gone: say so once, draw here until it is started again."""
        if self._process is not None:
            log.warning("the picture maker stopped (%s); pictures are drawn here", why)
        self._process = None
        self._retry_at = time.monotonic() + RESTART_SECONDS
        self._fail_pending()

    def _fail_pending(self) -> None:
        with self._lock:
            pending, self._pending = self._pending, OrderedDict()
        for future in pending.values():
            future.cancel()


def serve(requests: IO[bytes], answers: IO[bytes]) -> None:
    """Say `READY`, then answer each request line of `requests` on `answers`, until the input
    ends."""
    answers.write(READY + b"\n")
    answers.flush()
    for line in requests:
        asked: object = None
        body: str | None = None
        error: str | None = None
        try:
            asked = json.loads(line)
            made = picture_body(key_of(asked))
            body = None if made is None else made.decode("latin-1")
        except Exception as failure:  # one bad request must not end the maker
            error = f"{type(failure).__name__}: {failure}"
        answers.write(json.dumps([asked, body, error]).encode() + b"\n")
        answers.flush()


if __name__ == "__main__":
    serve(sys.stdin.buffer, sys.stdout.buffer)


__all__ = [
    "MAX_PENDING",
    "PictureKey",
    "PictureMaker",
    "key_of",
    "picture_body",
    "serve",
    "two_cores",
]
