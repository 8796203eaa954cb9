"""The pace of frames: at most one redraw per refresh interval, and whether the UI keeps up.

`FramePacer` draws the updates that arrive between two frames together in the next one, and a
lone update at once. It follows the UI thread's load, so the screen knows when the UI no longer
keeps up with its updates (why: docs/architecture.md).
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import MutableMapping
from dataclasses import dataclass, field
from typing import Final

#: 60 Hz: the most a TV shows.
FASTEST: Final = 1 / 60
#: How often Textual's screen may compose what the widgets drew (its `TEXTUAL_FPS`). The pacer
#: sets the pace; at Textual's own 60 Hz, a frame drawn just after the last composition waited
#: up to another 16 ms for the next (10 ms or more at one call in ten on a small PC). And after
#: a composition longer than its period (a call's frame: 10 to 20 ms), Textual's clock (8.2.8)
#: skips to the tick after next: a call drawn just after such a frame waited one to two periods,
#: 4 to 8 ms at 240 Hz (this host at 10 events/s, the latest calls); at 1000 Hz, 1 to 2 ms.
#: The clock ticks only while something is to be drawn: a faster one costs nothing when idle.
COMPOSE_FPS: Final = 1000
#: How long the UI thread may keep Python's interpreter lock while another thread waits for it.
#: Textual's writer thread takes each composed frame to the terminal and needs the lock a few
#: times a frame; at Python's 5 ms, a frame written while the UI thread went on with the next
#: updates reached the terminal late (this host at 100 events/s, end of composition to the
#: frame read on the terminal: p90 15 ms, p99 28-29 ms; at 0.5 ms, p90 7 ms, p99 10-13 ms).
WRITE_HANDOVER: Final = 0.0005
#: The share of the UI thread's time (running or waiting for a core) above which the UI no
#: longer keeps up with its updates (it is saturated): the screen then holds nothing back
#: behind the calls, which only piled it onto later ones. At 0.85, issue 16's host at 100
#: events/s, busy but not saturated, crossed it often, and a rotation's queue board went
#: before calls that came with it (interleaved rounds, the latest such call against the
#: others' p99: +33, +38, -30 ms at 0.85, +18, +5, -5 ms at 0.95; the saturated 48 ms host
#: alike: +5, +16 and -2, +42 ms; docs/benchmarks.md, twelfth round).
#: Frames are not spaced out at any load: spaced out to 20 Hz above this share, every call
#: waited for its frame's turn and the work saved was small (issue 16's host at 100 events/s:
#: p99 130 and 236 ms spaced, 109 and 141 ms not; the 48 ms host, saturated: p50 251 against
#: 190 ms; docs/benchmarks.md, tenth round). Frames coalesce on their own on a busy UI: the
#: updates that come while one is made are drawn together in the next.
BUSY: Final = 0.95
#: How fast the load is followed (the weight of the last frame's share).
SMOOTHING: Final = 0.3
#: A frame this long after the last says nothing of a burst's load: the old load is forgotten.
QUIET: Final = 0.2


@dataclass
class FramePacer:
    """When the next frame may be drawn, and whether the UI keeps up.

    `delay(now)` is the wait before the next frame may be drawn (0: now); `drawn(now, busy)`
    notes a frame drawn at `now` (a monotonic clock) with the UI thread's busy clock at `busy`
    (a `BusyClock`: the time it ran or waited for a core). Pure: the clocks are passed in.

    A frame drawn with `paces=False` (the queue rows and counters alone, at most once a second:
    `app.QUEUES_REDRAW_PERIOD`) counts for the load but does not hold back the next frame: a
    call that came just after such a frame waited a refresh interval for nothing the TV would
    have shown apart (it shows both frames at its next refresh): 4 calls of 178 at 10 events/s,
    three of the latest twelve (docs/benchmarks.md, sixteenth round).
    """

    interval: float = FASTEST
    """The refresh interval, in seconds: at most one frame per interval."""
    busy: float = BUSY
    load: float = field(init=False, default=0.0)
    """The smoothed share of the UI thread's time spent working between frames."""
    _last: float | None = field(init=False, default=None)
    _last_busy: float = field(init=False, default=0.0)
    _last_paced: float | None = field(init=False, default=None)

    def delay(self, now: float) -> float:
        """Seconds to wait before the next frame may be drawn (0 when it may be drawn now)."""
        if self._last_paced is None:
            return 0.0
        return max(0.0, self._last_paced + self.interval - now)

    def drawn(self, now: float, busy: float, paces: bool = True) -> None:
        """Note a frame drawn at `now`; follow the load since the last one. The next frame
        waits a refresh interval after it unless it does not `paces`."""
        if paces:
            self._last_paced = now
        if self._last is not None:
            wall = now - self._last
            if wall > QUIET:
                self.load = 0.0
            elif wall > 0:
                share = min(1.0, max(0.0, (busy - self._last_busy) / wall))
                self.load += SMOOTHING * (share - self.load)
        self._last, self._last_busy = now, busy

    @property
    def keeps_up(self) -> bool:
        """The UI keeps up with its updates: its load is under `busy`."""
        return self.load <= self.busy


#: Linux's scheduler statistics of the calling thread: nanoseconds run, nanoseconds waited on a
#: run queue (for a core, or for a CPU quota's next period), time slices.
SCHEDSTAT: Final = "/proc/thread-self/schedstat"


class BusyClock:
    """Seconds the thread that first reads it has run or waited to run: the pacer's load clock.

    A thread that is never idle but waits for a core, behind other programs on a small PC's
    two cores (foot drawing the frames) or a CPU quota (a systemd `CPUQuota`, the benchmark's
    played hosts), is busy all the time, yet its CPU clock says it works half of it or less
    (a fifth on the played 48 ms host): the pacer would never see that the UI no longer keeps
    up. Where the scheduler's statistics cannot be read (not Linux), the thread's CPU time.

    The statistics file stays open: `/proc/thread-self` names the thread that opened it, and
    reading an open file again costs a tenth of opening it each frame (1.3 against 10 µs).
    """

    def __init__(self, schedstat: str = SCHEDSTAT) -> None:
        self._schedstat = schedstat
        self._fd: int | None = None

    def __call__(self) -> float:
        if self._fd is None:
            try:
                self._fd = os.open(self._schedstat, os.O_RDONLY)
            except OSError:
                self._fd = -1
        if self._fd >= 0:
            try:
                ran, waited = os.pread(self._fd, 128, 0).split()[:2]
                return (int(ran) + int(waited)) / 1e9
            except (OSError, ValueError):
                pass
        return time.thread_time()

    def close(self) -> None:
        """Close the statistics file; a later reading opens it again, for the calling thread."""
        if self._fd is not None and self._fd >= 0:
            os.close(self._fd)
        self._fd = None


def compose_promptly(environ: MutableMapping[str, str] | None = None) -> None:
    """Let Textual compose a frame as soon as it is drawn (`COMPOSE_FPS`), unless the
    environment sets `TEXTUAL_FPS`; before Textual is imported, which reads it once."""
    target = os.environ if environ is None else environ
    target.setdefault("TEXTUAL_FPS", str(COMPOSE_FPS))


def write_promptly() -> None:
    """Let Textual's writer thread take a composed frame to the terminal without waiting for the
    UI thread's turn on the interpreter lock to end (`WRITE_HANDOVER`); a shorter turn set
    before is kept."""
    sys.setswitchinterval(min(sys.getswitchinterval(), WRITE_HANDOVER))


__all__ = [
    "BUSY",
    "COMPOSE_FPS",
    "FASTEST",
    "QUIET",
    "SCHEDSTAT",
    "WRITE_HANDOVER",
    "BusyClock",
    "FramePacer",
    "compose_promptly",
    "write_promptly",
]
