"""The pipe between the feeds' process and the screen's: what the child sends arrives whole and
in order however the pipe cuts it; what cannot be read stops the relay with a reason."""

from __future__ import annotations

import asyncio
import io
import logging
import pickle
import struct
from collections import Counter
from datetime import UTC, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lobby_display.activity import Activity
from lobby_display.feed_process import (
    ACTIVITY_KIND,
    LOG,
    UPDATE,
    ActivityReport,
    MessageError,
    Messages,
    _relay,
)
from lobby_display.updates import Feed, FeedHealth, FeedStatus, TicketRemoved, Update

AT = datetime(2026, 11, 29, 9, 30, tzinfo=UTC)


def sent(*messages: tuple[str, object]) -> bytes:
    """The bytes the child writes for `messages` (its own writer)."""
    out = io.BytesIO()
    writer = Messages(out)
    for kind, payload in messages:
        writer.send(kind, payload)
    return out.getvalue()


def relayed(data: bytes, cuts: list[int], activity: Activity | None = None) -> list[Update]:
    """What the screen's side emits when `data` arrives cut at `cuts`."""
    got: list[Update] = []

    async def run() -> None:
        stream = asyncio.StreamReader()
        start = 0
        for cut in [*sorted(cuts), len(data)]:
            stream.feed_data(data[start:cut])
            start = cut
        stream.feed_eof()
        await _relay(stream, got.append, activity or Activity())

    asyncio.run(run())
    return got


UPDATES: list[Update] = [
    FeedHealth(feed=Feed.TICKETS, status=FeedStatus.LIVE, at=AT, last_message_at=AT),
    *[TicketRemoved(ticket_id=f"T{number:03}" * (1 + number % 7)) for number in range(40)],
]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=2_000), max_size=12))
def test_updates_arrive_whole_and_in_order_however_the_pipe_cuts_them(cuts: list[int]) -> None:
    data = sent(*[(UPDATE, update) for update in UPDATES])
    assert relayed(data, [cut % len(data) for cut in cuts]) == UPDATES


def test_activity_adds_up_and_log_records_are_logged_here(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="lobby_display.feeds")
    activity = Activity(reconnections=Counter({"tickets": 2}), key_renewals=1)
    first = ActivityReport({"tickets": AT}, Counter({"tickets": 1, "queues": 1}), 1)
    data = sent(
        (ACTIVITY_KIND, first),
        (LOG, (logging.WARNING, "lobby_display.feeds", "the tickets feed ended")),
        (UPDATE, UPDATES[0]),
    )
    assert relayed(data, [5], activity) == [UPDATES[0]]
    # Added to what an earlier feeds' process counted: a restart does not reset the counts.
    assert activity.reconnections == Counter({"tickets": 3, "queues": 1})
    assert activity.key_renewals == 2
    assert activity.last_message_at == {"tickets": AT}
    assert [(r.name, r.levelno, r.getMessage()) for r in caplog.records] == [
        ("lobby_display.feeds", logging.WARNING, "the tickets feed ended")
    ]


def test_a_message_that_cannot_be_read_stops_the_relay_with_a_reason() -> None:
    good = sent((UPDATE, UPDATES[0]))
    body = b"not a pickle"
    with pytest.raises(MessageError, match="unreadable"):
        relayed(good + struct.pack(">I", len(body)) + body, [])
    with pytest.raises(MessageError, match="a message of 4294967295 bytes"):
        relayed(good + b"\xff\xff\xff\xff", [])


def test_a_message_is_a_length_and_a_pickle_of_its_kind_and_payload() -> None:
    data = sent((UPDATE, UPDATES[1]))
    (length,) = struct.unpack(">I", data[:4])
    assert length == len(data) - 4
    assert pickle.loads(data[4:]) == (UPDATE, UPDATES[1])
