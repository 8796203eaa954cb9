"""Drawings let go at once: what the screen drops (rows of another locale, strips of a frame)
is freed by reference counting, not left in reference cycles for Python's full collections,
which paused a busy screen on a small PC for 20 to 140 ms in the middle of a burst of calls."""

from __future__ import annotations

import gc
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from rich.segment import Segment
from rich.style import Style
from textual.strip import Strip

from lobby_display.app import LobbyApp
from lobby_display.widgets.drawn import DrawnCache, alive_caches, free_strips_promptly
from tests.helpers.boards import Clock, FakeSource, at, call, make_board, make_settings, wait_for
from tests.helpers.redraw import busy_morning, settled


@contextmanager
def collector_off() -> Iterator[Callable[[], list[object]]]:
    """No automatic collection inside the block; the function it gives collects and returns
    what only the cycle collector could free since the block began (or since its last call)."""
    gc.collect()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)

    def cyclic_garbage() -> list[object]:
        gc.collect()
        found = list(gc.garbage)
        gc.garbage.clear()
        return found

    try:
        yield cyclic_garbage
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()


def strip(text: str) -> Strip:
    return Strip([Segment(text, Style(bold=True))], len(text))


def test_a_drawn_cache_keeps_the_most_recently_used() -> None:
    cache: DrawnCache[str, int] = DrawnCache(3)
    for number, key in enumerate("abc"):
        cache.set(key, number)
    assert cache.get("a") == 0  # now the most recently used
    cache.set("d", 3)
    assert sorted(cache.keys()) == ["a", "c", "d"], "b, the least recently used, went"
    cache.discard("c")
    cache.discard("missing")
    assert len(cache) == 2 and cache.get("c") is None
    cache.clear()
    assert len(cache) == 0


def test_every_drawn_cache_alive_is_known_and_none_gone() -> None:
    # The soak counts the objects of a day without what the caches hold (bounded by their sizes).
    kept: DrawnCache[str, int] = DrawnCache(2)
    gone: DrawnCache[str, int] = DrawnCache(2)
    gone_id = id(gone)
    del gone
    alive = alive_caches()
    assert any(cache is kept for cache in alive)
    assert all(id(cache) != gone_id for cache in alive if cache is not kept)


def test_what_a_drawn_cache_drops_is_freed_at_once() -> None:
    with collector_off() as cyclic_garbage:
        cache: DrawnCache[int, list[Strip]] = DrawnCache(8)
        for number in range(20):  # 12 dropped as the least recently used
            cache.set(number, [strip(f"row {number}")])
        cache.discard(19)
        cache.clear()
        del cache
        assert cyclic_garbage() == []


# A fresh interpreter: no screen has kept Textual's strips out of cycles yet, as in a test
# that draws a widget in an app of its own before any LobbyApp ran.
FIRST_DRAWING = textwrap.dedent(
    """
    import gc
    from rich.segment import Segment
    from rich.style import Style
    from textual.strip import Strip
    from lobby_display.widgets.big_label import BigLabel  # its module keeps drawings

    gc.collect()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)
    line = Strip([Segment("A031", Style(bold=True))], 4)
    assert line.divide([4]) == [line] and line.crop_extend(0, 4, None) is line
    del line
    gc.collect()
    print(sum(isinstance(item, Strip) for item in gc.garbage))
    """
)


def test_a_widgets_drawings_are_freed_at_once_though_no_screen_ran_before() -> None:
    """A widget's module keeps drawings that outlive its app (CI once found a label drawn by a
    lone widget's test in a cycle when a later screen dropped it): importing it is enough."""
    run = subprocess.run(
        [sys.executable, "-c", FIRST_DRAWING], capture_output=True, text=True, check=False
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "0", "a strip was left in a reference cycle"


def test_strips_divided_or_cropped_whole_are_freed_at_once() -> None:
    free_strips_promptly()
    free_strips_promptly()  # twice is once
    with collector_off() as cyclic_garbage:
        line = strip("Passports  12 waiting")
        width = line.cell_length
        assert line.divide([width]) == [line]
        assert line.divide([width, width + 5]) == [line]
        assert line.divide(iter([width])) == [line]
        assert line.crop_extend(0, width, None) is line
        # What the strip answers otherwise is Textual's own.
        assert [part.text for part in line.divide([9, width])] == ["Passports", "  12 waiting"]
        assert [part.text for part in line.divide([width, width])] == [line.text, ""]
        assert line.crop_extend(0, width + 3, None).text == "Passports  12 waiting   "
        del line
        assert cyclic_garbage() == []


async def test_a_busy_screen_leaves_no_drawing_to_the_cycle_collector() -> None:
    """Calls, queue rows and counters changing, and the locales taking turns: every strip the
    screen drew and let go is freed without a full collection."""
    clock, source = Clock(at(10)), FakeSource()
    settings = make_settings(locales=["en_US", "fr_FR"], rotation_seconds=10)
    app = LobbyApp(settings, source, clock=clock, board=make_board(settings, at(-600)))
    app.animation_level = "none"
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_for(pilot, lambda: app.recent_calls.visible_rows != ())
        await settled(app, pilot)
        shown = set()
        with collector_off() as cyclic_garbage:
            cyclic_garbage()  # what start-up left
            for round_ in range(3):
                for update in busy_morning():
                    source.push(update)
                    await pilot.pause(0.002)
                source.push(call(f"t-r{round_}", f"R{round_:03}", "q-civil", 2, at(20)))
                clock.advance(10)
                app.tick()  # the other locale: every line drawn anew
                await settled(app, pilot, source)
                shown.add(app.shown_locale)
            drawings = [item for item in cyclic_garbage() if isinstance(item, Strip | Segment)]
    assert shown == {"en_US", "fr_FR"}
    assert drawings == [], f"{len(drawings)} strips and segments were left in reference cycles"
