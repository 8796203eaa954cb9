"""Network faults through the TCP fault proxy between a client and the simulator: a cut in the
middle of an event, a reset, a stall, a byte-by-byte drip, refused connections."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from lobby_display.simulator import SimulatorServer
from lobby_display.simulator.proxy import ThreadedFaultProxy

#: The `sse` fixture: `read_feed` of conftest.py.
ReadFeed = Callable[..., Any]

COUNTERS = "/v1/counters/sse"


@pytest.fixture
def proxy(simulator: SimulatorServer) -> Iterator[ThreadedFaultProxy]:
    with ThreadedFaultProxy(simulator.port) as running:
        yield running


def tickets(proxy: ThreadedFaultProxy) -> str:
    return f"{proxy.url}/v1/queues/tickets/currents/sse"


def test_everything_passes_through_untouched(
    simulator: SimulatorServer, proxy: ThreadedFaultProxy, sse: ReadFeed
) -> None:
    token = simulator.account.sign(proxy.url)  # the audience is the address the client uses
    answer = httpx.get(f"{proxy.url}/v1/api_key", headers={"Authorization": f"Bearer {token}"})
    assert answer.status_code == 200
    key = answer.json()["apiKey"]
    read = sse(tickets(proxy), {"key": key}, until=lambda events: len(events) >= 5)
    assert read.error is None and all(json.loads(event.data) for event in read.events)


def test_a_cut_in_the_middle_of_an_event(
    simulator: SimulatorServer, proxy: ThreadedFaultProxy, sim_key: str, sse: ReadFeed
) -> None:
    read = sse(tickets(proxy), {"key": sim_key}, on_open=proxy.cut_mid_event)
    assert isinstance(read.error, httpx.RemoteProtocolError), read.error
    assert proxy.cuts == 1
    assert all(json.loads(event.data) for event in read.events), "no half event comes out"


def test_the_cut_leaves_the_client_holding_half_an_event(
    proxy: ThreadedFaultProxy, sim_key: str
) -> None:
    received = b""
    with (
        httpx.Client(timeout=5) as client,
        client.stream("GET", tickets(proxy), params={"key": sim_key}) as response,
        pytest.raises(httpx.RemoteProtocolError),
    ):
        for chunk in response.iter_raw():
            if not received:
                proxy.cut_mid_event()
            received += chunk
    tail = received.rsplit(b"\n\n", 1)[-1]
    assert b"data: {" in tail, "the last event is incomplete"


def test_a_reset_connection(proxy: ThreadedFaultProxy, sim_key: str, sse: ReadFeed) -> None:
    read = sse(tickets(proxy), {"key": sim_key}, on_open=proxy.reset_all)
    assert isinstance(read.error, httpx.ReadError), read.error


def test_a_stalled_network_times_the_read_out_then_flows_again(
    proxy: ThreadedFaultProxy, sim_key: str, sse: ReadFeed
) -> None:
    read = sse(tickets(proxy), {"key": sim_key}, on_open=proxy.stall, read_timeout=0.8)
    assert isinstance(read.error, httpx.ReadTimeout), read.error
    proxy.resume()
    again = sse(tickets(proxy), {"key": sim_key}, until=lambda events: len(events) >= 2)
    assert again.error is None


def test_a_byte_by_byte_drip_still_reads_whole_events(
    simulator: SimulatorServer, proxy: ThreadedFaultProxy, sim_key: str, sse: ReadFeed
) -> None:
    proxy.drip(size=1, delay=0.0002)
    read = sse(
        f"{proxy.url}{COUNTERS}",
        {"key": sim_key, "countersId": simulator.queue_ids[0], "langs": "fr_FR"},
        until=bool,
        read_timeout=2,
    )
    assert read.error is None
    assert list(json.loads(read.events[0].data)) == [simulator.queue_ids[0]]
    proxy.stop_drip()


def test_refused_connections(proxy: ThreadedFaultProxy, sim_key: str) -> None:
    proxy.refuse(True)
    with pytest.raises((httpx.ReadError, httpx.RemoteProtocolError, httpx.ConnectError)):
        httpx.get(f"{proxy.url}/v1/places", params={"key": sim_key}, timeout=5)
    proxy.refuse(False)
    assert (
        httpx.get(f"{proxy.url}/v1/places", params={"key": sim_key}, timeout=5).status_code == 200
    )
