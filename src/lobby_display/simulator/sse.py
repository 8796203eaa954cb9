"""Server-sent events: the feeds' subscribers, event framing, heartbeats and stream faults.

Event ids only grow on a connection; a quiet connection gets `: ping` comments; faults act per
feed (stall, close, drop, reset).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from starlette.types import Receive, Scope, Send

from lobby_display.simulator.transport import ConnectionRegistry, cut, reset
from lobby_display.updates import Feed

log = logging.getLogger(__name__)

#: Bytes a subscriber may have waiting before it is dropped as too slow.
MAX_BUFFERED_BYTES: Final = 64 * 1024 * 1024
#: Largest write at once: queued events are sent together up to this size.
MAX_WRITE_BYTES: Final = 256 * 1024

Command = Literal["close", "drop", "reset"]
#: Makes an event's data for a subscriber's `langs` (None: every locale).
Encoder = Callable[[tuple[str, ...] | None], bytes]


def frame(data: bytes, event_id: int | None = None, event: str | None = None) -> bytes:
    """One SSE message: optional `event:` and `id:` lines, then the data (one line per line)."""
    head = b""
    if event:
        head += b"event: " + event.encode() + b"\n"
    if event_id is not None:
        head += b"id: " + str(event_id).encode() + b"\n"
    lines = data.split(b"\n")
    return head + b"".join(b"data: " + line + b"\n" for line in lines) + b"\n"


HEARTBEAT: Final = b": ping\n\n"


@dataclass(eq=False)
class Subscriber:
    """One open SSE connection."""

    feed: Feed
    queue_ids: frozenset[str] | None
    """Only events of these queues (counters: these counter ids); None: all."""
    langs: tuple[str, ...] | None
    client: Any = None
    buffer: deque[bytes] = field(default_factory=deque)
    buffered: int = 0
    wake: asyncio.Event = field(default_factory=asyncio.Event)
    command: Command | None = None
    gone: bool = False

    def push(self, chunk: bytes) -> None:
        """Queue bytes for this connection (dropping it when it falls too far behind)."""
        if self.command is not None:
            return
        if self.buffered + len(chunk) > MAX_BUFFERED_BYTES:
            log.warning("a %s subscriber fell too far behind; dropping it", self.feed)
            self.order("drop")
            return
        self.buffer.append(chunk)
        self.buffered += len(chunk)
        self.wake.set()

    def order(self, command: Command) -> None:
        """Ask the connection to close, drop or reset."""
        if self.command is None:
            self.command = command
        self.wake.set()


class FeedHub:
    """The subscribers of the three feeds; publishes events and applies feed faults."""

    def __init__(
        self,
        heartbeat: float = 15.0,
        retry_ms: int | None = 3000,
        registry: ConnectionRegistry | None = None,
    ) -> None:
        self.heartbeat = heartbeat
        self.retry_ms = retry_ms
        self.registry = registry if registry is not None else ConnectionRegistry()
        self.last_id: dict[Feed, int] = dict.fromkeys(Feed, 0)
        self.published: dict[Feed, int] = dict.fromkeys(Feed, 0)
        self.subscribers: dict[Feed, set[Subscriber]] = {feed: set() for feed in Feed}
        self.after_first: dict[Feed, bytes] = {}
        """Data sent to every new connection of a feed right after its first message (a fault:
        an event no client knows, say, so that the feed never stays live)."""
        self._stalled: dict[Feed, bool] = dict.fromkeys(Feed, False)
        self._unstall_handles: dict[Feed, asyncio.TimerHandle] = {}
        self.closed = False

    # --- publishing --------------------------------------------------------------------------

    def publish(
        self, feed: Feed, queue_id: str | None, encode: Encoder, event: str | None = None
    ) -> int:
        """Send one event to the feed's subscribers that want it; returns its id."""
        self.last_id[feed] += 1
        self.published[feed] += 1
        event_id = self.last_id[feed]
        cache: dict[tuple[str, ...] | None, bytes] = {}
        for subscriber in self.subscribers[feed]:
            if (
                queue_id is not None
                and subscriber.queue_ids is not None
                and queue_id not in subscriber.queue_ids
            ):
                continue
            langs = subscriber.langs if feed == Feed.COUNTERS else None
            chunk = cache.get(langs)
            if chunk is None:
                chunk = cache[langs] = frame(encode(langs), event_id, event)
            subscriber.push(chunk)
        return event_id

    def publish_raw(self, feed: Feed, data: bytes, event: str | None = None) -> int:
        """Send the same bytes as data to every subscriber of the feed (faults)."""
        return self.publish(feed, None, lambda _langs: data, event)

    # --- faults ------------------------------------------------------------------------------

    def feeds(self, feed: Feed | str | None) -> list[Feed]:
        """The feeds a fault applies to: one, or all for None."""
        return list(Feed) if feed is None else [Feed(feed)]

    def order(self, feed: Feed | str | None, command: Command) -> int:
        """Close, drop or reset every connection of the feed(s); returns how many."""
        count = 0
        for one in self.feeds(feed):
            for subscriber in list(self.subscribers[one]):
                subscriber.order(command)
                count += 1
        return count

    def stall(self, feed: Feed | str | None, seconds: float | None = None) -> None:
        """Stop sending anything (heartbeats too) on the feed(s), for `seconds` or until resumed."""
        loop = asyncio.get_running_loop()
        for one in self.feeds(feed):
            self._stalled[one] = True
            handle = self._unstall_handles.pop(one, None)
            if handle is not None:
                handle.cancel()
            if seconds is not None:
                self._unstall_handles[one] = loop.call_later(seconds, self.resume, one)

    def resume(self, feed: Feed | str | None = None) -> None:
        """End a stall: queued events go out at once."""
        for one in self.feeds(feed):
            self._stalled[one] = False
            handle = self._unstall_handles.pop(one, None)
            if handle is not None:
                handle.cancel()
            for subscriber in self.subscribers[one]:
                subscriber.wake.set()

    def is_stalled(self, feed: Feed) -> bool:
        """True while the feed is stalled."""
        return self._stalled[feed]

    def close_all(self) -> None:
        """End every stream cleanly and refuse new ones (the server is stopping)."""
        self.closed = True
        for handle in self._unstall_handles.values():
            handle.cancel()
        self._unstall_handles.clear()
        self._stalled = dict.fromkeys(Feed, False)
        self.order(None, "close")

    def counts(self) -> dict[str, int]:
        """Open connections per feed."""
        return {feed.value: len(subscribers) for feed, subscribers in self.subscribers.items()}

    # --- streaming ---------------------------------------------------------------------------

    async def stream(
        self, subscriber: Subscriber, first: bytes, scope: Scope, receive: Receive, send: Send
    ) -> None:
        """Serve one SSE connection: first message, then events and heartbeats until it ends.

        `subscriber` must already be registered (before `first` was rendered), so no event
        between the snapshot and the stream is lost.
        """
        feed = subscriber.feed
        subscriber.client = scope.get("client")
        watcher = asyncio.create_task(_watch_disconnect(receive, subscriber))
        try:
            await send(
                {
                    "type": "http.response.start",
                    "status": 200,
                    "headers": [
                        (b"content-type", b"text/event-stream; charset=utf-8"),
                        (b"cache-control", b"no-store"),
                        (b"x-accel-buffering", b"no"),
                    ],
                }
            )
            # A stalled feed sends nothing at all, its first message included: a connection
            # made during a stall waits (headers sent) until the stall ends.
            while self._stalled[feed] and not subscriber.gone and subscriber.command is None:
                subscriber.wake.clear()
                await subscriber.wake.wait()
            if subscriber.gone:
                return
            opening = b""
            if self.retry_ms is not None:
                opening = b"retry: " + str(self.retry_ms).encode() + b"\n"
            opening += frame(first, self.last_id[feed])
            if (after := self.after_first.get(feed)) is not None:
                opening += frame(after)
            await send({"type": "http.response.body", "body": opening, "more_body": True})
            last_write = time.monotonic()
            while True:
                if subscriber.gone:
                    return
                if subscriber.command is not None:
                    await self._end(subscriber, scope, send)
                    return
                stalled = self._stalled[feed]
                if subscriber.buffer and not stalled:
                    await send(
                        {"type": "http.response.body", "body": _take(subscriber), "more_body": True}
                    )
                    last_write = time.monotonic()
                    continue
                subscriber.wake.clear()
                if stalled:
                    await subscriber.wake.wait()
                    continue
                timeout = self.heartbeat - (time.monotonic() - last_write)
                if timeout <= 0:
                    await send({"type": "http.response.body", "body": HEARTBEAT, "more_body": True})
                    last_write = time.monotonic()
                    continue
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(subscriber.wake.wait(), timeout)
        finally:
            self.subscribers[feed].discard(subscriber)
            watcher.cancel()

    async def _end(self, subscriber: Subscriber, scope: Scope, send: Send) -> None:
        command = subscriber.command
        if command == "close":
            # A clean end, as a service's: what was queued before it is sent first (a replay
            # that plays a burst of messages then a recorded reconnection must deliver them).
            while subscriber.buffer and not self._stalled[subscriber.feed] and not subscriber.gone:
                await send(
                    {"type": "http.response.body", "body": _take(subscriber), "more_body": True}
                )
            await send({"type": "http.response.body", "body": b"", "more_body": False})
            return
        transport = self.registry.find(scope.get("client"))
        if transport is None:
            # No way to reach the socket (another HTTP implementation): end abruptly instead.
            raise ConnectionAbortedError("simulated connection drop")
        if command == "reset":
            reset(transport)
        else:
            cut(transport)
        # Let the server see the connection go before the response is abandoned.
        for _ in range(50):
            if subscriber.gone:
                break
            await asyncio.sleep(0.01)


def _take(subscriber: Subscriber) -> bytes:
    """Queued chunks joined, up to MAX_WRITE_BYTES (at least one chunk)."""
    parts = [subscriber.buffer.popleft()]
    size = len(parts[0])
    while subscriber.buffer and size + len(subscriber.buffer[0]) <= MAX_WRITE_BYTES:
        chunk = subscriber.buffer.popleft()
        parts.append(chunk)
        size += len(chunk)
    subscriber.buffered -= size
    return b"".join(parts)


async def _watch_disconnect(receive: Receive, subscriber: Subscriber) -> None:
    """Mark the subscriber gone when the client goes away."""
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            subscriber.gone = True
            subscriber.wake.set()
            return
