"""The three live feeds of the display service, kept connected and decoded into board updates.

One `FeedRunner` per feed (tickets, queue state, counters) connects, reads the stream through
`sse`, decodes it (`decoding`) and reconnects with `backoff` whatever ends it; `Feeds` runs the
three and the reference data. docs/architecture.md says what a feed may send.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import random
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Final, Protocol

import httpx
from pydantic import ValidationError

from lobby_display.activity import ACTIVITY
from lobby_display.auth import ClockNotSynchronised
from lobby_display.backoff import FIRST_DELAY, HEALTHY_AFTER, MAX_DELAY, Backoff
from lobby_display.decoding import CounterDecoder as CounterDecoder
from lobby_display.decoding import NotUnderstood as NotUnderstood
from lobby_display.decoding import QueueStateDecoder as QueueStateDecoder
from lobby_display.decoding import TicketDecoder as TicketDecoder
from lobby_display.models import (
    Counter,
    Endpoint,
    Place,
    Queue,
    Ticket,
    TicketPage,
    clean_text,
)
from lobby_display.redaction import redact
from lobby_display.service_errors import (
    AuthRefused,
    DisplayServiceError,
    KeyRefused,
    describe_transport_error,
    failed,
)
from lobby_display.sse import EventTooLarge, SSEError, check_event_stream, read_events
from lobby_display.updates import (
    Clock,
    Feed,
    FeedHealth,
    FeedStatus,
    QueueStateChanged,
    ReferenceData,
    TicketChanged,
    TicketsSnapshot,
    Update,
    utc_now,
)

log = logging.getLogger(__name__)

#: Longest error a feed reports (on screen, in its health and in the log).
MAX_ERROR_LENGTH: Final = 400

Emit = Callable[[Update], None]


@dataclass(frozen=True, slots=True)
class FeedTiming:
    """How feeds retry and what they accept; the defaults are the field-tested ones."""

    first_delay: float = FIRST_DELAY
    """Seconds before the first reconnection attempt."""
    max_delay: float = MAX_DELAY
    """Cap of the doubling delay."""
    healthy_after: float = HEALTHY_AFTER
    """A stream that lasted this long resets the delay to `first_delay`."""
    max_event_bytes: int = 1_000_000
    """Largest event accepted; a larger one is dropped and answered with a fresh snapshot."""
    max_first_bytes: int = 64_000_000
    """Largest first message (the snapshot: 50 tickets, every queue's state, every counter)."""
    health_every: float = 5.0
    """Seconds between health reports while live (each carries the time of the last message)."""
    reference_retry: float = 60.0
    """Seconds between reference-data reloads after an unknown id (at most)."""

    def backoff(self, rng: random.Random, clock: Callable[[], float] | None = None) -> Backoff:
        """The reconnect policy with these delays (`clock`: seconds, monotonic by default)."""
        if clock is None:
            return Backoff(self.first_delay, self.max_delay, self.healthy_after, rng=rng)
        return Backoff(self.first_delay, self.max_delay, self.healthy_after, rng=rng, clock=clock)


class FeedClient(Protocol):
    """What the feeds need of the REST client (see client.py)."""

    http: httpx.AsyncClient
    deadline: float
    """Seconds a stream has to answer (the key request it may wait on included)."""

    @property
    def auth(self) -> httpx.Auth:
        """The API key on every request, renewed when refused (`auth.ApiKeyAuth`)."""
        ...

    def url(self, path: str) -> str: ...

    async def current_tickets(
        self, queue_ids: Sequence[str], *, first: TicketPage | None = None
    ) -> list[Ticket]: ...


class FeedObserver(Protocol):
    """Sees what the feeds receive, as it arrives (a recording: `recording.Recorder`)."""

    def message(self, feed: Feed, data: str, first: bool) -> None:
        """A feed's message, its data as sent (`first`: a connection's first message)."""

    def follow(self, feed: Feed, records: Callable[[], Any]) -> None:
        """A feed is live; `records()` gives its records as known now, as a first message."""

    def answer(self, path: str, query: Mapping[str, str], body: Any) -> None:
        """A REST route's JSON answer (the client's `observer`)."""


class _Refused(Exception):
    """The service refused the API key, even a fresh one."""


class _NoAnswer(Exception):
    """The stream's answer did not come within the request deadline."""


class Decoder(Protocol):
    """What a feed runner needs of a feed's decoder."""

    feed: Feed
    path: str

    def params(self) -> dict[str, str]: ...

    async def snapshot(self, data: Any) -> list[Update]: ...

    async def change(self, data: Any) -> list[Update]: ...

    def records(self) -> Any:
        """The feed's records as known now, written as the feed's first message."""
        ...


# --- one feed, kept alive ------------------------------------------------------------------------


class FeedRunner:
    """Keeps one feed connected forever and emits its updates and health."""

    def __init__(
        self,
        client: FeedClient,
        decoder: Decoder,
        emit: Emit,
        *,
        timing: FeedTiming | None = None,
        clock: Clock = utc_now,
        rng: random.Random | None = None,
        on_unknown_ids: Callable[[Iterable[Update]], None] | None = None,
        observer: FeedObserver | None = None,
    ) -> None:
        self.client = client
        self.decoder = decoder
        self.observer = observer
        self.emit = emit
        self.timing = timing or FeedTiming()
        self.clock = clock
        self.rng = rng or random.Random()  # noqa: S311 - jitter, not cryptography
        self.on_updates = on_unknown_ids
        self.feed = decoder.feed
        self.backoff = self.timing.backoff(self.rng, self._seconds)
        """Reconnection delays; a connection is up (`started`) from its first message."""
        self.last_message_at: datetime | None = None
        self._last_health_at: datetime | None = None
        self._stream_retry = 0.0
        """The stream's `retry:` (seconds, at most `max_delay`): a floor for the reconnections
        after it, until a stream opens again (the service sends its wish on every stream)."""
        self._retry_after = 0.0
        """An error answer's `Retry-After` (seconds): a floor for the next attempt only."""

    @property
    def attempt(self) -> int:
        """Failed attempts since the last healthy connection (0 while none failed)."""
        return self.backoff.attempt

    def _seconds(self) -> float:
        return self.clock().timestamp()

    def _health(self, status: FeedStatus, error: str = "", next_try: float | None = None) -> None:
        now = self.clock()
        self._last_health_at = now
        self.emit(
            FeedHealth(
                feed=self.feed,
                status=status,
                at=now,
                last_message_at=self.last_message_at,
                attempt=self.attempt,
                next_try_at=now + timedelta(seconds=next_try) if next_try is not None else None,
                error=error,
            )
        )

    def _alive(self) -> None:
        self.last_message_at = self.clock()
        ACTIVITY.last_message_at[self.feed] = self.last_message_at

    async def run(self) -> None:
        """Connect, read, reconnect; returns only when cancelled."""
        self._health(FeedStatus.CONNECTING)
        while True:
            refused = False
            try:
                await self._stream()
                error = "the service closed the stream"
            except asyncio.CancelledError:
                raise
            except _Refused as problem:
                refused, error = True, str(problem)
            except _NoAnswer as problem:
                error = str(problem)
            except AuthRefused as problem:
                # No key to be had (the developer token is refused), or a ticket page refused
                # even with a fresh key; the message names the route and never the key.
                refused, error = True, str(problem)
            except (DisplayServiceError, ClockNotSynchronised) as problem:
                # The stream was answered with an error, or a REST call of the feed (a ticket
                # page, a new key) failed, in words.
                error = str(problem)
            except NotUnderstood as problem:
                error = f"could not read {problem}; reading a fresh snapshot"
            except EventTooLarge as problem:
                error = f"dropped {problem}; reading a fresh snapshot"
            except httpx.ReadTimeout:
                error = f"no data for {self.client.http.timeout.read:g} s (stalled)"
            except httpx.TimeoutException:
                error = "the service did not answer in time"
            except httpx.ConnectError:
                error = "cannot connect to the service"
            except httpx.RemoteProtocolError:
                error = "the connection dropped"
            except httpx.ReadError:
                # Its message is empty: a read fails this way when the connection is reset.
                error = "the connection broke (reset by the network or the service)"
            except httpx.HTTPError as problem:
                error = f"the connection broke ({describe_transport_error(problem)})"
            except SSEError as problem:
                error = f"not an event stream ({problem})"
            except (ValidationError, ValueError) as problem:
                error = f"unreadable message ({type(problem).__name__})"
            except Exception as problem:  # a kiosk never dies of one bad message
                log.exception("%s feed: unexpected error", self.feed)
                error = f"unexpected error ({type(problem).__name__})"
            # The words may quote the service (an event's action, an error body): cleaned of
            # every control character before the screen, the log or `screenshot` gets them.
            # (Masked before the cut, which could leave half a secret, and after the cleaning,
            # which could join one split by control characters.)
            error = redact(clean_text(redact(error), MAX_ERROR_LENGTH))
            # However the connection ended, a long healthy one starts the backoff afresh.
            delay = max(self.backoff.next_delay(), self._stream_retry, self._retry_after)
            self._retry_after = 0.0
            ACTIVITY.reconnections[self.feed] += 1
            log.warning(
                "%s feed: %s; reconnecting in %.1f s (attempt %d)",
                self.feed,
                error,
                delay,
                self.attempt,
            )
            self._health(FeedStatus.REFUSED if refused else FeedStatus.RECONNECTING, error, delay)
            await asyncio.sleep(delay)

    async def _stream(self) -> None:
        """One connection: returns when the server closes it cleanly; raises otherwise."""
        headers = {"Accept": "text/event-stream", "Cache-Control": "no-store"}
        url = self.client.url(self.decoder.path)
        async with contextlib.AsyncExitStack() as stack:
            try:
                # The answer's head within the deadline: a server dripping it byte by byte, or
                # a request for a new key that hangs, cannot hold the feed.
                async with asyncio.timeout(self.client.deadline):
                    resp = await stack.enter_async_context(
                        self.client.http.stream(
                            "GET",
                            url,
                            params=self.decoder.params(),
                            headers=headers,
                            auth=self.client.auth,
                        )
                    )
            except TimeoutError:
                raise _NoAnswer(
                    f"the service did not answer within {self.client.deadline:g} s "
                    "(service.request_timeout)"
                ) from None
            except KeyRefused:
                raise  # no key to be had at all: said as the key source says it
            except AuthRefused as refusal:
                # Refused, and renewed once if it could be: the next attempt (after the
                # backoff) starts with the key there is then.
                raise _Refused(_refusal_words(refusal)) from None
            if resp.status_code != 200:
                self._retry_after = _retry_after(resp)
                raise failed(f"the {self.feed} feed", resp)
            check_event_stream(resp)
            # A stream is open: an earlier stream's `retry:` no longer holds.
            self._stream_retry = 0.0
            await self._read(resp)

    async def _read(self, response: httpx.Response) -> None:
        first = True
        async for event in read_events(
            response, self.timing.max_event_bytes, self._alive, self.timing.max_first_bytes
        ):
            if event.retry is not None:
                # Bounded: `retry: 999999999999` (a proxy's, a misconfigured service's) must not
                # hold the feed for years; the backoff's cap is the longest the feed waits.
                self._stream_retry = min(event.retry / 1000, self.timing.max_delay)
            if not event.data.strip():
                continue  # a heartbeat (httpx-sse bug #35 turns pings after an id into these)
            if self.observer is not None:
                self.observer.message(self.feed, event.data, first)
            data = json.loads(event.data)
            if first:
                updates = await self.decoder.snapshot(data)
            else:
                updates = await self.decoder.change(data)
            for update in updates:
                self.emit(update)
            if self.on_updates is not None:
                self.on_updates(updates)
            now = self.clock()
            if first:
                first = False
                if self.observer is not None:
                    self.observer.follow(self.feed, self.decoder.records)
                self.backoff.started()
                self._health(FeedStatus.LIVE)
            elif (
                self._last_health_at is None
                or (now - self._last_health_at).total_seconds() >= self.timing.health_every
            ):
                self._health(FeedStatus.LIVE)


def _refusal_words(refusal: AuthRefused) -> str:
    """What a feed says when the service refuses its key (the route quotes no key)."""
    if refusal.renewal is None:
        return "the service refused a fresh API key too"
    return (
        f"the service refused the API key ({refusal.status}) and no new key could be had: "
        f"{refusal.renewal}"
    )


def _retry_after(response: httpx.Response) -> float:
    """Seconds the service asks us to wait (`Retry-After`), capped at five minutes."""
    value = response.headers.get("retry-after", "")
    try:
        return min(300.0, max(0.0, float(value)))
    except ValueError:
        return 0.0


# --- all feeds, with their reference data --------------------------------------------------------


class ReferenceClient(Protocol):
    """What loading reference data needs of the REST client (see client.py)."""

    async def place(self, place_id: str, langs: Sequence[str] | None = None) -> Place: ...

    async def place_queues(
        self, place_id: str, langs: Sequence[str] | None = None
    ) -> dict[str, Queue]: ...

    async def place_endpoints(
        self, place_id: str, langs: Sequence[str] | None = None
    ) -> dict[str, Endpoint]: ...

    async def place_counters(
        self, place_id: str, langs: Sequence[str] | None = None
    ) -> dict[str, Counter]: ...


async def load_reference(
    client: ReferenceClient, place_id: str, langs: Sequence[str]
) -> ReferenceData:
    """The place, its queues, endpoints and counters, with names in every locale shown."""
    place, queues, endpoints, counters = await asyncio.gather(
        client.place(place_id, langs),
        client.place_queues(place_id, langs),
        client.place_endpoints(place_id, langs),
        client.place_counters(place_id, langs),
    )
    return ReferenceData(place=place, queues=queues, endpoints=endpoints, counters=counters)


class _IdsChanged(Exception):
    """The place's queues or counters changed: the feeds restart for the new set."""


class Feeds:
    """Runs every feed of one screen: the three streams and the reference data.

    The queues and counters shown are the configured ones, or every one of the place. When they
    are known before the reference data (configured, or `known_ids`: those of the place when the
    display last ran, from its saved board), the streams start at once, beside the first load of
    the reference data; otherwise the reference data comes first. Reference data (names in every
    locale) is reloaded periodically and soon after a ticket or a state names a queue or
    endpoint it does not know; when the place's set of queues or counters changes (and none are
    configured), the streams restart for the new set.
    """

    def __init__(
        self,
        client: FeedClient,
        load_reference: Callable[[], Any],
        emit: Emit,
        *,
        queue_ids: Sequence[str] = (),
        counter_ids: Sequence[str] = (),
        langs: Sequence[str] = (),
        refresh_every: float = 1800.0,
        timing: FeedTiming | None = None,
        clock: Clock = utc_now,
        rng: random.Random | None = None,
        known_ids: tuple[Sequence[str], Sequence[str]] = ((), ()),
        observer: FeedObserver | None = None,
    ) -> None:
        self.client = client
        self.load_reference = load_reference
        self.observer = observer
        """Sees every message (a recording); the client's REST answers are its `observer`'s."""
        self.emit = emit
        self.configured_queues = list(queue_ids)
        self.configured_counters = list(counter_ids)
        self.known_queues = sorted(known_ids[0])
        self.known_counters = sorted(known_ids[1])
        self.langs = list(langs)
        self.refresh_every = refresh_every
        self.timing = timing or FeedTiming()
        self.clock = clock
        self.rng = rng or random.Random()  # noqa: S311 - jitter, not cryptography
        self.reference: ReferenceData | None = None
        self.runners: list[FeedRunner] = []
        self._refresh_soon = asyncio.Event()
        self._last_soon: datetime | None = None

    async def run(self) -> None:
        """Run until cancelled."""
        queues, counters = self.ids()
        if not (queues and counters):
            # Which streams to open is not known yet: the place's reference data says.
            await self._first_reference()
        while True:
            try:
                async with asyncio.TaskGroup() as group:
                    for runner in self._make_runners():
                        group.create_task(runner.run())
                    group.create_task(self._refresh_reference())
            except* _IdsChanged:
                log.info("the place's queues or counters changed; restarting the feeds")

    def ids(self) -> tuple[list[str], list[str]]:
        """The queue ids and counter ids followed now (the known ones until the reference data
        has loaded)."""
        reference = self.reference
        if reference is None:
            queues, counters = self.known_queues, self.known_counters
        else:
            queues, counters = sorted(reference.queues), sorted(reference.counters)
        return self.configured_queues or queues, self.configured_counters or counters

    def _make_runners(self) -> list[FeedRunner]:
        queues, counters = self.ids()
        decoders: list[Decoder] = []
        idle: list[Feed] = []
        if queues:
            decoders.append(TicketDecoder(self.client, queues))
            decoders.append(QueueStateDecoder(queues))
        else:
            idle += [Feed.TICKETS, Feed.QUEUES]
        if counters:
            decoders.append(CounterDecoder(counters, self.langs))
        else:
            idle.append(Feed.COUNTERS)
        for feed in idle:
            # Nothing to follow: the part is empty but true, so it is shown as live.
            log.info("%s feed: nothing to follow at this place", feed)
            self.emit(FeedHealth(feed=feed, status=FeedStatus.LIVE, at=self.clock()))
        self.runners = [
            FeedRunner(
                self.client,
                decoder,
                self.emit,
                timing=self.timing,
                clock=self.clock,
                rng=self.rng,
                on_unknown_ids=self._check_ids,
                observer=self.observer,
            )
            for decoder in decoders
        ]
        return self.runners

    async def _first_reference(self) -> None:
        backoff = self.timing.backoff(self.rng)
        while True:
            try:
                await self._load()
                return
            except asyncio.CancelledError:
                raise
            except Exception as problem:
                delay = backoff.next_delay()
                error = redact(f"cannot load the place's queues and names: {_describe(problem)}")
                log.warning("%s; retrying in %.1f s", error, delay)
                now = self.clock()
                # No key to be had (the credentials are refused, or cannot sign) is said as such.
                refused = isinstance(problem, AuthRefused)
                for feed in Feed:
                    self.emit(
                        FeedHealth(
                            feed=feed,
                            status=FeedStatus.REFUSED if refused else FeedStatus.CONNECTING,
                            at=now,
                            attempt=backoff.attempt,
                            next_try_at=now + timedelta(seconds=delay),
                            error=error,
                        )
                    )
                await asyncio.sleep(delay)

    async def _load(self) -> None:
        reference = await self.load_reference()
        self.reference = reference
        self.emit(reference)

    async def _refresh_reference(self) -> None:
        before = self.ids()
        backoff = self.timing.backoff(self.rng)
        while True:
            if self.reference is not None:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._refresh_soon.wait(), self.refresh_every)
                self._refresh_soon.clear()
            # else: the streams started before the first load of the reference data (below).
            try:
                await self._load()
            except asyncio.CancelledError:
                raise
            except Exception as problem:
                error = redact(_describe(problem))
                if self.reference is not None:
                    log.warning("could not reload names, keeping the old ones: %s", error)
                    continue
                # The streams run meanwhile, and a restored board shows the last names.
                delay = backoff.next_delay()
                log.warning(
                    "cannot load the place's queues and names: %s; retrying in %.1f s",
                    error,
                    delay,
                )
                await asyncio.sleep(delay)
                continue
            if self.ids() != before:
                raise _IdsChanged

    def _check_ids(self, updates: Iterable[Update]) -> None:
        """Ask for fresh reference data when an update names a queue or endpoint we do not know."""
        reference = self.reference
        if reference is None:
            return
        for update in updates:
            unknown = False
            if isinstance(update, TicketChanged | TicketsSnapshot):
                tickets = (update.ticket,) if isinstance(update, TicketChanged) else update.tickets
                unknown = any(
                    (ticket.endpoint.id and ticket.endpoint.id not in reference.endpoints)
                    or (ticket.queue.id and ticket.queue.id not in reference.queues)
                    for ticket in tickets
                )
            elif isinstance(update, QueueStateChanged):
                unknown = update.state.queue_id not in reference.queues
            if unknown:
                self._request_refresh()
                return

    def _request_refresh(self) -> None:
        now = self.clock()
        if (
            self._last_soon is not None
            and (now - self._last_soon).total_seconds() < self.timing.reference_retry
        ):
            return
        self._last_soon = now
        log.info("an unknown queue or endpoint appeared; reloading names")
        self._refresh_soon.set()


def _describe(problem: BaseException) -> str:
    return clean_text(str(problem) or type(problem).__name__, 200)
