"""Scripted calls: the simulated place calls the tickets it is told to, at the counters it is
told, as an operator would (the same events over the same feeds); held operators call nobody.

The kiosk-chain tests and `make screenshots` rely on both to put a known label on the screen.
"""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime

import httpx
import pytest

from lobby_display.models import Ticket, TicketState
from lobby_display.simulator import Feed, Place, PlaceEvent, PlaceOptions, SimulatorServer

START = datetime(2026, 11, 22, 13, 5, tzinfo=UTC)


def place(speed: float = 20.0) -> Place:
    return Place(PlaceOptions(seed=3, speed=speed, start=START))


def calls_in(events: list[PlaceEvent]) -> list[tuple[str, str]]:
    """(label, endpoint id) of every ticket event that leaves a ticket called."""
    return [
        (event.data["label"], event.data["endpoint"]["id"])
        for event in events
        if event.feed is Feed.TICKETS and event.data["state"] == TicketState.CALLED
    ]


def test_held_operators_call_nobody_and_catch_up_once_released() -> None:
    held = place()
    held.hold_calls(True)
    events = held.step(1800)
    assert calls_in(events) == []
    # Life goes on: people arrive (new tickets), queues change.
    assert any(event.action == "CREATE" for event in events)
    held.hold_calls(False)
    assert calls_in(held.step(120))


def test_scripted_calls_are_new_tickets_called_at_the_counters_given() -> None:
    sim = place()
    sim.hold_calls(True)
    endpoints = list(sim.endpoints)
    labels = ["1234", "A031", "B-12", "K-0172", "AB1234"]
    events = sim.call_tickets(labels, [0, 2, endpoints[4], 1, 3])
    assert calls_in(events) == [
        ("1234", endpoints[0]),
        ("A031", endpoints[2]),
        ("B-12", endpoints[4]),
        ("K-0172", endpoints[1]),
        ("AB1234", endpoints[3]),
    ]
    for event in events:
        if event.feed is Feed.TICKETS:
            Ticket.model_validate(event.data)  # what the display reads
    # A new ticket for a label nobody waits with ("A031" waits in queue A: it is that one).
    created = [event.data["label"] for event in events if event.action == "CREATE"]
    assert created == ["1234", "B-12", "K-0172", "AB1234"]
    called = [event.data for event in events if event.data.get("state") == TicketState.CALLED]
    assert all(data["timeline"]["calledAt"] for data in called)
    # Nothing else calls while the operators are held.
    assert calls_in(sim.step(600)) == []


def test_a_waiting_ticket_with_the_label_is_the_one_called() -> None:
    sim = place()
    sim.hold_calls(True)
    queue = next(iter(sim.queues.values()))
    waiting = sim.tickets[queue.waiting[-1][2]]
    counter = queue.endpoints[0].endpoint_id
    events = sim.call_tickets([waiting.label], [counter])
    assert [event.action for event in events if event.feed is Feed.TICKETS][-1] == "UPDATE"
    assert not any(event.action == "CREATE" for event in events)
    assert waiting.state == TicketState.CALLED and waiting.endpoint_id == counter


def test_calls_go_to_the_counters_in_turn_by_default_and_bad_counters_change_nothing() -> None:
    sim = place()
    endpoints = list(sim.endpoints)
    assert [where for _, where in calls_in(sim.call_tickets(["X1", "X2"]))] == endpoints[:2]
    before = len(sim.tickets)
    with pytest.raises(ValueError, match="no counter"):
        sim.call_tickets(["X3"], [len(endpoints)])
    with pytest.raises(ValueError, match="one counter per label"):
        sim.call_tickets(["X3", "X4"], [0])
    with pytest.raises(ValueError, match="empty"):
        sim.call_tickets([""])
    assert len(sim.tickets) == before


def test_the_place_numbering_is_not_disturbed_by_scripted_calls() -> None:
    sim = place()
    numbers = [queue.next_number for queue in sim.queues.values()]
    sim.call_tickets(["Z999"] * 3)
    assert [queue.next_number for queue in sim.queues.values()] == numbers


def test_call_and_hold_over_http_reach_the_tickets_feed(sim_account: object) -> None:
    with SimulatorServer(seed=2, speed=5.0, account=sim_account) as sim:  # type: ignore[arg-type]
        held = httpx.post(f"{sim.url}/_sim/hold", params={"on": "true"})
        assert held.status_code == 200 and held.json()["result"] == {"held": True}
        assert sim.status()["callsHeld"] is True
        answer = httpx.post(
            f"{sim.url}/_sim/call",
            params=[("label", "A031"), ("label", "B-12"), ("counter", "0,1")],
        )
        assert answer.status_code == 200, answer.text
        called = answer.json()["result"]["called"]
        assert [item["label"] for item in called] == ["A031", "B-12"]
        assert [item["endpointId"] for item in called] == sim.call(
            lambda s: list(s.place.endpoints)[:2]
        )
        truth = sim.truth()["tickets"]
        for item in called:
            assert truth[item["ticketId"]]["state"] == TicketState.CALLED
        assert httpx.post(f"{sim.url}/_sim/call").status_code == 400
        assert (
            httpx.post(f"{sim.url}/_sim/call", params={"label": "A1", "counter": "x"}).status_code
            == 400
        )
        assert httpx.post(f"{sim.url}/_sim/explode").status_code == 404


def test_call_and_hold_from_the_command_line(sim_account: object) -> None:
    def simulate(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "lobby_display", "simulate", "--port", port, "--fault", *args],
            capture_output=True,
            text=True,
            timeout=20,
            check=False,
        )

    with SimulatorServer(seed=2, speed=5.0, account=sim_account) as sim:  # type: ignore[arg-type]
        port = str(sim.port)
        held = simulate("hold", "on=yes")
        assert held.returncode == 0, held.stderr
        assert sim.status()["callsHeld"] is True
        called = simulate("call", "label=A031", "label=K-0172", "counter=2", "counter=3")
        assert called.returncode == 0, called.stderr
        labels = [item["label"] for item in json.loads(called.stdout)["result"]["called"]]
        assert labels == ["A031", "K-0172"]
        released = simulate("hold", "on=false")
        assert released.returncode == 0 and sim.status()["callsHeld"] is False
        bad = simulate("call", "counter=1")
        assert bad.returncode == 1 and "label" in bad.stderr
