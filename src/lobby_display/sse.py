"""httpx-sse behind one adapter: the only module that imports it.

`read_events` drives httpx-sse's own (private) decoders to see every chunk, heartbeats included,
and cap the event being assembled; `tests/unit/test_sse.py` fails loudly when an upgrade of the
pinned httpx-sse changes what is used here.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable

import httpx
from httpx_sse import EventSource, ServerSentEvent, SSEError
from httpx_sse._decoders import SSEDecoder, SSELineDecoder  # private: see the module's docstring


class EventTooLarge(Exception):
    """An event larger than the cap."""


def check_event_stream(response: httpx.Response) -> None:
    """Raise `SSEError` unless `response` says it is an event stream (`text/event-stream`)."""
    EventSource(response)._check_content_type()


async def read_events(
    response: httpx.Response,
    max_bytes: int,
    on_bytes: Callable[[], None],
    max_first_bytes: int | None = None,
) -> AsyncIterator[ServerSentEvent]:
    """Decode SSE events from `response`, refusing any event larger than `max_bytes`.

    The first event with data (the feed's snapshot) may reach `max_first_bytes` instead: a big
    place's first page is large, and refusing it would reconnect for ever. Every chunk (a
    heartbeat comment too) calls `on_bytes`, and the size of the event being assembled is checked
    line by line. Events come out as httpx-sse makes them (bug #35: a comment-only block after an
    `id:` line comes out as an event with empty data; the caller drops those).
    """
    lines = SSELineDecoder()
    decoder = SSEDecoder()
    limit = max(max_bytes, max_first_bytes or 0)
    pending = 0
    async for text in response.aiter_text():
        on_bytes()
        for line in lines.decode(text):
            pending += len(line)
            if pending > limit:
                raise EventTooLarge(f"an event of more than {limit} bytes")
            event = decoder.decode(line.rstrip("\n"))
            if not line.rstrip("\r\n"):
                pending = 0  # a block ends here, with an event or (a comment) without
            if event is not None:
                if event.data.strip():
                    limit = max_bytes
                yield event
        if pending + sum(len(part) for part in lines.buffer) > limit:
            raise EventTooLarge(f"an event of more than {limit} bytes")


__all__ = ["EventTooLarge", "SSEError", "ServerSentEvent", "check_event_stream", "read_events"]
