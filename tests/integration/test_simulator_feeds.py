"""The simulator's three SSE feeds over HTTP: first messages, follow-up events, ids, heartbeats,
retry, filters; a client that applies every event ends up with the truth; same seed, same feed;
stopping ends the streams."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest

from lobby_display.models import Counter, Envelope, QueueState, Ticket, TicketPage
from lobby_display.simulator import Simulator, SimulatorServer
from lobby_display.simulator.server import _bind

#: The `sse` fixture: `read_feed` of conftest.py.
ReadFeed = Callable[..., Any]

TICKETS = "/v1/queues/tickets/currents/sse"
STATES = "/v1/queues/state/sse"
COUNTERS = "/v1/counters/sse"
Start = Callable[..., SimulatorServer]


def raw_stream(url: str, params: dict[str, Any], seconds: float) -> bytes:
    """Every byte an SSE route sends during `seconds` (a raw read: heartbeats included)."""
    received = b""
    deadline = time.monotonic() + seconds
    with (
        httpx.Client(timeout=httpx.Timeout(5.0, read=seconds + 2)) as client,
        client.stream("GET", url, params=params) as response,
    ):
        assert response.status_code == 200
        for chunk in response.iter_raw():
            received += chunk
            if time.monotonic() > deadline:
                break
    return received


def test_tickets_feed_starts_with_a_page_then_sends_ticket_events(
    simulator: SimulatorServer, sim_key: str, sse: ReadFeed
) -> None:
    read = sse(f"{simulator.url}{TICKETS}", {"key": sim_key}, until=lambda events: len(events) >= 8)
    first = TicketPage.model_validate_json(read.events[0].data)
    assert (first.page, first.page_size) == (1, 20)
    assert first.total_count > 20 and len(first.tickets) == 20
    actions = set()
    for event in read.data()[1:]:
        envelope = Envelope.model_validate(event)
        assert (envelope.resource, envelope.action_category) == ("ticket", "TICKET")
        actions.add(envelope.action_name)
        assert Ticket.model_validate(envelope.data).ticket_id
    assert actions <= {"CREATE", "UPDATE", "DELETE"} and actions
    ids = [int(event.id) for event in read.events]
    assert ids == sorted(ids) and len(set(ids[1:])) == len(ids) - 1


def test_a_first_page_holds_at_most_fifty_tickets(start_simulator: Start, sse: ReadFeed) -> None:
    sim = start_simulator(tickets=130, speed=1.0)
    read = sse(f"{sim.url}{TICKETS}", {"key": sim.issue_key(), "pageSize": 50}, until=bool)
    page = TicketPage.model_validate_json(read.events[0].data)
    assert page.page_size == 50 and len(page.tickets) == 50 and page.total_count == 130
    refused = httpx.get(f"{sim.url}{TICKETS}", params={"key": "x", "pageSize": 51}, timeout=5)
    assert refused.status_code == 401  # the key is checked first
    too_big = httpx.get(
        f"{sim.url}{TICKETS}", params={"key": sim.issue_key(), "pageSize": 51}, timeout=5
    )
    assert too_big.status_code == 400 and too_big.json()["error"] == "INVALID_PARAMETER"


def test_queue_state_feed_starts_with_all_data_then_updates(
    start_simulator: Start, sse: ReadFeed
) -> None:
    simulator = start_simulator(speed=300.0)
    two = simulator.queue_ids[:2]
    read = sse(
        f"{simulator.url}{STATES}",
        {"key": simulator.issue_key(), "queuesId": ",".join(two)},
        until=lambda events: len(events) >= 5,
    )
    first = Envelope.model_validate_json(read.events[0].data)
    assert (first.action_category, first.action_name) == ("ALL_QUEUE_STATE", "ALL_DATA")
    assert list(first.data) == two
    assert all(
        QueueState.model_validate(state).queue_id == key for key, state in first.data.items()
    )
    for event in read.data()[1:]:
        assert (event["resource"], event["actionCategory"]) == ("queueState", "QUEUE_STATE")
        assert QueueState.model_validate(event["data"]).queue_id in two


def test_counters_feed_starts_with_the_map_then_sends_changes_in_the_asked_locales(
    simulator: SimulatorServer, sim_key: str, sse: ReadFeed
) -> None:
    ids = simulator.queue_ids
    read = sse(
        f"{simulator.url}{COUNTERS}",
        {"key": sim_key, "countersId": ",".join(ids), "langs": "de_DE"},
        until=lambda events: len(events) >= 3,
        timeout=20,
    )
    first = read.data()[0]
    assert list(first) == ids
    assert all(Counter.model_validate(counter).counter_id == key for key, counter in first.items())
    assert first[ids[0]]["name"] == {"de_DE": "Personalausweise"}
    for event in read.data()[1:]:
        assert (event["resource"], event["actionCategory"]) == ("counter", "COUNTER")
        assert set(event["data"]["name"]) == {"de_DE"}
        assert event["data"]["infos"]["value"] >= 0


def test_a_quiet_feed_sends_retry_then_heartbeats(start_simulator: Start, sim_account: Any) -> None:
    sim = start_simulator(speed=0.0001, heartbeat=0.2, retry_ms=1234)
    raw = raw_stream(
        f"{sim.url}{COUNTERS}", {"key": sim.issue_key(), "countersId": sim.queue_ids[0]}, 1.0
    )
    assert raw.startswith(b"retry: 1234\nid: 0\ndata: {")
    assert raw.count(b": ping\n\n") >= 3


def test_tickets_feed_sends_only_the_asked_queues(
    simulator: SimulatorServer, sim_key: str, sse: ReadFeed
) -> None:
    one = simulator.queue_ids[0]
    read = sse(
        f"{simulator.url}{TICKETS}",
        {"key": sim_key, "queuesId": one, "pageSize": 50},
        until=lambda events: len(events) >= 4,
        timeout=20,
    )
    first = TicketPage.model_validate_json(read.events[0].data)
    assert {ticket.queue.id for ticket in first.tickets} == {one}
    assert {event["data"]["queue"]["id"] for event in read.data()[1:]} == {one}


def test_a_client_that_applies_every_event_ends_with_the_truth(
    simulator: SimulatorServer, sim_key: str, sse: ReadFeed
) -> None:
    url = simulator.url
    truth: dict[str, Any] = {}
    results: dict[str, Any] = {}

    def take_truth() -> None:
        time.sleep(1.0)  # let the place live a little while the feeds are open
        truth.update(simulator.truth())

    def follow(route: str, params: dict[str, Any], feed: str) -> None:
        def caught_up(events: list[Any]) -> bool:
            return bool(truth) and int(events[-1].id) >= truth["eventIds"][feed]

        results[feed] = sse(f"{url}{route}", {"key": sim_key, **params}, until=caught_up)

    threads = [
        threading.Thread(target=follow, args=(TICKETS, {"pageSize": 50}, "tickets")),
        threading.Thread(target=follow, args=(STATES, {}, "queues")),
        threading.Thread(
            target=follow,
            args=(COUNTERS, {"countersId": ",".join(simulator.queue_ids)}, "counters"),
        ),
    ]
    for thread in threads:
        thread.start()
    time.sleep(0.3)
    take_truth()
    for thread in threads:
        thread.join(15)

    def upto(feed: str) -> list[Any]:
        """The feed's messages up to the truth's event id (later ones happened after it)."""
        read = results[feed]
        last = truth["eventIds"][feed]
        return [json.loads(e.data) for e in read.events if int(e.id) <= last]

    tickets: dict[str, Any] = {}
    events = upto("tickets")
    tickets.update({ticket["ticketId"]: ticket for ticket in events[0]["tickets"]})
    for event in events[1:]:
        if event["actionName"] == "DELETE":
            tickets.pop(event["data"]["ticketId"], None)
        else:
            tickets[event["data"]["ticketId"]] = event["data"]
    assert set(tickets) == set(truth["tickets"])
    fields = ("state", "label", "recalledCount", "endpoint", "groupSize")
    for ticket_id, ticket in tickets.items():
        expected = truth["tickets"][ticket_id]
        assert {f: ticket[f] for f in fields} == {f: expected[f] for f in fields}
        assert ticket["timeline"]["recalledAt"] == expected["timeline"]["recalledAt"]

    states = dict(upto("queues")[0]["data"])
    for event in upto("queues")[1:]:
        states[event["data"]["queueId"]] = event["data"]
    assert states == truth["queueStates"]

    counters = dict(upto("counters")[0])
    for event in upto("counters")[1:]:
        counters[event["data"]["counterId"]] = event["data"]
    assert counters == truth["counters"]


def test_same_seed_and_start_give_the_same_feed_over_http(
    start_simulator: Start, sse: ReadFeed
) -> None:
    start = datetime(2026, 11, 22, 10, 30, tzinfo=UTC)
    sims = [start_simulator(seed=21, speed=2000.0, start=start) for _ in range(2)]
    seen: list[dict[int, str]] = [{}, {}]

    def read(index: int) -> None:
        sim = sims[index]
        events = sse(
            f"{sim.url}{TICKETS}",
            {"key": sim.issue_key()},
            until=lambda events: int(events[-1].id) >= 250,
            timeout=30,
        ).events
        seen[index] = {int(event.id): event.data for event in events[1:]}

    threads = [threading.Thread(target=read, args=(index,)) for index in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(35)
    common = set(seen[0]) & set(seen[1])
    assert len(common) >= 100, (min(seen[0]), min(seen[1]))
    assert all(seen[0][event_id] == seen[1][event_id] for event_id in common)


def test_stopping_the_simulator_ends_open_streams_quickly(start_simulator: Start) -> None:
    sim = start_simulator()
    key = sim.issue_key()
    ended = threading.Event()

    def listen() -> None:
        with (
            httpx.Client(timeout=httpx.Timeout(5.0, read=10)) as client,
            client.stream("GET", f"{sim.url}{STATES}", params={"key": key}) as response,
        ):
            for _ in response.iter_raw():
                pass
        ended.set()

    listener = threading.Thread(target=listen)
    listener.start()
    deadline = time.monotonic() + 30
    while sim.status()["feeds"]["queues"]["connections"] < 1:
        assert time.monotonic() < deadline, "the stream never opened"
        time.sleep(0.01)
    sim.stop()
    # Ended by the server (not by the client's 10 s read timeout: the heartbeat comes sooner).
    assert ended.wait(60), "the stream did not end"
    listener.join(30)
    with socket.socket() as probe:
        assert probe.connect_ex(("127.0.0.1", sim.port)) != 0, "the port is released"


async def test_the_asyncio_simulator_serves_in_the_running_loop(sim_account: Any) -> None:
    async with Simulator(account=sim_account, speed=100.0, heartbeat=0.2) as sim:
        key = sim.issue_key()
        async with httpx.AsyncClient(timeout=5) as client:
            places = await client.get(f"{sim.url}/v1/places", params={"key": key})
            assert places.status_code == 200 and sim.place_id in places.json()
            async with client.stream("GET", f"{sim.url}{STATES}", params={"key": key}) as response:
                received = b""
                async for chunk in response.aiter_raw():
                    received += chunk
                    if received.count(b"\n\n") >= 3:
                        break
        assert b"ALL_QUEUE_STATE" in received
    assert sim.hub.closed


def test_a_taken_port_is_reported_as_it_is(sim_account: Any) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        server = SimulatorServer(account=sim_account, port=taken.getsockname()[1])
        with pytest.raises(OSError):
            server.start()


async def test_connections_on_the_simulators_socket_send_small_events_at_once() -> None:
    # Without TCP_NODELAY, an event written while the previous one is unacknowledged waits for
    # the client's delayed ACK (about 40 ms): every latency measured against the simulator
    # would carry it.
    accepted: list[asyncio.Transport] = []

    class Keep(asyncio.Protocol):
        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            accepted.append(transport)  # type: ignore[arg-type]

    loop = asyncio.get_running_loop()
    server = await loop.create_server(Keep, sock=_bind("127.0.0.1", 0))
    port = server.sockets[0].getsockname()[1]
    try:
        _, writer = await asyncio.open_connection("127.0.0.1", port)
        while not accepted:
            await asyncio.sleep(0.01)
        sock = accepted[0].get_extra_info("socket")
        assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)
        writer.close()
    finally:
        server.close()
        await server.wait_closed()
