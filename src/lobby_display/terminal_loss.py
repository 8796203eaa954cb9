"""Ends the process when its terminal is gone, or when SIGTERM cannot reach a blocked UI loop.

`guard()` adds a way out that does not depend on the event loop: a thread waiting for a hang-up
of the standard streams, and a SIGTERM/SIGINT handler chained after the loop's, each ending the
process after a grace period (why: docs/architecture.md).
"""

from __future__ import annotations

import contextlib
import logging
import os
import select
import signal
import threading
from collections.abc import Callable
from types import FrameType
from typing import Any, Final

log = logging.getLogger(__name__)

#: Seconds a lost terminal leaves for a clean exit before the process is ended.
HANGUP_GRACE_SECONDS: Final = 2.0
#: Seconds SIGTERM or SIGINT leave for a clean exit before the process is ended.
STOP_GRACE_SECONDS: Final = 5.0
#: Signals that stop the screen (what `systemctl stop` and Ctrl-C send).
STOP_SIGNALS: Final = (signal.SIGTERM, signal.SIGINT)
#: Exit code when the terminal is gone and the clean exit did not happen (128 + SIGHUP).
HANGUP_EXIT: Final = 128 + signal.SIGHUP

_HANGUP_EVENTS: Final = select.POLLHUP | select.POLLERR | select.POLLNVAL

Handler = Callable[[int, FrameType | None], Any] | int | signal.Handlers | None


def terminal_descriptors() -> list[int]:
    """Standard input, output and error, those that are terminals."""
    found = []
    for descriptor in (0, 1, 2):
        with contextlib.suppress(OSError):
            if os.isatty(descriptor):
                found.append(descriptor)
    return found


def end_process(code: int, why: str) -> None:
    """End the process now, without unwinding (threads and the loop may be stuck)."""
    with contextlib.suppress(Exception):
        log.error("%s: ending the process (exit code %d)", why, code)
    os._exit(code)


class _Deadline:
    """Ends the process `grace` seconds after `start`, unless it exited first (a daemon thread,
    so a clean exit does not wait for it)."""

    def __init__(self) -> None:
        self._started = False
        self._lock = threading.Lock()

    def start(self, grace: float, code: int, why: str) -> None:
        with self._lock:
            if self._started:
                return
            self._started = True
        timer = threading.Timer(grace, end_process, (code, why))
        timer.daemon = True
        timer.name = "lobby-display-deadline"
        timer.start()


class _HangupWatch(threading.Thread):
    """Waits for a hang-up on `descriptors`; calls `on_hangup` once, then ends."""

    def __init__(self, descriptors: list[int], on_hangup: Callable[[], None]) -> None:
        super().__init__(name="lobby-display-terminal-watch", daemon=True)
        self._descriptors = descriptors
        self._on_hangup = on_hangup
        self._wake_read, self._wake_write = os.pipe2(os.O_CLOEXEC)

    def run(self) -> None:
        poller = select.poll()
        for descriptor in self._descriptors:
            # No read or write interest: only a hang-up or an error wakes the poll (typed keys
            # stay for Textual's input thread, output never wakes it).
            poller.register(descriptor, 0)
        poller.register(self._wake_read, select.POLLIN)
        try:
            while True:
                events = poller.poll()
                if any(fd == self._wake_read for fd, _ in events):
                    return
                if any(mask & _HANGUP_EVENTS for _, mask in events):
                    self._on_hangup()
                    return
        finally:
            os.close(self._wake_read)

    def stop(self) -> None:
        with contextlib.suppress(OSError):
            os.write(self._wake_write, b"x")
        self.join(1.0)
        with contextlib.suppress(OSError):
            os.close(self._wake_write)


def guard(
    leave: Callable[[], object],
    *,
    call_soon: Callable[[Callable[[], object]], object],
    hangup_grace: float = HANGUP_GRACE_SECONDS,
    stop_grace: float = STOP_GRACE_SECONDS,
) -> Callable[[], None]:
    """Install the loop-independent exits; returns an undo function.

    `leave` asks the app to exit; `call_soon` runs a function on the app's loop from any thread
    (`loop.call_soon_threadsafe`). Call this from the main thread after the loop's own signal
    handlers are in place (they would replace the plain handlers installed here), and only for
    a screen on a real terminal: once SIGTERM or SIGINT came, the process ends within the grace
    even if the app exited cleanly and the program meant to carry on.
    """
    deadline = _Deadline()

    def ask_to_leave() -> None:
        with contextlib.suppress(RuntimeError):  # the loop is closed: the exit is under way
            call_soon(leave)

    def hangup() -> None:
        log.info("the terminal is gone: leaving")
        deadline.start(hangup_grace, HANGUP_EXIT, "the terminal is gone and the screen is stuck")
        ask_to_leave()

    previous: dict[int, Handler] = {}

    def on_stop(number: int, frame: FrameType | None) -> None:
        name = signal.Signals(number).name
        deadline.start(stop_grace, 128 + number, f"{name} not acted on in {stop_grace:g} s")
        chained = previous.get(number)
        if callable(chained):
            chained(number, frame)

    for number in STOP_SIGNALS:
        previous[number] = signal.getsignal(number)
        signal.signal(number, on_stop)
    descriptors = terminal_descriptors()
    watch = _HangupWatch(descriptors, hangup) if descriptors else None
    if watch is not None:
        watch.start()

    def undo() -> None:
        if watch is not None:
            watch.stop()
        for number, handler in previous.items():
            with contextlib.suppress(ValueError, TypeError):
                if signal.getsignal(number) is on_stop:
                    signal.signal(number, handler)

    return undo


__all__ = [
    "HANGUP_EXIT",
    "HANGUP_GRACE_SECONDS",
    "STOP_GRACE_SECONDS",
    "STOP_SIGNALS",
    "end_process",
    "guard",
    "terminal_descriptors",
]
