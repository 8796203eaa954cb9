"""The one key flow (`auth.ApiKeyAuth`): the key on every request, REST or SSE; a refused key
renewed once (one renewal for every request refused together) and the request sent again once;
what cannot be renewed reported; no key in a log line or a message."""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path

import httpx
import pytest

from lobby_display.auth import (
    ApiKeyAuth,
    FixedApiKey,
    ServiceApiKeys,
    load_service_account,
)
from lobby_display.service_errors import AuthRefused, KeyRefused, ServiceFailed

DISPLAY_URL = "https://display.example.test"


class Service:
    """Stands for the display service: `/v1/api_key` hands out keys, the other routes answer
    200 to a key it accepts and 401 (with an error body quoting the key) to any other."""

    def __init__(self) -> None:
        self.valid: set[str] = set()
        self.issued: list[str] = []
        self.seen: list[tuple[str, str]] = []
        """(path, key) of every request to a route other than `/v1/api_key`."""
        self.key_gate: asyncio.Event | None = None
        self.key_answer: int = 200
        self.route_gate: asyncio.Event | None = None
        self.arrived = 0

    def revoke(self) -> None:
        self.valid.clear()

    async def __call__(self, request: httpx.Request) -> httpx.Response:
        if request.url.path == "/v1/api_key":
            if self.key_gate is not None:
                await self.key_gate.wait()
            if self.key_answer != 200:
                return httpx.Response(self.key_answer, json={"error": "INVALID_TOKEN"})
            key = f"issued-{len(self.issued) + 1}-s3cr3tvalue"
            self.issued.append(key)
            self.valid.add(key)
            return httpx.Response(200, json={"apiKey": key})
        key = request.url.params.get("key", "")
        self.seen.append((request.url.path, key))
        self.arrived += 1
        if self.route_gate is not None:
            await self.route_gate.wait()
        if key not in self.valid:
            return httpx.Response(
                401, json={"error": "INVALID_API_KEY", "error_description": f"bad key {key}"}
            )
        if request.url.path.endswith("/sse"):
            return httpx.Response(
                200, headers={"content-type": "text/event-stream"}, content=_events()
            )
        return httpx.Response(200, json={"ok": True})


async def _events() -> AsyncIterator[bytes]:
    yield b"data: {}\n\n"


class Keys:
    """A key source that records what it is told."""

    def __init__(self, key: str, fresh: str | Exception) -> None:
        self.key = key
        self.fresh = fresh
        self.refreshed: list[str] = []
        self.accepted_keys: list[str] = []

    async def get(self) -> str:
        return self.key

    async def refresh(self, rejected: str) -> str:
        self.refreshed.append(rejected)
        if isinstance(self.fresh, Exception):
            raise self.fresh
        self.key = self.fresh
        return self.fresh

    def accepted(self, key: str) -> None:
        self.accepted_keys.append(key)


@pytest.fixture
def service() -> Service:
    return Service()


@pytest.fixture
async def http(service: Service) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(transport=httpx.MockTransport(service)) as client:
        yield client


def service_keys(service_account_file: Path, http: httpx.AsyncClient) -> ServiceApiKeys:
    return ServiceApiKeys(
        load_service_account(service_account_file),
        display_url=DISPLAY_URL,
        company="Example Company",
        http=http,
        cache_file=None,
        refresh_after=timedelta(hours=20),
        rng=random.Random(3),
    )


async def test_the_key_is_a_query_parameter_beside_the_others(
    service: Service, http: httpx.AsyncClient
) -> None:
    service.valid.add("good-key-0123456789")
    keys = Keys("good-key-0123456789", "unused")
    response = await http.get(
        f"{DISPLAY_URL}/v1/queues", params={"queuesId": "Q1,Q2"}, auth=ApiKeyAuth(keys)
    )
    assert response.status_code == 200
    assert dict(response.request.url.params) == {"queuesId": "Q1,Q2", "key": "good-key-0123456789"}
    assert keys.accepted_keys == ["good-key-0123456789"]
    assert keys.refreshed == []


async def test_a_refused_key_is_renewed_once_and_the_request_sent_again(
    service: Service, http: httpx.AsyncClient
) -> None:
    service.valid.add("fresh-key-0123456789")
    keys = Keys("old-key-0123456789", "fresh-key-0123456789")
    response = await http.get(f"{DISPLAY_URL}/v1/places/P1", auth=ApiKeyAuth(keys))
    assert response.status_code == 200
    assert service.seen == [
        ("/v1/places/P1", "old-key-0123456789"),
        ("/v1/places/P1", "fresh-key-0123456789"),
    ]
    assert keys.refreshed == ["old-key-0123456789"]
    assert keys.accepted_keys == ["fresh-key-0123456789"]


async def test_a_fresh_key_refused_too_is_reported_after_one_retry(
    service: Service, http: httpx.AsyncClient
) -> None:
    keys = Keys("old-key-0123456789", "fresh-key-0123456789")
    with pytest.raises(AuthRefused) as caught:
        await http.get(f"{DISPLAY_URL}/v1/places/P1", auth=ApiKeyAuth(keys))
    refusal = caught.value
    assert not isinstance(refusal, KeyRefused)
    assert refusal.renewal is None
    assert (refusal.status, refusal.code, refusal.route) == (
        401,
        "INVALID_API_KEY",
        "GET /v1/places/P1",
    )
    assert "refused again with a new API key" in str(refusal)
    assert len(service.seen) == 2
    assert keys.accepted_keys == []
    for key in ("old-key-0123456789", "fresh-key-0123456789"):
        assert key not in str(refusal) and key not in refusal.description


async def test_a_fixed_key_cannot_be_renewed_and_says_so(
    service: Service, http: httpx.AsyncClient
) -> None:
    fixed = FixedApiKey("fixed-key-0123456789abcdef")
    with pytest.raises(AuthRefused, match="a fixed key cannot be renewed") as caught:
        await http.get(f"{DISPLAY_URL}/v1/places/P1", auth=ApiKeyAuth(fixed))
    assert isinstance(caught.value.renewal, KeyRefused)
    assert caught.value.status == 401
    assert len(service.seen) == 1, "no retry with the same key"
    assert "fixed-key-0123456789abcdef" not in str(caught.value)
    assert "fixed-key-0123456789abcdef" not in repr(ApiKeyAuth(fixed))


async def test_a_key_service_that_fails_is_reported_as_it_failed(
    service: Service, http: httpx.AsyncClient
) -> None:
    keys = Keys("old-key-0123456789", ServiceFailed("GET /v1/api_key answered HTTP 503"))
    with pytest.raises(ServiceFailed, match="503") as caught:
        await http.get(f"{DISPLAY_URL}/v1/places/P1", auth=ApiKeyAuth(keys))
    assert not isinstance(caught.value, AuthRefused)


async def test_requests_refused_together_share_one_renewal(
    service: Service, http: httpx.AsyncClient, service_account_file: Path
) -> None:
    keys = service_keys(service_account_file, http)
    auth = ApiKeyAuth(keys)
    await http.get(f"{DISPLAY_URL}/v1/places/P1", auth=auth)
    service.revoke()
    # Five requests (REST and SSE) all refused before any of them asks for a new key.
    service.route_gate = asyncio.Event()
    service.arrived = 0
    routes = ["/v1/places/P1", "/v1/queues", "/v1/queues/state/sse", "/v1/counters/sse", "/v1/x"]

    async def fetch(path: str) -> int:
        if path.endswith("/sse"):
            async with http.stream("GET", f"{DISPLAY_URL}{path}", auth=auth) as response:
                return response.status_code
        return (await http.get(f"{DISPLAY_URL}{path}", auth=auth)).status_code

    requests = asyncio.gather(*(fetch(path) for path in routes))
    while service.arrived < len(routes):
        await asyncio.sleep(0.001)
    service.route_gate.set()
    assert await asyncio.wait_for(requests, 5) == [200] * len(routes)
    assert len(service.issued) == 2, "the first key, then one renewal shared by all"
    retried = [key for path, key in service.seen[-len(routes) :]]
    assert set(retried) == {service.issued[1]}


async def test_a_stream_is_renewed_like_a_route(
    service: Service, http: httpx.AsyncClient, service_account_file: Path
) -> None:
    keys = service_keys(service_account_file, http)
    auth = ApiKeyAuth(keys)
    await http.get(f"{DISPLAY_URL}/v1/places/P1", auth=auth)
    service.revoke()
    async with http.stream("GET", f"{DISPLAY_URL}/v1/counters/sse", auth=auth) as response:
        assert response.status_code == 200
        assert not response.is_stream_consumed, "the stream is left to its reader"
        assert await response.aread() == b"data: {}\n\n"
    assert service.seen[-2:] == [
        ("/v1/counters/sse", service.issued[0]),
        ("/v1/counters/sse", service.issued[1]),
    ]


async def test_no_key_to_be_had_is_the_key_sources_refusal(
    service: Service, http: httpx.AsyncClient, service_account_file: Path
) -> None:
    keys = service_keys(service_account_file, http)
    auth = ApiKeyAuth(keys)
    await http.get(f"{DISPLAY_URL}/v1/places/P1", auth=auth)
    service.revoke()
    service.key_answer = 401
    with pytest.raises(AuthRefused) as caught:
        await http.get(f"{DISPLAY_URL}/v1/places/P1", auth=auth)
    assert isinstance(caught.value.renewal, KeyRefused)
    assert "api_key" in str(caught.value) and "401" in str(caught.value)
    # The next request asks the key source first, which says no itself.
    with pytest.raises(KeyRefused, match="api_key"):
        await http.get(f"{DISPLAY_URL}/v1/places/P1", auth=auth)


async def test_keys_never_reach_the_log(
    service: Service,
    http: httpx.AsyncClient,
    service_account_file: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    keys = service_keys(service_account_file, http)
    auth = ApiKeyAuth(keys)
    await http.get(f"{DISPLAY_URL}/v1/places/P1", auth=auth)
    service.revoke()
    await http.get(f"{DISPLAY_URL}/v1/places/P1", auth=auth)
    assert "HTTP Request: GET" in caplog.text
    assert "key=***" in caplog.text
    for key in service.issued:
        assert key not in caplog.text


def test_a_blocking_client_is_refused() -> None:
    with (
        httpx.Client(transport=httpx.MockTransport(lambda request: httpx.Response(200))) as client,
        pytest.raises(RuntimeError, match="AsyncClient"),
    ):
        client.get(f"{DISPLAY_URL}/v1/places/P1", auth=ApiKeyAuth(Keys("k-0123456789", "x")))
