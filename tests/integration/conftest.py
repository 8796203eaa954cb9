"""Fixtures of the integration tests: the display service simulator on 127.0.0.1, and ways to
read its feeds with bounded waits."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest
from httpx_sse import connect_sse

from lobby_display.simulator import ServiceAccount, SimulatorServer
from lobby_display.simulator.names import COMPANY_NAME

#: Fast simulator settings for tests: a busy place, quick heartbeats, a short key grace.
FAST: dict[str, Any] = {"speed": 60.0, "heartbeat": 0.3, "retry_ms": 500, "key_grace": 1.0}


@pytest.fixture(scope="session")
def sim_account() -> ServiceAccount:
    """The simulator's service account, made once (RSA key generation is slow)."""
    return ServiceAccount.generate(COMPANY_NAME)


@pytest.fixture
def simulator(sim_account: ServiceAccount) -> Iterator[SimulatorServer]:
    """A running simulator: 5 queues, 40 tickets, speed 60, heartbeat 0.3 s, key grace 1 s."""
    with SimulatorServer(seed=7, account=sim_account, **FAST) as sim:
        yield sim


@pytest.fixture
def start_simulator(sim_account: ServiceAccount) -> Iterator[Callable[..., SimulatorServer]]:
    """Start more simulators: `start_simulator(tickets=130)` (fast settings, stopped at the end)."""
    started: list[SimulatorServer] = []

    def start(**options: Any) -> SimulatorServer:
        sim = SimulatorServer(**{"seed": 7, "account": sim_account, **FAST, **options})
        started.append(sim.start())
        return sim

    yield start
    for sim in started:
        sim.stop()


@pytest.fixture
def sim_key(simulator: SimulatorServer) -> str:
    """A valid API key of `simulator`."""
    return simulator.issue_key()


@dataclass
class FeedRead:
    """What a bounded read of one SSE connection saw."""

    events: list[Any] = field(default_factory=list)
    """httpx-sse events, heartbeats (empty data) left out."""
    error: BaseException | None = None
    """The exception that ended the read (None: the stream ended cleanly or `until` held)."""
    ended: bool = False
    """True when the server ended the stream cleanly."""

    def data(self) -> list[Any]:
        """The events' data, parsed as JSON."""
        return [json.loads(event.data) for event in self.events]


ReadFeed = Callable[..., FeedRead]


def read_feed(
    url: str,
    params: dict[str, Any],
    until: Callable[[list[Any]], bool] = lambda events: False,
    timeout: float = 10.0,
    read_timeout: float = 5.0,
    on_open: Callable[[], None] | None = None,
) -> FeedRead:
    """Read an SSE route until `until(events)` holds, the stream ends or fails, or `timeout`.

    `on_open` runs once the first message has arrived (to inject a fault mid-stream).
    Raises AssertionError when `timeout` passes first.
    """
    result = FeedRead()
    deadline = time.monotonic() + timeout
    http_timeout = httpx.Timeout(5.0, read=read_timeout)
    try:
        with (
            httpx.Client(timeout=http_timeout) as client,
            connect_sse(client, "GET", url, params=params) as source,
        ):
            assert source.response.status_code == 200, source.response.read()
            for event in source.iter_sse():
                if not event.data:
                    continue  # httpx-sse bug #35: heartbeats after an id come out empty
                result.events.append(event)
                if len(result.events) == 1 and on_open is not None:
                    on_open()
                if until(result.events):
                    return result
                if time.monotonic() > deadline:
                    raise AssertionError(f"{url}: gave up after {timeout} s")
            result.ended = True
    except (httpx.TransportError, httpx.RemoteProtocolError) as error:
        result.error = error
    return result


@pytest.fixture
def sse() -> ReadFeed:
    """`read_feed`: read a feed with bounded waits."""
    return read_feed
