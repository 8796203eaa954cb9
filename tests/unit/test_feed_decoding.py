"""Feeds read what follows the first message tolerantly, and refuse what they cannot read."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from lobby_display.feeds import (
    CounterDecoder,
    NotUnderstood,
    QueueStateDecoder,
    TicketDecoder,
)
from lobby_display.models import Ticket, TicketPage
from lobby_display.updates import (
    CounterChanged,
    CountersSnapshot,
    QueueStateChanged,
    QueueStatesSnapshot,
    TicketChanged,
    TicketRemoved,
    TicketsSnapshot,
)


def ticket(ticket_id: str, state: int = 0, label: str = "A001") -> dict[str, object]:
    return {"ticketId": ticket_id, "label": label, "state": state, "queue": {"id": "Q1"}}


class RestTickets:
    """Stands in for the REST route that completes a short first page."""

    def __init__(self, tickets: list[Ticket]) -> None:
        self.tickets = tickets
        self.calls: list[list[str]] = []

    async def current_tickets(
        self, queue_ids: Sequence[str], *, first: TicketPage | None = None
    ) -> list[Ticket]:
        assert first is not None and first.page == 1
        self.calls.append(list(queue_ids))
        return self.tickets


def decoder(rest: RestTickets | None = None) -> TicketDecoder:
    return TicketDecoder(rest or RestTickets([]), ["Q1"])


class TestTicketFeed:
    async def test_first_page_is_a_snapshot(self) -> None:
        updates = await decoder().snapshot(
            {"totalCount": 2, "page": 1, "pageSize": 50, "tickets": [ticket("t1"), ticket("t2")]}
        )
        assert len(updates) == 1
        assert isinstance(updates[0], TicketsSnapshot)
        assert [t.ticket_id for t in updates[0].tickets] == ["t1", "t2"]

    async def test_short_first_page_is_completed_over_rest(self) -> None:
        everything = [Ticket.model_validate(ticket(f"t{i}")) for i in range(60)]
        rest = RestTickets(everything)
        updates = await decoder(rest).snapshot(
            {"totalCount": 60, "page": 1, "pageSize": 50, "tickets": [ticket("t0")]}
        )
        assert rest.calls == [["Q1"]]
        assert isinstance(updates[0], TicketsSnapshot)
        assert len(updates[0].tickets) == 60

    @pytest.mark.parametrize(
        "event",
        [
            {
                "resource": "ticket",
                "actionCategory": "TICKET",
                "actionName": "UPDATE",
                "data": ticket("t1", 200),
            },
            ticket("t1", 200),
            {"t1": {"label": "A001", "state": 200}},
            [ticket("t1", 200)],
        ],
        ids=["envelope", "bare record", "map keyed by id", "list"],
    )
    async def test_changes_in_every_shape(self, event: object) -> None:
        known = decoder()
        await known.snapshot({"totalCount": 1, "tickets": [ticket("t1")]})
        updates = await known.change(event)
        assert len(updates) == 1
        assert isinstance(updates[0], TicketChanged)
        assert updates[0].ticket.ticket_id == "t1"
        assert updates[0].ticket.state == 200

    async def test_a_deletion_removes_the_ticket(self) -> None:
        updates = await decoder().change(
            {"actionCategory": "TICKET", "actionName": "DELETE", "data": ticket("t1", 0)}
        )
        assert updates == [TicketRemoved("t1")]

    async def test_a_page_later_is_a_new_snapshot(self) -> None:
        updates = await decoder().change({"totalCount": 1, "tickets": [ticket("t9")]})
        assert isinstance(updates[0], TicketsSnapshot)

    @pytest.mark.parametrize(
        "event", [42, "hello", {"foo": 1}, [1, 2], {"data": 3, "resource": "x"}]
    )
    async def test_anything_else_is_not_understood(self, event: object) -> None:
        with pytest.raises(NotUnderstood):
            await decoder().change(event)


class TestQueueStateFeed:
    async def test_first_message_envelope(self) -> None:
        updates = await QueueStateDecoder(["Q1", "Q2"]).snapshot(
            {
                "resource": "queue",
                "actionCategory": "ALL_QUEUE_STATE",
                "actionName": "ALL_DATA",
                "data": {"Q1": {"queueId": "Q1", "pause": True}, "Q2": {"opened": True}},
            }
        )
        assert isinstance(updates[0], QueueStatesSnapshot)
        assert updates[0].states["Q1"].pause is True
        assert updates[0].states["Q2"].booking_is_opened is True

    async def test_one_queue_changes(self) -> None:
        known = QueueStateDecoder(["Q1"])
        await known.snapshot({"data": {"Q1": {"queueId": "Q1"}}, "actionName": "ALL_DATA"})
        updates = await known.change(
            {
                "actionCategory": "QUEUE_STATE",
                "actionName": "UPDATE",
                "data": {"queueId": "Q1", "queueLength": {"queueTicketLength": 4}},
            }
        )
        assert isinstance(updates[0], QueueStateChanged)
        assert updates[0].state.queue_length.queue_ticket_length == 4

    async def test_all_data_again_is_a_snapshot(self) -> None:
        updates = await QueueStateDecoder(["Q1"]).change(
            {
                "actionCategory": "ALL_QUEUE_STATE",
                "actionName": "ALL_DATA",
                "data": {"Q1": {"queueId": "Q1"}},
            }
        )
        assert isinstance(updates[0], QueueStatesSnapshot)

    async def test_unknown_shape(self) -> None:
        with pytest.raises(NotUnderstood):
            await QueueStateDecoder(["Q1"]).change({"actionName": "X", "data": {"a": 1}})


class TestCounterFeed:
    async def test_first_message_is_the_counters_map(self) -> None:
        updates = await CounterDecoder(["Q1"], ["fr_FR"]).snapshot(
            {"Q1": {"counterId": "Q1", "infos": {"value": 12}}}
        )
        assert isinstance(updates[0], CountersSnapshot)
        assert updates[0].counters["Q1"].infos.value == 12

    async def test_one_counter_changes(self) -> None:
        updates = await CounterDecoder(["Q1"], []).change(
            {"counterId": "Q1", "infos": {"value": 13}}
        )
        assert isinstance(updates[0], CounterChanged)
        assert updates[0].counter.infos.value == 13
