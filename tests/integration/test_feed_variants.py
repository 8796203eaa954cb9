"""Every reading of the feeds the spec allows, through a scripted day: the real feeds and board
against the simulator speaking each dialect (partial updates, bare ticket events, ticket maps,
counter maps, legacy names, date shapes, a first page shorter than the total), over real HTTP.

After every step of the day (calls, a recall, arrivals, a queue turning full, a pause, booking
closing, tickets served and canceled, closing time) the board must equal the simulator's truth,
record by record: every current ticket (state, label, queue, counter, calls and recalls), every
queue state whole (flags, waiting numbers per appointment type, first availabilities, hours)
and every counter. The feeds must stay live the whole day: an update the display could not
merge would make it reconnect for a fresh snapshot, which would hide a wrong merge.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from lobby_display.models import Counter, QueueState, Ticket
from lobby_display.simulator import SimulatorServer
from lobby_display.simulator.dialect import Dialect
from lobby_display.updates import Feed, FeedStatus
from lobby_display.views import QueueStatus
from tests.helpers.feeds_harness import Shown, differences, feeds_display, until

Start = Callable[..., SimulatorServer]
#: The `sse` fixture: reads an SSE route with bounded waits (see conftest.read_feed).
ReadFeed = Callable[..., Any]

#: A place where only the script changes anything (speed 0.001, calls held): three queues,
#: all open now and for an hour at least (no opening-hours boundary during the test).
QUIET: dict[str, Any] = {"speed": 0.001, "queues": 3, "tickets": 36}

VARIANTS: dict[str, Dialect] = {
    "as the spec's samples": Dialect(),
    "partial updates": Dialect(partial=True),
    "bare ticket events": Dialect(ticket_envelope=False),
    "ticket maps": Dialect(ticket_map=True),
    "counter maps": Dialect(counter_map=True),
    "legacy names": Dialect(legacy_names=True),
    "ISO dates everywhere": Dialect(dates="iso"),
    "the service's dates everywhere": Dialect(dates="service"),
    "a first page of 7": Dialect(first_page=7),
    "partial, bare, maps and legacy names": Dialect(
        partial=True, ticket_envelope=False, ticket_map=True, counter_map=True, legacy_names=True
    ),
    "every variant at once": Dialect.parse("all"),
}


# --- the board against the truth, record by record --------------------------------------------

#: Ticket fields compared (the estimates and positions move with the clock, without events).
TICKET_FIELDS = ("state", "label", "queue", "endpoint", "recalled_count", "appointment_type")


def _ticket_view(ticket: Ticket) -> tuple[object, ...]:
    timeline = ticket.timeline
    return (
        *(getattr(ticket, name) for name in TICKET_FIELDS),
        ticket.group_size,
        ticket.lang,
        timeline.called_at,
        tuple(timeline.recalled_at),
    )


def record_differences(shown: Shown) -> list[str]:
    """How the board differs from the truth: the harness's comparison (tickets, queue rows,
    counters), then every field of every record the feeds gave."""
    truth = shown.sim.truth()
    problems = differences(shown.board, truth)
    board = shown.board
    saved = board.memory(datetime.now(UTC))
    for ticket_id, record in truth["tickets"].items():
        have = board.tickets.get(ticket_id)
        want = Ticket.model_validate(record)
        if have is not None and _ticket_view(have) != _ticket_view(want):
            problems.append(f"ticket {want.label}: {_ticket_view(have)} != {_ticket_view(want)}")
    states = saved.queue_states
    for queue_id, record in truth["queueStates"].items():
        if states.get(queue_id) != QueueState.model_validate(record):
            problems.append(f"queue state {queue_id}: {states.get(queue_id)!r}")
    counters = saved.counters
    for counter_id, record in truth["counters"].items():
        have_infos = counters[counter_id].infos if counter_id in counters else None
        if have_infos != Counter.model_validate(record).infos:
            problems.append(f"counter {counter_id}: {have_infos!r}")
    return problems[:6]


async def same_as_truth(shown: Shown, step: str, timeout: float = 10.0) -> None:
    """Wait until the board equals the truth, record by record."""
    last: list[str] = []

    def same() -> bool:
        last[:] = record_differences(shown)
        return not last

    await until(same, timeout, f"after {step}: board == truth", explain=lambda: last)


def _labels(truth: Mapping[str, Any], queue_id: str, states: tuple[int, ...]) -> list[str]:
    return [
        record["label"]
        for record in truth["tickets"].values()
        if record["queue"]["id"] == queue_id and record["state"] in states
    ]


# --- the day ------------------------------------------------------------------------------------


async def a_day(sim: SimulatorServer, shown: Shown) -> None:
    """The scripted day; the board must equal the truth after each step."""
    q0, q1, q2 = sim.queue_ids
    desk0, desk1 = sim.call(
        lambda s: [s.place.queue_named(index).endpoints[0].endpoint_id for index in (0, 1)]
    )
    board = shown.board

    def status(queue_id: str) -> QueueStatus | None:
        row = board.queue(queue_id)
        return row.status if row is not None else None

    await shown.live(timeout=10)
    await same_as_truth(shown, "the first messages")
    mark = shown.screen.mark()

    # Two calls: a ticket waiting since the morning, and a walk-in called at once.
    waiting = _labels(sim.truth(), q0, (0, 100))
    assert waiting, "queue 0 has waiting tickets"
    first = waiting[0]
    sim.call_tickets([first, "Z901"], [desk0, desk1])
    await same_as_truth(shown, "two calls")
    called = {view.call.label for view in board.recent_calls()}
    assert {first, "Z901"} <= called

    # A recall of the first: the partial update keeps its label and counter.
    sim.recall_tickets([first])
    await same_as_truth(shown, "a recall")
    latest = board.recent_calls()[0].call
    assert (latest.label, latest.recall, latest.endpoint_id) == (first, 1, desk0)
    assert latest.counter_names, "the recall names its counter"

    # Three people arrive; then queue 0 turns full without a ticket more or less.
    sim.arrive(0, 3)
    await same_as_truth(shown, "three arrivals")
    sim.set_capacity(0)
    await same_as_truth(shown, "queue 0 turning full")
    row = board.queue(q0)
    assert row is not None and row.status is QueueStatus.FULL
    assert row.waiting_tickets == len(_labels(sim.truth(), q0, (0, 50, 100))) > 0
    assert row.today_timeslots, "a partial update kept today's hours"

    # Queue 2 pauses and resumes; queue 1 closes its booking.
    sim.set_pause(2, True)
    await same_as_truth(shown, "queue 2 pausing")
    assert status(q2) is QueueStatus.PAUSED
    sim.set_pause(2, False)
    await same_as_truth(shown, "queue 2 resuming")
    sim.set_booking(1, False)
    await same_as_truth(shown, "queue 1 closing its booking")
    assert status(q1) is QueueStatus.BOOKING_CLOSED

    # The first ticket is served (it leaves, the counter counts it); a waiting one cancels.
    before = {view.counter_id: view.value for view in board.counters()}
    sim.finish_tickets([first])
    cancel = _labels(sim.truth(), q2, (0, 100))[-1]
    sim.finish_tickets([cancel], state=600)
    await same_as_truth(shown, "a ticket served and one canceled")
    after = {view.counter_id: view.value for view in board.counters()}
    assert after[q0] == (before[q0] or 0) + 1
    shown_labels = {ticket.label for ticket in board.tickets.values()}
    assert first not in shown_labels and cancel not in shown_labels

    # Closing time: every operator leaves.
    for index in range(3):
        sim.set_open(index, False)
    await same_as_truth(shown, "closing time")
    assert {view.status for view in board.queues()} == {QueueStatus.CLOSED}

    # Every event was merged: no feed had to reconnect for a fresh snapshot (a reconnection
    # for another reason, a heartbeat late on a busy machine, says nothing about the merge).
    for feed in Feed:
        resyncs = [
            report.error
            for report in shown.screen.failures(feed, mark)
            if "fresh snapshot" in report.error
        ]
        assert resyncs == [], f"{feed}: {shown.screen.path(feed, mark)}"


@pytest.mark.parametrize("dialect", list(VARIANTS.values()), ids=list(VARIANTS))
async def test_a_scripted_day_in_every_dialect(
    dialect: Dialect, start_simulator: Start, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    sim = start_simulator(dialect=dialect, **QUIET)
    sim.hold_calls(True)
    async with feeds_display(sim, tmp_path, caplog) as shown:
        await a_day(sim, shown)
        assert shown.screen.status(Feed.TICKETS) is FeedStatus.LIVE


# --- the simulator really speaks each dialect ----------------------------------------------------


def _read(
    sse: ReadFeed,
    sim: SimulatorServer,
    route: str,
    params: dict[str, str],
    act: Callable[[], Any],
    wanted: Callable[[Any], bool] = lambda data: True,
) -> tuple[Any, Any]:
    """The first message of `route` and the first event after `act()` that is `wanted`."""

    def done(events: list[Any]) -> bool:
        return len(events) >= 2 and wanted(json.loads(events[-1].data))

    seen = sse(f"{sim.url}/v1/{route}", {**params, "key": sim.issue_key()}, until=done, on_open=act)
    data = seen.data()
    return data[0], data[-1]


def test_the_simulator_speaks_each_dialect(start_simulator: Start, sse: ReadFeed) -> None:
    sim = start_simulator(dialect=Dialect.parse("all"), **QUIET)
    sim.hold_calls(True)
    q0 = sim.queue_ids[0]
    queues = {"queuesId": ",".join(sim.queue_ids)}

    first, event = _read(sse, sim, "queues/state/sse", queues, lambda: sim.set_pause(0, True))
    state = first["data"][q0]
    assert {"opened", "full"} <= state.keys() and "queueIsFull" not in state  # legacy names
    assert state["dayQueueTimeslot"][0]["startTime"].endswith("Z")
    assert event["data"] == {"queueId": q0, "pause": True}  # partial: only what changed

    waiting = _labels(sim.truth(), q0, (0, 100))
    first, event = _read(
        sse,
        sim,
        "queues/tickets/currents/sse",
        {**queues, "pageSize": "50"},
        lambda: sim.call_tickets(waiting[:1], [0]),
        wanted=lambda data: any(record.get("state") == 200 for record in data.values()),
    )
    assert len(first["tickets"]) == 7 < first["totalCount"]  # a first page of 7
    assert "T" in first["tickets"][0]["timeline"]["bookedAt"]
    assert first["tickets"][0]["timeline"]["bookedAt"].endswith("Z")  # ISO dates
    (ticket_id, partial), *more = event.items()  # a bare map keyed by ticketId
    assert not more and "resource" not in event
    assert partial["ticketId"] == ticket_id
    assert "label" not in partial and partial["state"] == 200  # only what changed

    served = sim.call(lambda s: s.place.queue_named(0).endpoints[0].serving)
    label = sim.truth()["tickets"][served]["label"]
    first, event = _read(
        sse,
        sim,
        "counters/sse",
        {"countersId": q0, "langs": "en_US"},
        lambda: sim.finish_tickets([label]),
    )
    assert list(event) == [q0]  # a map keyed by counterId
    assert set(event[q0]) == {"counterId", "infos"}
