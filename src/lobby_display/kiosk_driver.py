"""The terminal driver of the screen: Textual's, with an input thread that sleeps until a key.

Textual's Linux driver (8.2.8) wakes ten times a second to look for keys, for a screen nobody
types on: a third of a bare Textual clock's CPU (why: docs/architecture.md, the screen).
"""

from __future__ import annotations

import os
import selectors
import threading
import time
from codecs import getincrementaldecoder
from typing import Final

from textual._parser import ParseError
from textual._xterm_parser import XTermParser
from textual.drivers.linux_driver import LinuxDriver

#: Textual's own pace while keys come: how often a sequence cut short is looked at again.
POLL_SECONDS: Final = 0.1
#: How long after the last input the thread keeps Textual's pace, before it sleeps: longer
#: than the wait for what follows an Escape (Textual's ESCDELAY, 0.1 s unless set).
AWAKE_SECONDS: Final = 1.0


class _WakingEvent(threading.Event):
    """Textual's `exit_event`: setting it also wakes the input thread from its sleep."""

    def __init__(self, wake: int) -> None:
        super().__init__()
        self.wake = wake
        """The pipe's end to write to; -1 once the screen has stopped (nothing to wake)."""

    def set(self) -> None:
        super().set()
        if self.wake >= 0:
            os.write(self.wake, b"x")


class KioskDriver(LinuxDriver):
    """Textual's Linux driver whose input thread sleeps until the terminal writes."""

    def start_application_mode(self) -> None:
        self._wake_read, wake_write = os.pipe()
        self._waking = _WakingEvent(wake_write)
        self.exit_event = self._waking
        super().start_application_mode()  # type: ignore[no-untyped-call]

    def stop_application_mode(self) -> None:
        super().stop_application_mode()
        # Once, and never written to after: a file descriptor closed may soon be another file's.
        wake_write, self._waking.wake = self._waking.wake, -1
        if wake_write >= 0:
            os.close(self._wake_read)
            os.close(wake_write)

    def run_input_thread(self) -> None:
        """Wait for input and dispatch events (as Textual's, but asleep while none comes)."""
        selector = selectors.SelectSelector()
        selector.register(self.fileno, selectors.EVENT_READ)
        selector.register(self._wake_read, selectors.EVENT_READ)
        parser = XTermParser(self._debug)
        decode = getincrementaldecoder("utf-8")().decode
        last_input = -AWAKE_SECONDS

        def dispatch(ready: list[tuple[selectors.SelectorKey, int]]) -> None:
            nonlocal last_input
            for key, _ in ready:
                if key.fd == self._wake_read:
                    os.read(self._wake_read, 64)
                    continue
                data = decode(os.read(self.fileno, 4096))
                if not data:
                    # Standard input piped, or the terminal gone.
                    break
                last_input = time.monotonic()
                for event in parser.feed(data):
                    self.process_message(event)
            for event in parser.tick():
                self.process_message(event)

        try:
            while not self.exit_event.is_set():
                awake = time.monotonic() - last_input < AWAKE_SECONDS
                dispatch(selector.select(POLL_SECONDS if awake else None))
            # What the parser still holds (a lone Escape), as Textual's last look does.
            for event in parser.tick():
                self.process_message(event)
        finally:
            selector.close()
            try:
                for _ in parser.feed(""):
                    pass
            except (EOFError, ParseError):
                pass


__all__ = ["AWAKE_SECONDS", "POLL_SECONDS", "KioskDriver"]
