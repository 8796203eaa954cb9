"""Ticket label pictures made ahead in a process of their own, on the small PC's other core.

The screen asks for a new call's picture (`PictureMaker.ask`) and takes it when it draws the
card (`take`); a picture not ready is drawn by the screen. The process is this module run as a
program (`serve`). Why: docs/architecture.md (the screen).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import select
import subprocess
import sys
import time
from collections import OrderedDict, deque
from typing import IO, Final

from lobby_display.children import child_environment
from lobby_display.graphics import raster, sixel

log = logging.getLogger(__name__)

#: A picture: the label, the box's width and height in pixels, the CJK locale, the largest font
#: size (0: as large as it fits).
PictureKey = tuple[str, int, int, str, int]

#: Pictures asked for and not answered yet, at most (a maker that far behind is not asked for
#: more), and pictures kept for the screen to take (a call's card laid out otherwise than
#: foreseen never takes its picture: the oldest is dropped).
MAX_PENDING: Final = 12
#: How long the screen waits for a picture under way before drawing it itself (the maker is
#: stuck or its core busy: a picture takes a few milliseconds).
WAIT_SECONDS: Final = 0.05
#: The maker's first line: its modules are loaded, it answers from now on.
READY: Final = b'"ready"'
#: A maker that has not answered the oldest picture asked for in this long is stuck: it is
#: ended, and started again later (a busy core delays a picture by milliseconds, not seconds).
STALL_SECONDS: Final = 10.0
#: After the maker ended or failed, how long before it is started again (meanwhile the screen
#: draws its pictures itself).
RESTART_SECONDS: Final = 60.0


def picture_body(key: PictureKey) -> bytes | None:
    """The sixel body of `key`'s picture, paper left transparent (None: the label is not drawn
    in that box: no font for it, nothing to ink)."""
    label, width, height, cjk_locale, max_size = key
    placed = raster.place_ink(label, width, height, cjk_locale, max_size)
    if placed is None:
        return None
    return sixel.body(
        placed.ink, placed.left, placed.top, (placed.width, placed.height), paint_background=False
    )


def key_of(asked: object) -> PictureKey:
    """The picture a request names; ValueError when it names none."""
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
    """The screen's side of the process that makes pictures ahead (started at the first `ask`).

    No thread of the screen's waits for the answers: the screen reads them when it takes a
    picture (a thread of its own, woken by each answer, took the screen's interpreter lock in
    the middle of the frame the picture was for). The maker answers in the order it was asked.
    """

    def __init__(self, argv: list[str] | None = None) -> None:
        self._argv = argv or [sys.executable, "-m", "lobby_display.graphics.pictures"]
        self._process: subprocess.Popen[bytes] | None = None
        self._asked: deque[tuple[PictureKey, float]] = deque()
        """Pictures asked for and not answered yet, and when, in the order asked."""
        self._wanted: OrderedDict[PictureKey, None] = OrderedDict()
        """Pictures asked for that the screen will take (an answer to another is dropped)."""
        self._answers: OrderedDict[PictureKey, bytes | None] = OrderedDict()
        """Pictures made and not taken yet (the oldest dropped beyond `MAX_PENDING`)."""
        self._unread = bytearray()
        self._ready = False
        """Whether the running maker said it is ready (its modules loaded): until then a
        picture is not waited for (the first call after a start would wait in vain)."""
        self._retry_at = 0.0
        self.made = 0
        """Pictures the maker made that the screen took."""

    @property
    def running(self) -> bool:
        """Whether the maker's process runs."""
        return self._process is not None and self._process.poll() is None

    def ask(self, key: PictureKey) -> None:
        """Make `key`'s picture ahead (nothing when it is under way, when the maker is
        `MAX_PENDING` pictures behind, or when no maker can run)."""
        self._read(0)
        if self._asked and time.monotonic() - self._asked[0][1] > STALL_SECONDS:
            self._lost(f"it did not answer for {STALL_SECONDS:.0f} s")
        if key in self._wanted or key in self._answers or len(self._asked) >= MAX_PENDING:
            return
        process = self._started()
        if process is None or process.stdin is None:
            return
        try:
            os.write(process.stdin.fileno(), json.dumps(list(key)).encode() + b"\n")
        except (OSError, ValueError):
            self._lost("its input closed")
            return
        self._asked.append((key, time.monotonic()))
        self._wanted[key] = None
        while len(self._wanted) > MAX_PENDING:
            self._wanted.popitem(last=False)

    def take(self, key: PictureKey) -> bytes | None:
        """`key`'s picture, made ahead: waited for while under way (at most `WAIT_SECONDS`).
        Raises LookupError when it was not asked for or cannot be had: draw it yourself."""
        if key not in self._answers and key in self._wanted:
            deadline = time.monotonic() + (WAIT_SECONDS if self._ready else 0.0)
            while key not in self._answers and key in self._wanted:
                left = deadline - time.monotonic()
                if not self._read(max(left, 0.0)) and left <= 0:
                    break
        self._wanted.pop(key, None)
        if key not in self._answers:
            raise LookupError(key)
        self.made += 1
        return self._answers.pop(key)

    def close(self) -> None:
        """End the maker's process (its input closed; killed if it does not end at once)."""
        process, self._process = self._process, None
        self._forget_asked()
        if process is not None:
            _end(process, grace=1.0)

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
            self._process = subprocess.Popen(  # noqa: S603 (this interpreter, our own module)
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
        self._ready = False
        return self._process

    def _read(self, timeout: float) -> bool:
        """Read the answers that came, waiting up to `timeout` seconds for the first; whether
        any byte came."""
        process = self._process
        if process is None or process.stdout is None:
            return False
        stdout = process.stdout.fileno()
        came = False
        waiting = select.poll()  # not select(): a descriptor above 1023 is refused there
        waiting.register(stdout, select.POLLIN)
        while waiting.poll(timeout * 1000):
            try:
                chunk = os.read(stdout, 1 << 16)
            except OSError:
                chunk = b""
            if not chunk:
                self._lost("it ended")
                return came
            came = True
            self._unread += chunk
            timeout = 0.0
        self._parse()
        return came

    def _parse(self) -> None:
        """Hand each whole answer read to the picture it is for, in the order asked."""
        unread = self._unread
        while (end := unread.find(b"\n")) >= 0:
            line = bytes(unread[:end])
            if not self._ready:
                del unread[: end + 1]
                self._ready = line == READY
                if not self._ready:
                    self._lost("it did not start right")
                    return
                continue
            try:
                length, error = json.loads(line)
                length = int(length)
            except (ValueError, TypeError):
                self._lost("it answered something unreadable")
                return
            if len(unread) < end + 1 + max(length, 0):
                return  # the rest of the picture is on its way
            body = bytes(unread[end + 1 : end + 1 + length]) if length >= 0 else None
            del unread[: end + 1 + max(length, 0)]
            if not self._asked:
                self._lost("it answered what was not asked")
                return
            key, _ = self._asked.popleft()
            if error:
                log.warning("the picture maker could not draw a label: %s", error)
            if key in self._wanted:
                del self._wanted[key]
                self._answers[key] = body
                while len(self._answers) > MAX_PENDING:
                    self._answers.popitem(last=False)

    def _lost(self, why: str) -> None:
        """The maker is gone or out of step: say so once, end it, draw here until it is
        started again (`RESTART_SECONDS`)."""
        process, self._process = self._process, None
        if process is not None:
            log.warning("the picture maker stopped (%s); pictures are drawn here", why)
            _end(process, grace=0.0)
        self._retry_at = time.monotonic() + RESTART_SECONDS
        self._forget_asked()

    def _forget_asked(self) -> None:
        self._asked.clear()
        self._wanted.clear()
        self._answers.clear()
        self._unread.clear()
        self._ready = False


def _end(process: subprocess.Popen[bytes], grace: float) -> None:
    """End `process`: its input closed, `grace` seconds to end by itself, then killed; its pipes
    closed."""
    with contextlib.suppress(OSError):
        if process.stdin is not None:
            process.stdin.close()
    try:
        process.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
    with contextlib.suppress(OSError):
        if process.stdout is not None:
            process.stdout.close()


def serve(requests: IO[bytes], answers: IO[bytes]) -> None:
    """Say `READY`, then answer each request line of `requests` on `answers`, in order, until
    the input ends. A request is a JSON array: the label, the box's width and height in pixels,
    the CJK locale, the largest font size. An answer is a JSON array, the body's length in bytes
    (-1: no picture) and an error (or null), on a line, then the body (`picture_body`)."""
    answers.write(READY + b"\n")
    answers.flush()
    for line in requests:
        made: bytes | None = None
        error: str | None = None
        try:
            made = picture_body(key_of(json.loads(line)))
        except Exception as failure:  # one bad request must not end the maker
            error = f"{type(failure).__name__}: {failure}"
        length = -1 if made is None else len(made)
        answers.write(json.dumps([length, error]).encode() + b"\n" + (made or b""))
        answers.flush()
        # Each label comes once (the screen keeps what it took): what the modules keep to draw
        # a label again only grew the process (43 MB instead of 23 after 80 labels).
        raster.forget()
        sixel.forget()


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
