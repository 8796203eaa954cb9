"""The rig of the reliability suite: the real screen, the real feeds, the simulator, the proxy.

`open_rig()` starts a simulator on 127.0.0.1, a fault proxy in front of it, and the real
`LobbyApp` headless (`run_test`) with the real feeds reading the simulator through the proxy:
built by the kiosk's own function (`source.feeds_source`: the signing process, the credentials
retry, `refresh_every`, the REST client), with one difference: the reconnection delays are
shortened (0.05 s doubling to 0.5 s instead of 1 s to 30 s) so a whole matrix of faults fits in
seconds. The simulator's own story is slowed
to nothing (speed 0.001): the place changes only when a test makes it (bursts), so
`sim.truth()` holds still while the screen catches up.

`Rig.settle()` waits until the screen shows the truth again: every queue's name with its
waiting tickets, every counter's value, and the label of the last call at the top of the recent
calls, with every feed live; it fails with the differences and the screen when that does not
happen in time.
"""

from __future__ import annotations

import asyncio
import re
import threading
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from textual.pilot import Pilot

from lobby_display.app import LobbyApp
from lobby_display.config import load_config
from lobby_display.feeds import FeedTiming
from lobby_display.simulator import ServiceAccount, SimulatorServer
from lobby_display.simulator.dialect import Dialect
from lobby_display.simulator.proxy import ThreadedFaultProxy
from lobby_display.source import feeds_source
from lobby_display.updates import FeedStatus

#: Reconnection delays of the suite (the kiosk's are 1 s doubling to 30 s).
FAST_RETRY = FeedTiming(first_delay=0.05, max_delay=0.5)
#: A screen as large as a TV's terminal: five queues fit on one page.
SIZE = (160, 50)
#: How long the screen has to show the truth again after a fault.
SETTLE_SECONDS = 20.0


def screen_lines(app: LobbyApp) -> list[str]:
    """The text on the screen, line by line, as a viewer reads it."""
    return [strip.text for strip in app.screen._compositor.render_strips()]


@dataclass
class CallLog:
    """Labels of the calls the simulator published (state 200), in order."""

    labels: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def last(self) -> str | None:
        """The label of the latest call."""
        with self.lock:
            return self.labels[-1] if self.labels else None

    def count(self) -> int:
        """How many calls so far."""
        with self.lock:
            return len(self.labels)


def log_calls(sim: SimulatorServer) -> CallLog:
    """Wrap the simulator's `publish` to note every call it sends."""
    calls = CallLog()

    def install(simulator: Any) -> None:
        original = simulator.publish

        def publish(events: list[Any]) -> None:
            with calls.lock:
                calls.labels.extend(
                    str(event.data.get("label"))
                    for event in events
                    if event.feed == "tickets" and event.data.get("state") == 200
                )
            original(events)

        simulator.publish = publish

    sim.call(install)
    return calls


@dataclass
class Rig:
    """A running simulator, proxy and screen."""

    sim: SimulatorServer
    proxy: ThreadedFaultProxy
    app: LobbyApp
    pilot: Pilot[None]
    calls: CallLog
    queue_names: dict[str, str]
    counter_names: dict[str, str]

    async def burst(self, count: int, rate: float = 400.0) -> None:
        """Make `count` ticket events (arrivals, calls, tickets done) and wait until sent."""
        self.sim.burst(rate, count=count)
        await asyncio.to_thread(self.sim.wait_burst, 30)

    async def call_one(self) -> str:
        """Make single events until one of them is a call; its label."""
        before = self.calls.count()
        for _ in range(40):
            self.sim.burst(1000, count=1)
            await asyncio.to_thread(self.sim.wait_burst, 10)
            if self.calls.count() > before:
                label = self.calls.last
                assert label is not None
                return label
        raise AssertionError("the simulator made no call in 40 events")

    def mismatches(self, *, latest_call: bool = True) -> list[str]:
        """How the screen differs from the truth now (empty: it shows the truth)."""
        truth = self.sim.truth()
        lines = screen_lines(self.app)
        problems = []
        for queue_id, state in truth["queueStates"].items():
            name = self.queue_names[queue_id]
            waiting = state["queueLength"]["queueTicketLength"]
            shown = _waiting_on_screen(lines, name)
            if shown != waiting:
                problems.append(f"queue {name!r}: {shown} waiting on screen, {waiting} in truth")
        for counter_id, counter in truth["counters"].items():
            name = self.counter_names[counter_id]
            value = int(counter["infos"]["value"])
            shown = _counter_on_screen(lines, name)
            if shown != value:
                problems.append(f"counter {name!r}: {shown} on screen, {value} in truth")
        last = self.calls.last
        top = _latest_call_on_screen(lines)
        if latest_call and last is not None and top != last:
            problems.append(f"latest call: {top!r} on screen, {last!r} in truth")
        now = self.app._clock()
        for feed, view in self.app.board.health(now).items():
            if view.status is not FeedStatus.LIVE:
                problems.append(f"{feed} feed: {view.status} ({view.error})")
        return problems

    async def settle(self, why: str, timeout: float = SETTLE_SECONDS) -> None:
        """Wait until the screen shows the truth; fails after `timeout` seconds.

        First the queues, counters and feeds; then one more call is made, which must reach the
        top of the recent calls. (Calls made while a feed was down arrive in a snapshot, where
        calls of the same second have no order: only a call made while live says which is the
        latest.)
        """
        self.assert_up(why)
        await self._until_true(why, timeout, latest_call=False)
        await self.call_one()
        await self._until_true(f"{why}, then a call", timeout, latest_call=True)
        self.assert_up(why)

    async def _until_true(self, why: str, timeout: float, *, latest_call: bool) -> None:
        started = time.monotonic()
        problems: list[str] = []
        while time.monotonic() - started < timeout:
            problems = self.mismatches(latest_call=latest_call)
            if not problems:
                return
            await self.pilot.pause(0.1)
        screen = "\n".join(screen_lines(self.app))
        raise AssertionError(
            f"after {why}: the screen did not return to the truth in {timeout:.0f} s:\n"
            + "\n".join(problems)
            + f"\n--- screen ---\n{screen}"
        )

    async def until(self, what: str, holds: Callable[[], bool], timeout: float = 10.0) -> None:
        """Wait until `holds()`; fails after `timeout` seconds."""
        started = time.monotonic()
        while not holds():
            if time.monotonic() - started > timeout:
                raise AssertionError(f"{what}: not within {timeout:.0f} s")
            await self.pilot.pause(0.05)

    def status_line(self) -> str:
        """The bottom line of the screen."""
        return screen_lines(self.app)[-1].strip()

    def assert_up(self, why: str) -> None:
        """The app runs and its source of updates was never restarted."""
        assert self.app.is_running, f"after {why}: the app stopped"
        sources = [worker for worker in self.app.workers if worker.name == "source"]
        assert sources and not sources[0].is_finished, f"after {why}: the feeds stopped"


def _waiting_on_screen(lines: list[str], name: str) -> int | None:
    pattern = re.compile(rf"(?<!\S){re.escape(name)}\s{{2,}}.*?(\d+) tickets?\b")
    for line in lines:
        match = pattern.search(line)
        if match:
            return int(match.group(1))
    return None


def _counter_on_screen(lines: list[str], name: str) -> int | None:
    pattern = re.compile(rf"(?<!\S){re.escape(name)}\s+([\d,]+)(?!\S)")
    for line in lines:
        if "ticket" in line:
            continue
        match = pattern.search(line)
        if match:
            return int(match.group(1).replace(",", ""))
    return None


def _latest_call_on_screen(lines: list[str]) -> str | None:
    """The label on the first row of the recent calls (under the Ticket/Counter heading)."""
    for index, line in enumerate(lines):
        if re.search(r"│ Ticket\s+Counter\s+Time", line) and index + 1 < len(lines):
            row = lines[index + 1].split("│")
            cells = row[1].split() if len(row) > 1 else []
            return cells[0] if cells else None
    return None


@asynccontextmanager
async def open_rig(
    folder: Path,
    account: ServiceAccount,
    *,
    queues: int = 5,
    tickets: int = 120,
    seed: int = 21,
    dialect: Dialect | None = None,
) -> AsyncIterator[Rig]:
    """Simulator, proxy and the live screen reading through the proxy; yields once it is live.

    `dialect`: how the simulator writes its events (partial updates, bare ticket events, ...).
    """
    sim = SimulatorServer(
        seed=seed,
        speed=0.001,
        queues=queues,
        tickets=tickets,
        heartbeat=0.3,
        retry_ms=100,
        key_grace=1.0,
        account=account,
        dialect=dialect or Dialect(),
    )
    sim.start()
    proxy = ThreadedFaultProxy(sim.port)
    try:
        proxy.start()
        config = sim.write_config(
            folder,
            url=proxy.url,
            locales=["en_US"],
            # Three heartbeats: a stall is noticed in 1.5 s.
            service={"read_timeout": 1.5},
        )
        settings = load_config(config, environ={})
        app = LobbyApp(settings, feeds_source(settings, timing=FAST_RETRY))
        app.animation_level = "none"
        place = sim.simulator.place
        queue_names = {qid: queue.names["en_US"] for qid, queue in place.queues.items()}
        calls = log_calls(sim)
        async with app.run_test(size=SIZE) as pilot:
            rig = Rig(sim, proxy, app, pilot, calls, queue_names, dict(queue_names))
            await rig.settle("start")
            yield rig
    finally:
        proxy.stop()
        sim.stop()
