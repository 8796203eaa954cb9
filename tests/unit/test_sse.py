"""The SSE adapter: what it takes from httpx-sse (private parts included) and how it reads.

`TestPinnedHttpxSse` fails loudly when an upgrade of httpx-sse changes a name, a signature or a
behaviour that `lobby_display.sse` relies on: fix `sse.py` (and FIELD-NOTES) before the pin.
"""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator, Callable
from importlib import metadata

import httpx
import pytest

from lobby_display.sse import EventTooLarge, SSEError, check_event_stream, read_events

PINNED = "0.4.3"


def _parameters(function: Callable[..., object]) -> list[str]:
    return list(inspect.signature(function).parameters)


class TestPinnedHttpxSse:
    """What `lobby_display.sse` uses of httpx-sse, as 0.4.3 has it."""

    def test_the_pinned_version(self) -> None:
        assert metadata.version("httpx-sse") == PINNED, (
            "httpx-sse is no longer the pinned version: check the private decoders and the "
            "content-type check that lobby_display.sse uses, then update this test"
        )

    def test_the_private_decoders_exist_with_their_signatures(self) -> None:
        from httpx_sse import _decoders

        assert _parameters(_decoders.SSELineDecoder) == []
        assert _parameters(_decoders.SSELineDecoder.decode) == ["self", "text"]
        assert _parameters(_decoders.SSEDecoder) == []
        assert _parameters(_decoders.SSEDecoder.decode) == ["self", "line"]
        assert isinstance(_decoders.SSELineDecoder().buffer, list)

    def test_the_private_content_type_check_exists(self) -> None:
        from httpx_sse import EventSource

        assert _parameters(EventSource) == ["response"]
        assert _parameters(EventSource._check_content_type) == ["self"]

    def test_the_line_decoder_splits_on_every_sse_line_end_across_chunks(self) -> None:
        from httpx_sse._decoders import SSELineDecoder

        lines = SSELineDecoder()
        assert lines.decode("data: a\r\ndata: b\rdata: c\nda") == ["data: a", "data: b", "data: c"]
        assert "".join(lines.buffer) == "da"  # what is pending (the adapter measures it)
        assert lines.decode("ta: d\r") == []  # a trailing CR waits: it may be half of CRLF
        assert lines.decode("\n\n") == ["data: d", ""]
        assert lines.buffer == []

    def test_the_event_decoder_assembles_blocks(self) -> None:
        from httpx_sse import ServerSentEvent
        from httpx_sse._decoders import SSEDecoder

        decoder = SSEDecoder()
        block = ["event: update", "data: {", "data: }", "id: 7", "retry: 1500"]
        assert [decoder.decode(line) for line in block] == [None] * 5
        event = decoder.decode("")
        assert isinstance(event, ServerSentEvent)
        assert (event.event, event.data, event.id, event.retry) == ("update", "{\n}", "7", 1500)
        assert decoder.decode(": ping") is None  # a comment
        # Bug #35 (FIELD-NOTES): after an id, a comment-only block is an event with empty data.
        # The feeds drop such events; should it be fixed, this line goes, nothing else.
        empty = decoder.decode("")
        assert empty is not None and empty.data == ""
        decoder = SSEDecoder()
        assert decoder.decode(": ping") is None and decoder.decode("") is None

    @pytest.mark.parametrize(
        ("content_type", "ok"),
        [
            ("text/event-stream", True),
            ("text/event-stream; charset=utf-8", True),
            ("application/json", False),
            ("", False),
        ],
    )
    def test_the_content_type_check(self, content_type: str, ok: bool) -> None:
        headers = {"content-type": content_type} if content_type else {}
        response = httpx.Response(200, headers=headers)
        if ok:
            check_event_stream(response)
        else:
            with pytest.raises(SSEError, match="text/event-stream"):
                check_event_stream(response)


async def stream(chunks: list[bytes]) -> AsyncIterator[bytes]:
    for chunk in chunks:
        yield chunk


def response(chunks: list[bytes]) -> httpx.Response:
    return httpx.Response(
        200, headers={"content-type": "text/event-stream"}, content=stream(chunks)
    )


class TestEventReader:
    async def test_events_heartbeats_and_ids(self) -> None:
        seen: list[str] = []
        beats = 0

        def alive() -> None:
            nonlocal beats
            beats += 1

        chunks = [b'id: 1\ndata: {"a": 1}\n\n', b": ping\n\n", b'data: {"b"', b": 2}\n\n"]
        async for event in read_events(response(chunks), 1000, alive):
            seen.append(event.data)
        # The ping after an id comes out as an empty event (httpx-sse bug #35): the runner drops it.
        assert [data for data in seen if data] == ['{"a": 1}', '{"b": 2}']
        assert beats == 4

    async def test_an_event_over_the_cap_is_refused_before_it_is_whole(self) -> None:
        chunks = [b"data: " + b"x" * 600, b"x" * 600, b"x" * 600, b"\n\n"]
        with pytest.raises(EventTooLarge):
            async for _ in read_events(response(chunks), 1000, lambda: None):
                pass

    async def test_the_first_message_may_be_larger_than_later_events(self) -> None:
        big = b"data: " + b"x" * 1500 + b"\n\n"
        chunks = [big, b"data: {}\n\n", big]
        seen = []
        with pytest.raises(EventTooLarge):
            async for event in read_events(
                response(chunks), 1000, lambda: None, max_first_bytes=4000
            ):
                seen.append(len(event.data))
        assert seen == [1500, 2]

    async def test_heartbeats_do_not_add_up_to_an_oversized_event(self) -> None:
        chunks = [b": ping\n\n"] * 300 + [b'data: {"a": 1}\n\n']
        seen = [event.data async for event in read_events(response(chunks), 100, lambda: None)]
        assert seen == ['{"a": 1}']

    async def test_the_retry_field_comes_through(self) -> None:
        chunks = [b"retry: 700\ndata: {}\n\n"]
        (event,) = [event async for event in read_events(response(chunks), 100, lambda: None)]
        assert event.retry == 700
