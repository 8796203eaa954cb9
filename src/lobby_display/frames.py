"""The pace of frames: at most one redraw per refresh interval, the interval set by the UI's load.

`FramePacer` draws the updates that arrive between two frames together in the next one, and a
lone update at once; the interval lengthens while the UI thread is busy (why: docs/architecture.md).
"""

from __future__ import annotations

import os
from collections.abc import MutableMapping
from dataclasses import dataclass, field
from typing import Final

#: 60 Hz: the most a TV shows.
FASTEST: Final = 1 / 60
#: How often Textual's screen may compose what the widgets drew (its `TEXTUAL_FPS`). The pacer
#: sets the pace; at Textual's own 60 Hz, a frame drawn just after the last composition waited
#: up to another 16 ms for the next one (10 ms or more at one call in ten on a small PC).
COMPOSE_FPS: Final = 240
#: The longest interval (three frames at 60 Hz): a call is never held back by more than this.
SLOWEST: Final = 0.05
#: The share of the UI thread's time above which frames are spaced out: only a UI that can no
#: longer keep up. Below it every frame is drawn as soon as its data came (spacing frames out
#: on a UI half busy only added their wait to each call, with no work saved).
BUSY: Final = 0.85
#: How the interval moves at each frame (a factor), and how fast the load is followed.
STEP: Final = 1.25
SMOOTHING: Final = 0.3


@dataclass
class FramePacer:
    """When the next frame may be drawn, and how far apart frames are.

    `delay(now)` is the wait before the next frame may be drawn (0: now); `drawn(now, cpu)`
    notes a frame drawn at `now` (a monotonic clock) with the UI thread's CPU clock at `cpu`
    (`time.thread_time()`). Pure: the clocks are passed in.
    """

    fastest: float = FASTEST
    slowest: float = SLOWEST
    busy: float = BUSY
    interval: float = field(init=False)
    """The current refresh interval, in seconds."""
    load: float = field(init=False, default=0.0)
    """The smoothed share of the UI thread's time spent working between frames."""
    _last: float | None = field(init=False, default=None)
    _last_cpu: float = field(init=False, default=0.0)

    def __post_init__(self) -> None:
        self.interval = self.fastest

    def delay(self, now: float) -> float:
        """Seconds to wait before the next frame may be drawn (0 when it may be drawn now)."""
        if self._last is None:
            return 0.0
        return max(0.0, self._last + self.interval - now)

    def drawn(self, now: float, cpu: float) -> None:
        """Note a frame drawn at `now`; adapt the interval to the load since the last one."""
        if self._last is not None:
            wall = now - self._last
            # A frame after a quiet spell says nothing of a burst's load: forget the old one.
            if wall > 4 * self.slowest:
                self.load = 0.0
            elif wall > 0:
                share = min(1.0, max(0.0, (cpu - self._last_cpu) / wall))
                self.load += SMOOTHING * (share - self.load)
            if self.load > self.busy:
                self.interval = min(self.slowest, self.interval * STEP)
            elif self.load < self.busy / 2:
                self.interval = max(self.fastest, self.interval / STEP)
        self._last, self._last_cpu = now, cpu

    @property
    def keeps_up(self) -> bool:
        """The UI keeps up with its updates: frames are not spaced out."""
        return self.interval <= self.fastest

    @property
    def rate(self) -> float:
        """The most frames per second at the current interval."""
        return 1 / self.interval


def compose_promptly(environ: MutableMapping[str, str] | None = None) -> None:
    """Let Textual compose a frame as soon as it is drawn (`COMPOSE_FPS`), unless the
    environment sets `TEXTUAL_FPS`; before Textual is imported, which reads it once."""
    target = os.environ if environ is None else environ
    target.setdefault("TEXTUAL_FPS", str(COMPOSE_FPS))


__all__ = ["BUSY", "COMPOSE_FPS", "FASTEST", "SLOWEST", "FramePacer", "compose_promptly"]
