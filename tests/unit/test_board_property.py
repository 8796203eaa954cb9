"""Board: any interleaving of updates leaves it equal to a naive replay of the same updates.

The reference model below recomputes everything from scratch with plain dicts and lists (no
incremental counts, no bounded memory, no ordering by moment): if the board's shortcuts ever
disagree with it, hypothesis finds the sequence and shrinks it.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from lobby_display.board import Board, BoardSettings
from lobby_display.models import FINISHED_STATES, WAITING_STATES, Ticket, TicketState
from lobby_display.state import SavedBoard
from lobby_display.updates import (
    CounterChanged,
    CountersSnapshot,
    Feed,
    FeedHealth,
    FeedStatus,
    QueueStateChanged,
    QueueStatesSnapshot,
    TicketChanged,
    TicketRemoved,
    TicketsSnapshot,
    Update,
)
from tests.helpers.board_support import at, counter, queue_state, ticket

SHOWN_QUEUES = ("q1", "q2")
RECENT = 3
SETTINGS = BoardSettings(queue_ids=SHOWN_QUEUES, recent_calls=RECENT)

TicketSpec = tuple[str, int, int, str, int, str | None]
"""(id, state, recall, queue, group size, appointment type)."""

ticket_specs = st.tuples(
    st.sampled_from(["t0", "t1", "t2", "t3", "t4", "t5"]),
    st.sampled_from([0, 50, 100, 200, 200, 200, 300, 500, 600, 700]),
    st.integers(0, 2),
    st.sampled_from(["q1", "q2", "q3"]),
    st.integers(1, 3),
    st.sampled_from([None, "visit", "parcel"]),
)
queue_ids = st.sampled_from(["q1", "q2", "q3"])
counter_ids = st.sampled_from(["c1", "c2", "c3"])
statuses = list(FeedStatus)
lengths = st.tuples(st.integers(0, 20), st.integers(0, 40))

steps = st.one_of(
    st.tuples(st.just("ticket"), ticket_specs),
    st.tuples(st.just("remove"), st.sampled_from(["t0", "t1", "t2", "t9"])),
    st.tuples(st.just("tickets"), st.lists(ticket_specs, max_size=6, unique_by=lambda s: s[0])),
    st.tuples(st.just("queue"), st.tuples(queue_ids, lengths)),
    st.tuples(st.just("queues"), st.dictionaries(queue_ids, lengths, max_size=3)),
    st.tuples(st.just("counter"), st.tuples(counter_ids, st.integers(0, 99))),
    st.tuples(st.just("counters"), st.dictionaries(counter_ids, st.integers(0, 99), max_size=3)),
    st.tuples(
        st.just("health"), st.tuples(st.sampled_from(list(Feed)), st.sampled_from(list(FeedStatus)))
    ),
)


def make_ticket(spec: TicketSpec, seconds: float) -> Ticket:
    ticket_id, state, recall, queue, group, appointment_type = spec
    called = state == TicketState.CALLED
    return ticket(
        ticket_id,
        state,
        queue=queue,
        group=group,
        appointment_type=appointment_type,
        recalled_count=recall,
        called_at=at(seconds) if called else None,
        recalled_at=[at(seconds)] * recall if called else (),
    )


def length_state(queue_id: str, numbers: tuple[int, int]) -> Any:
    tickets, people = numbers
    return queue_state(
        queue_id, queueLength={"queueTicketLength": tickets, "queuePeopleLength": people}
    )


@dataclass
class Replay:
    """The naive model: what the screen should show after the same updates."""

    current: dict[str, Ticket] = field(default_factory=dict)
    seen: dict[str, int] = field(default_factory=dict)
    recent: list[str] = field(default_factory=list)
    states: dict[str, tuple[int, int]] = field(default_factory=dict)
    counters: dict[str, int] = field(default_factory=dict)
    had_tickets: bool = False
    live: dict[Feed, bool] = field(default_factory=lambda: dict.fromkeys(Feed, False))

    def see(self, ticket: Ticket) -> None:
        if ticket.state in WAITING_STATES:
            self.seen.pop(ticket.ticket_id, None)
        elif ticket.state == TicketState.CALLED:
            recall = max(ticket.recalled_count, len(ticket.timeline.recalled_at))
            if ticket.ticket_id not in self.seen or recall > self.seen[ticket.ticket_id]:
                self.seen[ticket.ticket_id] = recall
                if ticket.ticket_id in self.recent:
                    self.recent.remove(ticket.ticket_id)
                self.recent.insert(0, ticket.ticket_id)

    @staticmethod
    def shown(ticket: Ticket) -> bool:
        return ticket.state not in FINISHED_STATES and ticket.queue.id in SHOWN_QUEUES

    def waiting(self, queue_id: str) -> tuple[int, int, dict[str, tuple[int, int]]]:
        tickets = [
            t for t in self.current.values() if t.queue.id == queue_id and t.state in WAITING_STATES
        ]
        by_type: dict[str, tuple[int, int]] = {}
        for t in tickets:
            if t.appointment_type.id:
                count, people = by_type.get(t.appointment_type.id, (0, 0))
                by_type[t.appointment_type.id] = (count + 1, people + t.group_size)
        return len(tickets), sum(t.group_size for t in tickets), by_type


def run(step: tuple[str, Any], seconds: float, replay: Replay) -> Update:
    """The update of `step`, applied to the naive model."""
    kind, data = step
    if kind == "ticket":
        one = make_ticket(data, seconds)
        if replay.shown(one):
            replay.current[one.ticket_id] = one
            replay.see(one)
        else:
            replay.current.pop(one.ticket_id, None)
        return TicketChanged(one)
    if kind == "remove":
        replay.current.pop(data, None)
        return TicketRemoved(data)
    if kind == "tickets":
        tickets = tuple(make_ticket(spec, seconds) for spec in data)
        replay.had_tickets = True
        replay.current = {t.ticket_id: t for t in tickets if replay.shown(t)}
        for t in replay.current.values():
            replay.see(t)
        return TicketsSnapshot(tickets)
    if kind == "queue":
        queue_id, numbers = data
        if queue_id in SHOWN_QUEUES:
            replay.states[queue_id] = numbers
        return QueueStateChanged(length_state(queue_id, numbers))
    if kind == "queues":
        replay.states = {key: value for key, value in data.items() if key in SHOWN_QUEUES}
        return QueueStatesSnapshot({key: length_state(key, value) for key, value in data.items()})
    if kind == "counter":
        counter_id, value = data
        replay.counters[counter_id] = value
        return CounterChanged(counter(counter_id, value))
    if kind == "counters":
        replay.counters = dict(data)
        return CountersSnapshot({key: counter(key, value) for key, value in data.items()})
    feed, status = data
    replay.live[feed] = status is FeedStatus.LIVE
    return FeedHealth(feed=feed, status=status, at=at(seconds))


def assert_board_matches(board: Board, replay: Replay, seconds: float) -> None:
    assert dict(board.tickets) == replay.current
    assert [view.call.ticket_id for view in board.recent_calls()] == replay.recent[:RECENT]
    for row in board.queues():
        if row.queue_id in replay.states:
            tickets, people = replay.states[row.queue_id]
            assert not row.counts_from_tickets
            assert (row.waiting_tickets, row.waiting_people) == (tickets, people)
        elif replay.had_tickets:
            tickets, people, by_type = replay.waiting(row.queue_id)
            assert (row.waiting_tickets, row.waiting_people) == (tickets, people)
            shown_types = {
                view.appointment_type_id: (view.waiting_tickets, view.waiting_people)
                for view in row.appointment_types
                if view.waiting_tickets
            }
            assert shown_types == by_type
        else:
            assert (row.waiting_tickets, row.waiting_people) == (None, None)
    assert {view.counter_id: view.value for view in board.counters()} == replay.counters
    for feed, view in board.health(at(seconds)).items():
        assert (view.status is FeedStatus.LIVE) == replay.live[feed]


@settings(max_examples=300, deadline=None)
@given(st.lists(steps, max_size=40))
def test_the_board_equals_a_naive_replay_of_any_interleaving(
    sequence: list[tuple[str, Any]],
) -> None:
    board = Board(SETTINGS, started_at=at(0))
    replay = Replay()

    for index, step in enumerate(sequence, start=1):
        update = run(step, index, replay)
        board.apply(update, at(index))
        assert_board_matches(board, replay, index)

    # And what it saves shows the same after a restart.
    end = len(sequence) + 1
    saved = SavedBoard.of(board.memory(at(end)), at(end)).to_json()
    restored = SavedBoard.model_validate_json(saved).restore(SETTINGS, at(end))
    assert restored.queues() == board.queues()
    assert restored.counters() == board.counters()
    # Restored calls are listed as they were, never to be announced again.
    assert [view.call for view in restored.recent_calls()] == [
        replace(view.call, announce=False) for view in board.recent_calls()
    ]
