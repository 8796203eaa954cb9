"""Harness of the feed tests: a board fed by the live feeds of a running simulator, bounded
waits on conditions, and the comparison of the board with the simulator's truth.

    async with feeds_display(sim, tmp_path, caplog) as shown:
        await shown.settled()                      # the board equals sim.truth()
        mark = shown.screen.mark()
        sim.drop("tickets")
        await shown.recovered(Feed.TICKETS, mark)  # RECONNECTING, then LIVE again
        await shown.settled()

The display side is the real one: `DisplayClient` from a config the simulator wrote (with a read
timeout of about three heartbeats), `Feeds` (or one `FeedRunner`) emitting into `Board.apply`.
Every API key and developer token the display sends is recorded, and on a clean exit no log
record and no health report may hold one.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest

from lobby_display.board import Board, BoardSettings, queue_status
from lobby_display.client import DisplayClient, make_http
from lobby_display.config import Settings, load_config
from lobby_display.feeds import (
    CounterDecoder,
    Decoder,
    FeedRunner,
    Feeds,
    FeedTiming,
    load_reference,
)
from lobby_display.models import Counter, QueueState, Ticket
from lobby_display.simulator import SimulatorServer
from lobby_display.updates import Feed, FeedHealth, FeedStatus, ReferenceData, Update

#: Quick reconnection for tests: 50 ms doubling to 0.4 s, healthy after a second.
FAST_TIMING = FeedTiming(
    first_delay=0.05,
    max_delay=0.4,
    healthy_after=1.0,
    health_every=0.2,
    max_event_bytes=100_000,
    reference_retry=0.2,
)
#: The HTTP read timeout of the display: about three heartbeats of the fast simulator (0.3 s).
READ_TIMEOUT = 1.0
LOCALES = ("fr_FR", "en_US")

Load = Callable[[], Awaitable[ReferenceData]]


async def until(
    predicate: Callable[[], object],
    timeout: float = 10.0,
    what: str = "the condition",
    every: float = 0.02,
    explain: Callable[[], object] | None = None,
) -> float:
    """Wait until `predicate()` is true, polling every `every` s; return the seconds waited.

    Raises AssertionError after `timeout` seconds, with `explain()` (if given) in the message.
    """
    loop = asyncio.get_running_loop()
    start = loop.time()
    while not predicate():
        if loop.time() - start > timeout:
            detail = f": {explain()}" if explain is not None else ""
            raise AssertionError(f"{what} did not happen within {timeout} s{detail}")
        await asyncio.sleep(every)
    return loop.time() - start


# --- the board against the truth ------------------------------------------------------------


def differences(
    board: Board,
    truth: Mapping[str, Any],
    feeds: Iterable[Feed] = tuple(Feed),
    limit: int = 8,
) -> list[str]:
    """What the screen shows differently from the simulator's truth ([] when it is the same).

    Compared, for the parts of the screen that `feeds` feed: the current tickets (ids, state,
    label, queue, endpoint); each queue row's status and waiting numbers (per appointment type
    too); the counters' values. Only the queues and counters the board follows count (all of
    them when it was given none).
    """
    compared = set(feeds)
    wanted_queues = set(board.settings.queue_ids) or set(truth["queueStates"])
    wanted_counters = set(board.settings.counter_ids) or set(truth["counters"])
    problems: list[str] = []
    if Feed.TICKETS in compared:
        problems += _ticket_differences(board, truth, wanted_queues)
    if Feed.QUEUES in compared:
        problems += _queue_differences(board, truth, wanted_queues)
    if Feed.COUNTERS in compared:
        values = {view.counter_id: view.value for view in board.counters()}
        true_values = {
            counter_id: Counter.model_validate(record).infos.value
            for counter_id, record in truth["counters"].items()
            if counter_id in wanted_counters
        }
        if values != true_values:
            problems.append(f"counters show {values}, truth {true_values}")
    return problems[:limit]


def _ticket_differences(
    board: Board, truth: Mapping[str, Any], wanted_queues: set[str]
) -> list[str]:
    problems: list[str] = []
    expected = {
        ticket_id: Ticket.model_validate(record)
        for ticket_id, record in truth["tickets"].items()
        if record["queue"]["id"] in wanted_queues
    }
    shown = board.tickets
    missing = sorted(expected.keys() - shown.keys())
    extra = sorted(shown.keys() - expected.keys())
    if missing:
        problems.append(f"{len(missing)} tickets missing, e.g. {missing[:3]}")
    if extra:
        problems.append(f"{len(extra)} tickets that are gone, e.g. {extra[:3]}")
    for ticket_id in sorted(expected.keys() & shown.keys()):
        want, have = expected[ticket_id], shown[ticket_id]
        seen = (have.state, have.label, have.queue.id, have.endpoint.id)
        true = (want.state, want.label, want.queue.id, want.endpoint.id)
        if seen != true:
            problems.append(f"ticket {ticket_id}: shows {seen}, truth {true}")
    return problems


def _queue_differences(
    board: Board, truth: Mapping[str, Any], wanted_queues: set[str]
) -> list[str]:
    problems: list[str] = []
    rows = {view.queue_id: view for view in board.queues()}
    if set(rows) != wanted_queues:
        problems.append(f"queue rows {sorted(rows)} instead of {sorted(wanted_queues)}")
    for queue_id in sorted(wanted_queues & set(rows)):
        state = QueueState.model_validate(truth["queueStates"][queue_id])
        view = rows[queue_id]
        by_type = {
            part.appointment_type_id: (part.waiting_tickets, part.waiting_people)
            for part in view.appointment_types
            if part.appointment_type_id in state.queue_length.by_appointment_type
        }
        true_by_type = {
            type_id: (length.queue_ticket_length, length.queue_people_length)
            for type_id, length in state.queue_length.by_appointment_type.items()
        }
        seen_row = (view.status, view.waiting_tickets, view.waiting_people, by_type)
        true_row = (
            queue_status(state),
            state.queue_length.queue_ticket_length,
            state.queue_length.queue_people_length,
            true_by_type,
        )
        if seen_row != true_row:
            problems.append(f"queue {queue_id}: shows {seen_row}, truth {true_row}")
    return problems


# --- what the display was told --------------------------------------------------------------


@dataclass
class Screen:
    """A board fed by the feeds, with every health report and reference load it was given."""

    board: Board
    reports: list[FeedHealth] = field(default_factory=list)
    references: list[ReferenceData] = field(default_factory=list)

    def emit(self, update: Update) -> None:
        """What the feeds call: apply the update to the board now, and keep what it says."""
        self.board.apply(update, datetime.now(UTC))
        if isinstance(update, FeedHealth):
            self.reports.append(update)
        elif isinstance(update, ReferenceData):
            self.references.append(update)

    def mark(self) -> int:
        """A point in the health reports, to look at what came after it."""
        return len(self.reports)

    def since(self, mark: int, feed: Feed) -> list[FeedHealth]:
        """The feed's reports after `mark`."""
        return [report for report in self.reports[mark:] if report.feed is feed]

    def path(self, feed: Feed, mark: int = 0) -> list[FeedStatus]:
        """The feed's statuses after `mark`, repeats merged (LIVE, RECONNECTING, LIVE...)."""
        statuses: list[FeedStatus] = []
        for report in self.since(mark, feed):
            if not statuses or statuses[-1] is not report.status:
                statuses.append(report.status)
        return statuses

    def outage(self, feed: Feed, mark: int) -> list[FeedStatus]:
        """The feed's statuses after `mark` from its first failure on (LIVE reports made before
        a fault reached the display are left out): [RECONNECTING, ..., LIVE]."""
        path = self.path(feed, mark)
        while path and path[0] is FeedStatus.LIVE:
            path.pop(0)
        return path

    def status(self, feed: Feed) -> FeedStatus | None:
        """The feed's latest status (None before any report)."""
        for report in reversed(self.reports):
            if report.feed is feed:
                return report.status
        return None

    def live(self, feeds: Iterable[Feed] = tuple(Feed)) -> bool:
        """True when every one of `feeds` is LIVE now."""
        return all(self.status(feed) is FeedStatus.LIVE for feed in feeds)

    def failures(self, feed: Feed, mark: int = 0) -> list[FeedHealth]:
        """The feed's reports after `mark` that are not LIVE."""
        return [report for report in self.since(mark, feed) if report.status is not FeedStatus.LIVE]


@dataclass
class Shown:
    """The display side of a test: settings, client, screen, and the feeds running."""

    sim: SimulatorServer
    settings: Settings
    client: DisplayClient
    screen: Screen
    secrets: set[str]
    """Every API key and developer token the display sent."""
    feeds: Feeds | None = None
    runner: FeedRunner | None = None

    @property
    def board(self) -> Board:
        """The board the feeds feed."""
        return self.screen.board

    @property
    def followed(self) -> tuple[Feed, ...]:
        """The feeds running: all three, or the one feed of a lone runner."""
        return (self.runner.feed,) if self.runner is not None else tuple(Feed)

    def differences(self) -> list[str]:
        """What the board shows differently from the simulator's truth now (followed parts)."""
        return differences(self.board, self.sim.truth(), self.followed)

    async def settled(self, timeout: float = 10.0, feeds: Iterable[Feed] | None = None) -> float:
        """Wait until the board equals the simulator's truth (in the parts `feeds` feed, by
        default those followed); return the seconds it took."""
        last: list[str] = []
        compared = self.followed if feeds is None else tuple(feeds)

        def same() -> bool:
            last[:] = differences(self.board, self.sim.truth(), compared)
            return not last

        return await until(same, timeout, "board == truth", explain=lambda: last)

    async def live(self, feeds: Iterable[Feed] = tuple(Feed), timeout: float = 10.0) -> float:
        """Wait until every one of `feeds` is LIVE."""
        chosen = tuple(feeds)
        return await until(
            lambda: self.screen.live(chosen),
            timeout,
            f"{', '.join(chosen)} live",
            explain=lambda: {feed.value: self.screen.status(feed) for feed in chosen},
        )

    async def recovered(self, feed: Feed, mark: int, timeout: float = 10.0) -> float:
        """Wait until `feed` has failed after `mark` and is LIVE again; return the seconds."""
        return await until(
            lambda: (
                self.screen.failures(feed, mark) and self.screen.status(feed) is FeedStatus.LIVE
            ),
            timeout,
            f"{feed} feed failing then live again",
            explain=lambda: self.screen.path(feed, mark),
        )


def display_settings(
    sim: SimulatorServer,
    directory: Path,
    *,
    url: str | None = None,
    api_key: str | None = None,
    read_timeout: float = READ_TIMEOUT,
    place: Mapping[str, Any] | None = None,
    request_timeout: float | None = None,
) -> Settings:
    """A display's settings for `sim` (through `url`, a proxy, when given)."""
    service: dict[str, Any] = {"read_timeout": read_timeout, "connect_timeout": 2.0}
    if request_timeout is not None:
        service["request_timeout"] = request_timeout
    sections: dict[str, Mapping[str, Any]] = {"service": service}
    if place:
        sections["place"] = place
    path = sim.write_config(directory, url=url, api_key=api_key, locales=list(LOCALES), **sections)
    return load_config(path, environ={})


def counters_feed(sim: SimulatorServer) -> Callable[[DisplayClient], Decoder]:
    """The `decoder` argument of `feeds_display` for the counters feed alone (every counter)."""
    return lambda client: CounterDecoder(sim.queue_ids, ["fr_FR"])


@contextlib.asynccontextmanager
async def feeds_display(
    sim: SimulatorServer,
    directory: Path,
    caplog: pytest.LogCaptureFixture,
    *,
    url: str | None = None,
    api_key: str | None = None,
    read_timeout: float = READ_TIMEOUT,
    request_timeout: float | None = None,
    place: Mapping[str, Any] | None = None,
    timing: FeedTiming = FAST_TIMING,
    refresh_every: float = 600.0,
    load: Callable[[DisplayClient, Load], Load] | None = None,
    decoder: Callable[[DisplayClient], Decoder] | None = None,
    start: bool = True,
) -> AsyncIterator[Shown]:
    """A display of `sim` with its feeds running (all three through `Feeds`, or the one feed
    `decoder(client)` makes through a `FeedRunner`); stopped on the way out.

    `load(client, real)` may wrap the reference loader (a service whose lists change). On a
    clean exit, checks that no key or token reached a log record or a health report.
    """
    caplog.set_level(logging.DEBUG, logger="lobby_display")
    caplog.set_level(logging.DEBUG, logger="httpx")
    settings = display_settings(
        sim,
        directory,
        url=url,
        api_key=api_key,
        read_timeout=read_timeout,
        place=place,
        request_timeout=request_timeout,
    )
    secrets: set[str] = set()

    async def record(request: httpx.Request) -> None:
        if key := request.url.params.get("key"):
            secrets.add(key)
        if authorization := request.headers.get("authorization"):
            secrets.add(authorization.partition(" ")[2])

    http = make_http(settings)
    http.event_hooks["request"].append(record)
    client = DisplayClient.from_settings(settings, http=http)
    board = Board(BoardSettings.from_settings(settings))
    shown = Shown(sim, settings, client, Screen(board), secrets)
    task: asyncio.Task[None] | None = None
    async with client:
        if decoder is not None:
            shown.runner = FeedRunner(client, decoder(client), shown.screen.emit, timing=timing)
            run: Callable[[], Coroutine[Any, Any, None]] = shown.runner.run
        else:
            real: Load = functools.partial(load_reference, client, settings.place.id, LOCALES)
            shown.feeds = Feeds(
                client,
                load(client, real) if load is not None else real,
                shown.screen.emit,
                queue_ids=settings.place.queues,
                counter_ids=settings.place.counters,
                langs=LOCALES,
                refresh_every=refresh_every,
                timing=timing,
            )
            run = shown.feeds.run
        if start:
            task = asyncio.create_task(run(), name="feeds under test")
        try:
            yield shown
        finally:
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
    assert task is None or not task.done() or task.cancelled(), "the feeds gave up"
    assert_no_secrets(shown, caplog)


def assert_no_secrets(shown: Shown, caplog: pytest.LogCaptureFixture) -> None:
    """No key or token the display sent is in a log record or a health report."""
    secrets = {secret for secret in shown.secrets if len(secret) >= 8}
    assert secrets, "the display sent no key at all"
    texts = [report.error for report in shown.screen.reports]
    for record in caplog.records:
        if record.name.startswith("lobby_display.simulator"):
            continue  # the simulator is the service, not the display
        texts.append(record.getMessage())
        if record.exc_info and record.exc_info[1] is not None:
            texts.append(logging.Formatter().formatException(record.exc_info))
        if record.exc_text:
            texts.append(record.exc_text)
    leaks = [text[:200] for text in texts if any(secret in text for secret in secrets)]
    assert not leaks, f"secrets in logs or health reports: {leaks[:3]}"
