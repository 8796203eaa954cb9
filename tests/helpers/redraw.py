"""Waiting for the screen to settle, and a busy minute of updates: what the redraw tests and the
drawing tests share."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

from textual.strip import Strip

from lobby_display.app import LobbyApp
from lobby_display.models import QueueState
from lobby_display.updates import QueueStateChanged, QueueStatesSnapshot, TicketRemoved, Update
from tests.helpers.boards import (
    FakeSource,
    at,
    call,
    counters,
    queue_states,
    screen_text,
    wait_for,
)


def drawn(app: LobbyApp) -> list[Strip]:
    """Every line of the screen as the terminal has it (text and styles)."""
    return list(app.screen._compositor.render_strips())


async def settled(app: LobbyApp, pilot: Any, source: FakeSource | None = None) -> None:
    """Wait until what was pushed is taken, no redraw is pending (the queue rows' deferred one
    included) and the screen has caught up: by condition, not by a pause racing the timers."""
    if source is not None:
        await wait_for(pilot, lambda: source._queue.empty())
    await pilot.pause()
    await wait_for(
        pilot,
        lambda: (
            not app._dirty
            and app._queues_timer is None
            and not app._flush_scheduled
            and not app._later_pending
        ),
    )
    await pilot.pause()


def recorded_frames(app: LobbyApp) -> list[str]:
    """The text of each frame the app writes from now on (a frame the terminal would show)."""
    frames: list[str] = []
    display = app._display

    def written(screen: Any, renderable: Any) -> None:
        display(screen, renderable)
        if renderable is not None:
            frames.append(screen_text(app))

    app._display = written  # type: ignore[method-assign]
    return frames


async def until(predicate: Callable[[], bool], timeout: float = 30.0) -> None:
    """Let the loop turn until `predicate` holds, without a pilot's pause (which makes a
    frame)."""
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "the app did not get there in time"
        await asyncio.sleep(0.01)


def waiting(states: QueueStatesSnapshot, queue_id: str, tickets: int) -> QueueStateChanged:
    """The queue's state with `tickets` waiting (and as many people)."""
    raw = states.states[queue_id].model_dump(by_alias=True)
    raw["queueLength"] = {"queueTicketLength": tickets, "queuePeopleLength": tickets}
    return QueueStateChanged(QueueState.model_validate(raw))


def busy_morning() -> list[Update]:
    """Calls, tickets leaving, waiting counts and counters changing, as a busy minute brings."""
    states = queue_states()
    updates: list[Update] = []
    for number in range(8):
        moment = at(number)
        updates.append(call(f"t-b{number}", f"B{100 + number}", "q-civil", 1 + number % 3, moment))
        updates.append(waiting(states, "q-pass", 7 + number))
        updates.append(waiting(states, "q-civil", 30 - 3 * number))
        if number % 3 == 0:
            updates.append(counters({"c-visitors": 128 + number, "c-served": 97 + 10 * number}))
    updates.append(TicketRemoved("t-b3"))
    updates.append(counters({"c-visitors": 9, "c-served": 1234567, "c-year": 12480}))
    return updates
