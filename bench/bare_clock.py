"""The bare Textual app the display is compared with: one line of text and a clock, every second.

It is what the field notes measured as Textual's floor ("0.40 % of a core with a one-second
clock"): the same Textual, on the same pty, drawing the least a clock screen can draw.
Run: `python -m bench.bare_clock` (ctrl+q or SIGTERM quits).
"""

from __future__ import annotations

import asyncio
import signal
import time

from textual.app import App, ComposeResult
from textual.widgets import Static

#: The text on the first line, before the time (the benchmarks look for it). This module imports
#: nothing of the benchmarks or of the display, so its start and memory are Textual's alone.
BARE_MARK = "bare clock"


class BareClock(App[None]):
    """A clock, updated every second."""

    def compose(self) -> ComposeResult:
        yield Static(self._text(), id="clock", markup=False)

    def on_mount(self) -> None:
        # As the display does: SIGTERM leaves through the app, restoring the terminal.
        asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, self.exit)
        self.set_interval(1.0, self._tick)

    def _text(self) -> str:
        return f"{BARE_MARK} {time.strftime('%H:%M:%S')}"

    def _tick(self) -> None:
        self.query_one("#clock", Static).update(self._text())


if __name__ == "__main__":
    BareClock().run()
