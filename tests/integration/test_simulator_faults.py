"""Faults of the simulator over HTTP, as a display meets them: streams dropped, reset, stalled,
closed; bad events; error answers; hostile strings; bursts; the `/_sim` control routes."""

from __future__ import annotations

import itertools
import json
import time
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from lobby_display.models import Queue, Ticket, clean_text, keyed
from lobby_display.simulator import SimulatorServer

#: The `sse` fixture: `read_feed` of conftest.py.
ReadFeed = Callable[..., Any]

TICKETS = "/v1/queues/tickets/currents/sse"
STATES = "/v1/queues/state/sse"
Start = Callable[..., SimulatorServer]


def feed_url(sim: SimulatorServer) -> str:
    return f"{sim.url}{TICKETS}"


def test_drop_cuts_the_stream_mid_response(
    simulator: SimulatorServer, sim_key: str, sse: ReadFeed
) -> None:
    read = sse(feed_url(simulator), {"key": sim_key}, on_open=lambda: simulator.drop("tickets"))
    assert isinstance(read.error, httpx.RemoteProtocolError), read.error
    assert not read.ended


def test_reset_aborts_the_connection(
    simulator: SimulatorServer, sim_key: str, sse: ReadFeed
) -> None:
    read = sse(feed_url(simulator), {"key": sim_key}, on_open=lambda: simulator.reset())
    assert isinstance(read.error, httpx.ReadError), read.error
    assert "reset" in str(read.error).lower()


def test_close_ends_the_stream_cleanly(
    simulator: SimulatorServer, sim_key: str, sse: ReadFeed
) -> None:
    read = sse(feed_url(simulator), {"key": sim_key}, on_open=lambda: simulator.close("tickets"))
    assert read.ended and read.error is None
    assert simulator.status()["feeds"]["tickets"]["connections"] == 0


def test_a_stalled_feed_sends_nothing_not_even_heartbeats(
    simulator: SimulatorServer, sim_key: str, sse: ReadFeed
) -> None:
    read = sse(
        f"{simulator.url}{STATES}",
        {"key": sim_key},
        on_open=lambda: simulator.stall("queues"),
        read_timeout=1.0,  # heartbeats come every 0.3 s: a live feed never times out
    )
    assert isinstance(read.error, httpx.ReadTimeout), read.error
    assert simulator.status()["feeds"]["queues"]["stalled"]


def test_a_stall_for_some_seconds_then_events_flow_again(
    start_simulator: Start, sse: ReadFeed
) -> None:
    sim = start_simulator(speed=300.0)
    arrivals: list[float] = []

    def until(events: list[Any]) -> bool:
        arrivals.append(time.monotonic())
        return len(events) >= 8

    read = sse(
        f"{sim.url}{STATES}",
        {"key": sim.issue_key()},
        until=until,
        on_open=lambda: sim.stall("queues", seconds=0.8),
    )
    assert read.error is None and len(read.events) >= 8
    gaps = [later - earlier for earlier, later in itertools.pairwise(arrivals)]
    assert max(gaps) >= 0.7, "nothing came during the stall"
    assert not sim.status()["feeds"]["queues"]["stalled"]


def test_malformed_unknown_and_huge_events(
    simulator: SimulatorServer, sim_key: str, sse: ReadFeed
) -> None:
    def inject() -> None:
        simulator.send_malformed("tickets")
        simulator.send_unknown("tickets")
        simulator.send_huge("tickets")

    def seen_all(events: list[Any]) -> bool:
        return any(len(event.data) > 2_000_000 for event in events)

    read = sse(feed_url(simulator), {"key": sim_key}, until=seen_all, on_open=inject, timeout=20)
    bad = [event for event in read.events if not _is_json(event.data)]
    assert len(bad) == 1 and bad[0].data.startswith('{"resource":"ticket"')
    odd = [event for event in read.events if event.event == "parkingMeter"]
    assert len(odd) == 1 and json.loads(odd[0].data)["actionCategory"] == "UNHEARD_OF"
    huge = json.loads(read.events[-1].data)
    assert huge["actionName"] == "UPDATE"
    assert Ticket.model_validate(huge["data"]).ticket_id
    ids = [int(event.id) for event in read.events[1:]]
    assert ids == sorted(set(ids)), "faults get ids like any event"


def test_error_status_for_the_next_requests(simulator: SimulatorServer, sim_key: str) -> None:
    url = f"{simulator.url}/v1/places"
    simulator.fail_next(2, status=503)
    for _ in range(2):
        answer = httpx.get(url, params={"key": sim_key}, timeout=5)
        assert answer.status_code == 503
        assert answer.json()["error"] == "SERVICE_UNAVAILABLE" and answer.headers["retry-after"]
    assert httpx.get(url, params={"key": sim_key}, timeout=5).status_code == 200


def test_error_status_for_the_next_feed_connections_only(
    simulator: SimulatorServer, sim_key: str
) -> None:
    simulator.fail_next(1, status=500, target="sse")
    assert (
        httpx.get(f"{simulator.url}/v1/places", params={"key": sim_key}, timeout=5).status_code
        == 200
    )
    failed = httpx.get(feed_url(simulator), params={"key": sim_key}, timeout=5)
    assert failed.status_code == 500 and failed.json()["error"] == "INTERNAL_ERROR"
    with (
        httpx.Client(timeout=5) as client,
        client.stream("GET", feed_url(simulator), params={"key": sim_key}) as response,
    ):
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")


def test_hostile_names_and_labels_reach_clients_intact_as_json(
    simulator: SimulatorServer, sim_key: str, sse: ReadFeed
) -> None:
    simulator.set_hostile()
    answer = httpx.get(
        f"{simulator.url}/v1/places/{simulator.place_id}/queues",
        params={"key": sim_key},
        timeout=10,
    )
    raw = answer.json()
    names = [name for queue in raw.values() for name in queue["name"].values()]
    joined = "".join(names)
    for needle in (
        "[link='https://x']",
        "\x1b[2J",
        "\x1b]0;pwned\x07",
        "\x9b31m",
        "\u202e",
        "\x00",
    ):
        assert needle in joined, repr(needle)
    assert any(len(name) >= 100_000 for name in names)
    queues = keyed(Queue, raw, "queue_id")
    assert all(len(name) <= 120 for queue in queues.values() for name in queue.name.values())
    read = sse(feed_url(simulator), {"key": sim_key, "pageSize": 50}, until=bool)
    labels = [ticket["label"] for ticket in json.loads(read.events[0].data)["tickets"]]
    assert any("\u2028" in label for label in labels), "a line separator inside the data line"
    assert all("\x1b" not in clean_text(label) for label in labels)


def test_a_burst_sends_every_ticket_event_it_makes(
    simulator: SimulatorServer, sim_key: str, sse: ReadFeed
) -> None:
    made: list[int] = []

    def burst() -> None:
        simulator.burst(rate=2000, count=600)

    def done(events: list[Any]) -> bool:
        if not made and not simulator.status()["burst"]["running"]:
            made.append(simulator.status()["burst"]["emitted"])
        return (
            bool(made)
            and int(events[-1].id) >= simulator.status()["feeds"]["tickets"]["lastEventId"]
        )

    read = sse(feed_url(simulator), {"key": sim_key}, until=done, on_open=burst, timeout=20)
    assert made and made[0] >= 600
    assert len(read.events) - 1 >= 600
    ids = [int(event.id) for event in read.events[1:]]
    assert ids == list(range(ids[0], ids[0] + len(ids))), "no event lost"


def test_control_routes(simulator: SimulatorServer, sim_key: str, sse: ReadFeed) -> None:
    base = f"{simulator.url}/_sim"
    status = httpx.get(f"{base}/status", timeout=5).json()
    assert status["placeId"] == simulator.place_id and "stall" in status["faults"]
    truth = httpx.get(f"{base}/truth", timeout=5).json()
    assert set(truth) >= {"tickets", "queueStates", "counters", "eventIds"}
    assert httpx.post(f"{base}/faults/nothing", timeout=5).status_code == 404
    assert httpx.post(f"{base}/faults/drop?feed=nope", timeout=5).status_code == 400
    assert httpx.post(f"{base}/faults/stall?seconds=soon", timeout=5).status_code == 400

    def drop() -> None:
        answer = httpx.post(f"{base}/faults/drop", params={"feed": "tickets"}, timeout=5)
        assert answer.json()["result"]["connections"] == 1

    read = sse(feed_url(simulator), {"key": sim_key}, on_open=drop)
    assert isinstance(read.error, httpx.RemoteProtocolError)
    failed = httpx.post(f"{base}/faults/fail", params={"count": 1, "status": 502}, timeout=5)
    assert failed.json()["result"] == {"count": 1, "status": 502, "target": "all"}
    assert httpx.get(f"{simulator.url}/v1/places", params={"key": sim_key}).status_code == 502


@pytest.mark.parametrize(
    "name", ["malformed", "unknown", "huge", "rotate-keys", "hostile", "resume"]
)
def test_every_fault_is_reachable_by_name(simulator: SimulatorServer, name: str) -> None:
    answer = httpx.post(f"{simulator.url}/_sim/faults/{name}", params={"size": 1000}, timeout=10)
    assert answer.status_code == 200, answer.text


def _is_json(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True
