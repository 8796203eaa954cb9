"""A soak: an accelerated day through the kiosk's own wiring, with memory that stays flat.

The simulator runs in its own process (`lobby-display simulate --speed 720`: every arrival,
call, pause and break of a day happens 720 times as often, so 44 s hold nine hours), so that
the objects counted here are the display's alone. The app is the kiosk's (`kiosk.build_app`:
the real feeds, board saves, sound hooks, two locales rotating), headless. The place's clock is
set so that its local midnight (a new day: counters restart, the day's history empties) falls
in the warm-up, whatever the hour the test runs at (run by CI at 23:45 in Paris, the old
version of this test crossed midnight in the day it measured, and failed).

The display's count of objects moves within a band of about 10,000 with what is on the screen:
most of that is its drawing caches (bounded by their sizes, tests/ui/test_drawn.py), filling
and emptied at each locale rotation. What they and the board hold (bounded by its limits,
checked here too) is not counted; the rest rises by about 1,500 objects over the day measured,
most of it Textual's box-model caches filling (16 entries a widget at most: seen growing by two
a second, in step with the objects they hold). A leak rises faster: the median count at the end
of the day may not exceed the median at its start by more than `FLAT` objects; and the number
of widgets and the board's sizes must stay as they were.
"""

from __future__ import annotations

import gc
import re
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from types import FunctionType, ModuleType

import pytest

from lobby_display.board import Board
from lobby_display.config import load_config
from lobby_display.kiosk import build_app
from lobby_display.updates import FeedStatus
from lobby_display.widgets.drawn import alive_caches
from tests.helpers.reliability import SIZE

SPEED = 720
QUEUES = 8
#: Seconds of the warm-up: the feeds go live, the place's midnight passes (`MIDNIGHT_AFTER`),
#: and the drawing caches fill.
WARM_UP = 20.0
#: Seconds of the day measured after the warm-up: a count of objects each second.
DAY = 24.0
#: Seconds into the run of the place's midnight (local hours before midnight at the start, at
#: `SPEED`).
MIDNIGHT_AFTER = 10.0
#: Counts at each end of the day whose medians are compared.
ENDS = 5
#: Growth of the display's object count (the median of the last `ENDS` counts over that of the
#: first) that counts as flat. Seen without a leak: +1,240 to +1,555 objects (four runs, two
#: at a time); with a leak injected during the day, of 200 objects a second: +4,167; of 400 a
#: second: +7,198.
FLAT = 2_500


def place_time_zone(now: datetime) -> str:
    """A time zone in which the simulated place's local midnight comes `MIDNIGHT_AFTER` seconds
    after `now` (to the hour: `Etc/GMT` zones have whole hours)."""
    hours_before_midnight = MIDNIGHT_AFTER * SPEED / 3600
    local_hour = 24 - hours_before_midnight
    # Etc/GMT+N is N hours behind UTC (POSIX signs); they run from -14 to +12.
    offset = round(local_hour - now.hour - now.minute / 60)
    offset = (offset + 12) % 24 - 12
    return f"Etc/GMT{-offset:+d}" if offset else "Etc/GMT"


@pytest.fixture
def busy_place(tmp_path: Path) -> Iterator[Path]:
    """`lobby-display simulate` at speed 720 in its own process; the config it wrote."""
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "lobby_display",
            "simulate",
            "--port",
            "0",
            "--directory",
            str(tmp_path),
            "--speed",
            str(SPEED),
            "--queues",
            str(QUEUES),
            "--heartbeat",
            "1",
            "--timezone",
            place_time_zone(datetime.now(UTC)),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        lines: list[str] = []
        while "Ctrl-C stops." not in (line := process.stdout.readline()):
            assert line, f"the simulator did not start: {''.join(lines)}"
            lines.append(line)
        config = re.search(r"config\s+(\S+)", "".join(lines))
        assert config, "".join(lines)
        yield Path(config.group(1))
    finally:
        process.terminate()
        process.wait(10)


def objects(board: Board) -> int:
    """Python objects alive after a full collection (those set aside from collection with
    `gc.freeze`, as the app does once its first data was shown, included), less those the
    drawing caches and `board` hold: bounded by the caches' sizes and by the board's limits
    (checked apart), they rise and fall with what the place has and the screen shows."""
    gc.collect()
    return len(gc.get_objects()) + gc.get_freeze_count() - held_by([*alive_caches(), board])


def held_by(roots: list[object]) -> int:
    """How many of the objects the collector tracks (those `objects` counts) are reachable from
    `roots`, classes, functions and modules aside."""
    seen: set[int] = set()
    stack: list[object] = list(roots)
    tracked = 0
    while stack:
        item = stack.pop()
        if id(item) in seen or isinstance(item, type | FunctionType | ModuleType):
            continue
        seen.add(id(item))
        tracked += gc.is_tracked(item)
        stack.extend(gc.get_referents(item))
    return tracked


async def test_an_accelerated_day_leaves_memory_flat(busy_place: Path) -> None:
    settings = load_config(busy_place, environ={})
    # Counted from here on: the pytest process holds every other test's objects too.
    app = build_app(settings)
    before = objects(app.board)
    app.animation_level = "none"
    async with app.run_test(size=SIZE) as pilot:
        started = time.monotonic()

        def live() -> bool:
            health = app.board.health(app._clock()).values()
            return all(view.status is FeedStatus.LIVE for view in health)

        while not live():
            assert time.monotonic() - started < 30, "the feeds never became live"
            await pilot.pause(0.1)
        while time.monotonic() - started < WARM_UP:
            await pilot.pause(0.2)
        warm_widgets = len(list(app.screen.walk_children()))
        samples = []
        counts = []
        while time.monotonic() - started < WARM_UP + DAY:
            await pilot.pause(0.5)
            samples.append(app.board.sizes())
            if len(samples) % 2 == 0:
                counts.append(objects(app.board) - before)
        end_widgets = len(list(app.screen.walk_children()))
        assert app.is_running and live(), "the screen is not live at the end of the day"

    # A leak lifts every count after it: compare the middle counts of each end of the day.
    growth = statistics.median(counts[-ENDS:]) - statistics.median(counts[:ENDS])
    assert growth <= FLAT, f"the display's objects grew by {growth:,.0f}: {counts}"
    assert end_widgets == warm_widgets, f"widgets: {warm_widgets} -> {end_widgets}"
    limits = app.board.settings
    for sizes in samples:
        assert sizes.recent_calls <= limits.recent_calls
        assert sizes.seen_calls <= limits.seen_calls_limit
        assert sizes.queues == QUEUES and sizes.counters == QUEUES
    # The day went on: tickets came and went, so the flat counts are not those of a still place.
    assert len({sizes.current_tickets for sizes in samples}) > 3
