"""Updates merge into the last known record; snapshots replace it (decoding.py's rule).

Each test feeds JSON messages, as the service sends them, through the real decoders into a
board, and looks at what the screen would show.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import pytest

from lobby_display.board import Board, BoardSettings
from lobby_display.decoding import (
    CounterDecoder,
    NotUnderstood,
    QueueStateDecoder,
    TicketDecoder,
)
from lobby_display.models import Ticket, TicketPage
from lobby_display.updates import TicketChanged, TicketRemoved, Update
from lobby_display.views import QueueStatus, QueueView

NOW = datetime(2026, 11, 22, 13, 0, tzinfo=UTC)


def whole_state(queue_id: str = "Q1", waiting: int = 7, **fields: Any) -> dict[str, Any]:
    """A whole queue-state record of an open queue with `waiting` tickets."""
    return {
        "queueId": queue_id,
        "bookingIsOpened": True,
        "queueIsOpened": True,
        "queueIsFull": False,
        "queueIsFullForTheDay": False,
        "queueIsFullForFifo": False,
        "queueIsFullForAppointment": False,
        "pause": False,
        "queueLength": {
            "queueTicketLength": waiting,
            "queuePeopleLength": waiting + 2,
            "byAppointmentType": {"AT1": {"queueTicketLength": waiting, "queuePeopleLength": 9}},
        },
        "allFirstAvailabilities": {"AT1": {"1": "2026-11-22T13:30:00.000Z"}},
        "dayQueueTimeslot": [
            {"startTime": "2026-11-22T08:00:00.000Z", "endTime": "2026-11-22T17:00:00.000Z"}
        ],
        "nextQueueTimeslot": {
            "startTime": "2026-11-23T08:00:00.000Z",
            "endTime": "2026-11-23T17:00:00.000Z",
        },
        **fields,
    }


def whole_ticket(ticket_id: str = "t1", **fields: Any) -> dict[str, Any]:
    """A whole ticket: A031 of queue Q1, called to Desk 2."""
    return {
        "ticketId": ticket_id,
        "label": "A031",
        "queue": {"id": "Q1", "name": "Passports"},
        "state": 200,
        "lang": "en_US",
        "recalledCount": 0,
        "endpoint": {"id": "E2", "name": "Desk 2"},
        "timeline": {"calledAt": "2026-11-22T13:59:00:00,0000+0100", "recalledAt": []},
        **fields,
    }


def envelope(data: object, action: str = "UPDATE", category: str = "QUEUE_STATE") -> object:
    return {"resource": "x", "actionCategory": category, "actionName": action, "data": data}


class NoRest:
    """The REST client of the tickets decoder: here every first page is whole."""

    async def current_tickets(
        self, queue_ids: Sequence[str], *, first: TicketPage | None = None
    ) -> list[Ticket]:
        raise AssertionError("no REST call expected")


class Screen:
    """The three decoders feeding one board."""

    def __init__(self, rest: Any = None) -> None:
        self.board = Board(BoardSettings(), started_at=NOW)
        self.tickets = TicketDecoder(rest or NoRest(), ["Q1", "Q2"])
        self.states = QueueStateDecoder(["Q1", "Q2"])
        self.counters = CounterDecoder(["Q1"], ["en_US"])

    def apply(self, updates: list[Update]) -> list[Update]:
        for update in updates:
            self.board.apply(update, NOW)
        return updates

    async def ticket_snapshot(self, *tickets: dict[str, Any]) -> None:
        page = {"totalCount": len(tickets), "page": 1, "pageSize": 50, "tickets": list(tickets)}
        self.apply(await self.tickets.snapshot(page))

    async def ticket_event(self, data: object, action: str = "UPDATE") -> list[Update]:
        return self.apply(await self.tickets.change(envelope(data, action, "TICKET")))

    async def state_snapshot(self, *states: dict[str, Any]) -> None:
        data = {state["queueId"]: state for state in states}
        self.apply(await self.states.snapshot(envelope(data, "ALL_DATA", "ALL_QUEUE_STATE")))

    async def state_event(self, data: object) -> list[Update]:
        return self.apply(await self.states.change(envelope(data)))

    def row(self, queue_id: str = "Q1") -> QueueView:
        view = self.board.queue(queue_id)
        assert view is not None
        return view


class TestQueueStates:
    async def test_a_queue_that_turns_full_by_a_partial_update_still_shows_its_7_tickets(
        self,
    ) -> None:
        screen = Screen()
        await screen.state_snapshot(whole_state(waiting=7))
        await screen.state_event({"queueId": "Q1", "queueIsFull": True})
        row = screen.row()
        assert row.status is QueueStatus.FULL
        assert (row.waiting_tickets, row.waiting_people) == (7, 9)
        assert row.appointment_types[0].waiting_tickets == 7

    async def test_a_pause_keeps_first_availabilities_and_todays_hours(self) -> None:
        screen = Screen()
        await screen.state_snapshot(whole_state())
        before = screen.row()
        await screen.state_event({"queueId": "Q1", "pause": True})
        row = screen.row()
        assert row.status is QueueStatus.PAUSED
        assert row.first_availability == before.first_availability is not None
        assert row.today_timeslots == before.today_timeslots != ()
        assert row.next_timeslot == before.next_timeslot is not None

    async def test_a_field_present_replaces_the_stored_one_whole(self) -> None:
        screen = Screen()
        await screen.state_snapshot(whole_state(waiting=7))
        await screen.state_event({"queueId": "Q1", "queueLength": {"queueTicketLength": 8}})
        row = screen.row()
        assert (row.waiting_tickets, row.waiting_people) == (8, 0)
        assert row.status is QueueStatus.OPEN

    async def test_an_explicit_null_clears_the_field(self) -> None:
        screen = Screen()
        await screen.state_snapshot(whole_state())
        await screen.state_event(
            {"queueId": "Q1", "nextQueueTimeslot": None, "allFirstAvailabilities": None}
        )
        row = screen.row()
        assert row.next_timeslot is None
        assert row.first_availability is None
        assert row.today_timeslots != ()  # left out: kept

    async def test_a_legacy_name_replaces_the_current_name_and_back(self) -> None:
        screen = Screen()
        await screen.state_snapshot(whole_state(queueIsFull=True))
        assert screen.row().status is QueueStatus.FULL
        # A legacy service's `full` replaces the stored `queueIsFull`...
        await screen.state_event({"queueId": "Q1", "full": False})
        assert screen.row().status is QueueStatus.OPEN
        # ...and the current name replaces what a legacy name set.
        await screen.state_event({"queueId": "Q1", "opened": False})
        assert screen.row().status is QueueStatus.BOOKING_CLOSED
        await screen.state_event({"queueId": "Q1", "bookingIsOpened": True})
        assert screen.row().status is QueueStatus.OPEN
        assert screen.row().waiting_tickets == 7

    async def test_a_legacy_snapshot_then_partial_updates(self) -> None:
        screen = Screen()
        legacy = whole_state()
        legacy["opened"] = legacy.pop("bookingIsOpened")
        legacy["full"] = legacy.pop("queueIsFull")
        await screen.state_snapshot(legacy)
        await screen.state_event({"queueId": "Q1", "queueIsFull": True})
        assert screen.row().status is QueueStatus.FULL
        assert screen.row().waiting_tickets == 7

    async def test_a_whole_record_update_is_a_replacement(self) -> None:
        screen = Screen()
        await screen.state_snapshot(whole_state(waiting=7, pause=True))
        await screen.state_event(whole_state(waiting=3))
        row = screen.row()
        assert (row.status, row.waiting_tickets) == (QueueStatus.OPEN, 3)

    async def test_a_snapshot_replaces_what_was_known(self) -> None:
        screen = Screen()
        await screen.state_snapshot(whole_state(waiting=7))
        # A resync (ALL_DATA again) without hours: a later partial update merges into it.
        bare = {"queueId": "Q1", "queueLength": {"queueTicketLength": 2}}
        screen.apply(await screen.states.change(envelope({"Q1": bare}, "ALL_DATA")))
        await screen.state_event({"queueId": "Q1", "pause": True})
        row = screen.row()
        assert (row.status, row.waiting_tickets) == (QueueStatus.PAUSED, 2)
        assert row.today_timeslots == ()
        assert row.next_timeslot is None

    async def test_a_partial_update_of_a_queue_not_known_yet_asks_for_a_snapshot(self) -> None:
        screen = Screen()
        await screen.state_snapshot(whole_state("Q1"))
        with pytest.raises(NotUnderstood):
            await screen.state_event({"queueId": "Q2", "queueIsFull": True})
        # A whole record of it is shown.
        await screen.state_event(whole_state("Q2", waiting=4))
        assert screen.row("Q2").waiting_tickets == 4

    async def test_a_partial_update_of_a_queue_not_followed_is_dropped(self) -> None:
        screen = Screen()
        await screen.state_snapshot(whole_state("Q1"))
        assert await screen.state_event({"queueId": "Q9", "queueIsFull": True}) == []

    async def test_a_value_the_record_cannot_take_is_refused_and_the_record_kept(self) -> None:
        screen = Screen()
        await screen.state_snapshot(whole_state(waiting=7))
        with pytest.raises(NotUnderstood, match="pause"):
            await screen.state_event({"queueId": "Q1", "pause": "maybe"})
        # The refused update left nothing behind: the next one merges into the snapshot.
        await screen.state_event({"queueId": "Q1", "queueIsFull": True})
        assert (screen.row().status, screen.row().waiting_tickets) == (QueueStatus.FULL, 7)


class TestTickets:
    async def test_a_partial_recall_keeps_label_queue_and_counter(self) -> None:
        screen = Screen()
        await screen.ticket_snapshot(whole_ticket())
        await screen.ticket_event(
            {
                "ticketId": "t1",
                "recalledCount": 1,
                "timeline": {"recalledAt": ["2026-11-22T14:00:30:00,0000+0100"]},
            }
        )
        latest = screen.board.recent_calls()[0].call
        assert (latest.label, latest.queue_id, latest.endpoint_id) == ("A031", "Q1", "E2")
        assert latest.counter_names == {"en_US": "Desk 2"}
        assert latest.recall == 1

    async def test_a_partial_state_change_keeps_the_rest(self) -> None:
        screen = Screen()
        await screen.ticket_snapshot(whole_ticket())
        await screen.ticket_event({"ticketId": "t1", "state": 500})
        shown = screen.board.tickets["t1"]
        assert (shown.state, shown.label, shown.queue.id, shown.endpoint.name) == (
            500,
            "A031",
            "Q1",
            "Desk 2",
        )

    async def test_a_partial_call_of_a_waiting_ticket_is_a_call(self) -> None:
        screen = Screen()
        waiting = whole_ticket(state=0, endpoint=None, timeline={})
        await screen.ticket_snapshot(waiting)
        assert screen.board.recent_calls() == ()
        await screen.ticket_event(
            {"t1": {"state": 200, "endpoint": {"id": "E2", "name": "Desk 2"}}}  # a map by id
        )
        latest = screen.board.recent_calls()[0].call
        assert (latest.label, latest.endpoint_id) == ("A031", "E2")

    async def test_an_endpoint_set_to_null_is_cleared(self) -> None:
        screen = Screen()
        await screen.ticket_snapshot(whole_ticket())
        await screen.ticket_event({"ticketId": "t1", "state": 0, "endpoint": None})
        shown = screen.board.tickets["t1"]
        assert (shown.state, shown.endpoint.id, shown.label) == (0, None, "A031")

    async def test_removal_then_updates(self) -> None:
        screen = Screen()
        await screen.ticket_snapshot(whole_ticket())
        assert await screen.ticket_event({"ticketId": "t1"}, "DELETE") == [TicketRemoved("t1")]
        assert "t1" not in screen.board.tickets
        # A late partial update of the ticket gone does not bring it back...
        assert await screen.ticket_event({"ticketId": "t1", "recalledCount": 2}) == []
        assert "t1" not in screen.board.tickets
        # ...one that makes it current again without saying what it is needs a snapshot...
        with pytest.raises(NotUnderstood):
            await screen.ticket_event({"ticketId": "t1", "state": 0})
        # ...and a whole record puts it back.
        updates = await screen.ticket_event(whole_ticket(state=0))
        assert isinstance(updates[0], TicketChanged)
        assert screen.board.tickets["t1"].label == "A031"

    async def test_a_ticket_done_by_a_partial_update_leaves_and_is_forgotten(self) -> None:
        screen = Screen()
        await screen.ticket_snapshot(whole_ticket())
        await screen.ticket_event({"ticketId": "t1", "state": 700})
        assert "t1" not in screen.board.tickets
        assert "t1" not in screen.tickets.store

    async def test_a_partial_update_of_an_unknown_ticket_asks_for_a_snapshot(self) -> None:
        screen = Screen()
        await screen.ticket_snapshot(whole_ticket())
        with pytest.raises(NotUnderstood):
            await screen.ticket_event({"ticketId": "t2", "state": 200})
        # Unless it says the ticket is finished: then it simply is not on the board.
        assert await screen.ticket_event({"ticketId": "t2", "state": 600}) == [TicketRemoved("t2")]
        # A whole new ticket is shown.
        await screen.ticket_event(whole_ticket("t3", label="B007"), "CREATE")
        assert screen.board.tickets["t3"].label == "B007"

    async def test_a_null_state_is_refused_and_the_ticket_kept(self) -> None:
        screen = Screen()
        await screen.ticket_snapshot(whole_ticket())
        with pytest.raises(NotUnderstood, match="state"):
            await screen.ticket_event({"ticketId": "t1", "state": None})
        await screen.ticket_event({"ticketId": "t1", "recalledCount": 1})
        assert screen.board.tickets["t1"].state == 200

    async def test_a_snapshot_replaces_what_was_known(self) -> None:
        screen = Screen()
        await screen.ticket_snapshot(whole_ticket(), whole_ticket("t2", label="A032"))
        # After a reconnect t1 waits again, without an endpoint, and t2 is gone.
        await screen.ticket_snapshot(whole_ticket(state=0, endpoint=None))
        await screen.ticket_event({"ticketId": "t1", "recalledCount": 0})
        assert screen.board.tickets["t1"].endpoint.id is None
        with pytest.raises(NotUnderstood):
            await screen.ticket_event({"ticketId": "t2", "state": 200})

    async def test_tickets_read_over_rest_merge_like_the_first_page(self) -> None:
        everything = [
            Ticket.model_validate(whole_ticket(f"t{n}", label=f"A{n:03d}")) for n in range(60)
        ]

        class Rest:
            async def current_tickets(
                self, queue_ids: Sequence[str], *, first: TicketPage | None = None
            ) -> list[Ticket]:
                return everything

        screen = Screen(Rest())
        page = {"totalCount": 60, "page": 1, "pageSize": 50, "tickets": [whole_ticket("t0")]}
        screen.apply(await screen.tickets.snapshot(page))
        await screen.ticket_event({"ticketId": "t55", "state": 500})
        shown = screen.board.tickets["t55"]
        assert shown == everything[55].model_copy(update={"state": 500})


class TestCounters:
    async def test_a_partial_counter_keeps_its_name(self) -> None:
        screen = Screen()
        first = {"Q1": {"counterId": "Q1", "name": {"en_US": "Served"}, "infos": {"value": 12}}}
        screen.apply(await screen.counters.snapshot(first))
        screen.apply(await screen.counters.change({"Q1": {"infos": {"value": 13}}}))
        view = screen.board.counters()[0]
        assert (view.value, dict(view.names)) == (13, {"en_US": "Served"})

    async def test_a_partial_counter_not_known_yet_asks_for_a_snapshot(self) -> None:
        screen = Screen()
        screen.apply(await screen.counters.snapshot({}))
        with pytest.raises(NotUnderstood):
            await screen.counters.change({"counterId": "Q1", "name": {"en_US": "Served"}})
        screen.apply(await screen.counters.change({"counterId": "Q1", "infos": {"value": 3}}))
        assert screen.board.counters()[0].value == 3
