"""The REST client against a stand-in display service over real HTTP on 127.0.0.1."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa

from lobby_display.auth import KEY_CACHE_NAME, FixedApiKey
from lobby_display.client import (
    MAX_TICKET_PAGES,
    AuthRefused,
    DisplayClient,
    ServiceFailed,
    ServiceUnreachable,
)
from lobby_display.config import Settings, settings_from_dict
from lobby_display.models import TicketPage
from tests.helpers.display_stub import DisplayStub, Switchboard, free_port, serve, ticket


@pytest.fixture(scope="module")
def server() -> Iterator[tuple[str, Switchboard]]:
    """One server for the module; each test plugs in a fresh stub."""
    board = Switchboard()
    with serve(board) as url:
        yield url, board


@pytest.fixture
def stub(server: tuple[str, Switchboard], rsa_key: rsa.RSAPrivateKey) -> DisplayStub:
    url, board = server
    fresh = DisplayStub(public_key=rsa_key.public_key(), audience=url)
    board.app = fresh.app
    return fresh


@pytest.fixture
def base_url(server: tuple[str, Switchboard], stub: DisplayStub) -> str:
    return server[0]


def make_settings(
    display_url: str, tmp_path: Path, service_account_file: Path | None, **service: object
) -> Settings:
    credentials: dict[str, object] = (
        {"credentials": str(service_account_file), "company": "Example Company"}
        if service_account_file is not None
        else {}
    )
    return settings_from_dict(
        {
            "service": {"display_url": display_url, **credentials, **service},
            "place": {"id": "P1"},
            "display": {"locales": ["fr_FR", "en_US"]},
            "state": {"directory": str(tmp_path / "state")},
        },
        environ={},
    )


@pytest.fixture
async def client(
    base_url: str, tmp_path: Path, service_account_file: Path
) -> AsyncIterator[DisplayClient]:
    settings = make_settings(base_url, tmp_path, service_account_file, read_timeout=5)
    async with DisplayClient.from_settings(settings) as display:
        yield display


class TestReferenceData:
    async def test_place(self, client: DisplayClient, stub: DisplayStub) -> None:
        place = await client.place("P1")
        assert place.place_id == "P1"
        assert place.name == {"fr_FR": "Mairie", "en_US": "Town hall"}
        (query,) = stub.seen("/v1/places/P1")
        assert query["langs"] == "fr_FR,en_US"
        assert query["key"] == stub.issued[0]

    async def test_collections_of_a_place(self, client: DisplayClient) -> None:
        queues = await client.place_queues("P1")
        counters = await client.place_counters("P1")
        endpoints = await client.place_endpoints("P1", langs=["de_DE"])
        assert sorted(queues) == ["Q1", "Q2"]
        assert queues["Q2"].name["fr_FR"] == "État civil"
        assert counters["Q1"].infos.value == 12
        assert endpoints["E1"].queue_id == "Q1"

    async def test_by_ids(self, client: DisplayClient, stub: DisplayStub) -> None:
        assert list(await client.queues(["Q2"])) == ["Q2"]
        assert list(await client.queue_endpoints(["Q1"])) == ["E1"]
        assert list(await client.counters(["Q1"])) == ["Q1"]
        assert stub.seen("/v1/queues")[0]["queuesId"] == "Q2"
        assert stub.seen("/v1/counters")[0]["countersId"] == "Q1"

    async def test_timeslots_skip_an_unreadable_one(self, client: DisplayClient) -> None:
        slots = await client.timeslots("P1")
        assert len(slots) == 1
        assert slots[0].start_at.hour == 9

    async def test_one_key_for_many_requests(
        self, client: DisplayClient, stub: DisplayStub
    ) -> None:
        await client.place("P1")
        await client.place_queues("P1")
        assert len(stub.issued) == 1

    async def test_params_follow_the_conventions(
        self, client: DisplayClient, stub: DisplayStub
    ) -> None:
        await client.place("P1")
        params = await client.params(queuesId=["Q1", "Q2"], page=2, skipped=None, flag=True)
        assert params == {"queuesId": "Q1,Q2", "page": "2", "flag": "true", "key": stub.issued[0]}
        assert client.url("/queues/state/sse") == f"{client.base_url}/v1/queues/state/sse"


class TestTickets:
    async def test_every_page_is_read(self, client: DisplayClient, stub: DisplayStub) -> None:
        stub.tickets = [ticket(number) for number in range(137)]
        tickets = await client.current_tickets(["Q1"])
        assert [t.ticket_id for t in tickets] == [f"T{number:04d}" for number in range(137)]
        pages = stub.seen("/v1/queues/tickets/currents")
        # From the last page to the first (see the next test for why), page 1 again at the end.
        assert [(q["page"], q["pageSize"], q["queuesId"]) for q in pages] == [
            ("1", "50", "Q1"),
            ("3", "50", "Q1"),
            ("2", "50", "Q1"),
            ("1", "50", "Q1"),
        ]

    async def test_no_ticket_is_skipped_when_tickets_leave_while_pages_are_read(
        self, client: DisplayClient, stub: DisplayStub
    ) -> None:
        # Ten tickets of page 1 are done each time a page is served: the later ones move up.
        stub.tickets = [ticket(number) for number in range(150)]
        served = 0

        def leave(_: object) -> None:
            nonlocal served
            served += 1
            if served > 1:
                del stub.tickets[:10]

        stub.on_page = leave
        tickets = await client.current_tickets(["Q1"])
        left = {f"T{number:04d}" for number in range(10 * (served - 1))}
        stayed = {f"T{number:04d}" for number in range(150)} - left
        assert stayed <= {t.ticket_id for t in tickets}

    async def test_a_ticket_seen_twice_is_kept_once_as_last_read(
        self, client: DisplayClient, stub: DisplayStub
    ) -> None:
        # Ticket 3 moved while the pages were read: it shows on page 1 and again on page 2.
        # Page 1 is read last, so its copy is the newest.
        stub.tickets = [ticket(number) for number in range(60)]
        stub.tickets.insert(55, ticket(3, state=200))
        tickets = await client.current_tickets([])
        assert len(tickets) == 60
        assert len({t.ticket_id for t in tickets}) == 60
        assert next(t for t in tickets if t.ticket_id == "T0003").state == 0
        assert [t.ticket_id for t in tickets[:4]] == ["T0000", "T0001", "T0002", "T0003"]

    async def test_empty(self, client: DisplayClient) -> None:
        assert await client.current_tickets(["Q1"]) == []

    async def test_page_count_is_bounded(self, client: DisplayClient, stub: DisplayStub) -> None:
        stub.endless_tickets = True
        tickets = await client.current_tickets(["Q1"])
        assert len(tickets) == MAX_TICKET_PAGES * 50
        assert len(stub.seen("/v1/queues/tickets/currents")) == MAX_TICKET_PAGES + 1

    async def test_continues_after_a_first_page(
        self, client: DisplayClient, stub: DisplayStub
    ) -> None:
        stub.tickets = [ticket(number) for number in range(45)]
        first = TicketPage.model_validate(
            {"totalCount": 45, "page": 1, "pageSize": 20, "tickets": stub.tickets[:20]}
        )
        tickets = await client.current_tickets(["Q1"], first=first)
        assert len(tickets) == 45
        pages = stub.seen("/v1/queues/tickets/currents")
        assert [(q["page"], q["pageSize"]) for q in pages] == [
            ("3", "20"),
            ("2", "20"),
            ("1", "20"),
        ]

    async def test_one_page(self, client: DisplayClient, stub: DisplayStub) -> None:
        stub.tickets = [ticket(number) for number in range(30)]
        page = await client.ticket_page(["Q1"], page=2, page_size=20)
        assert (page.total_count, page.page, len(page.tickets)) == (30, 2, 10)


class TestErrors:
    async def test_error_body_gives_code_and_description(self, client: DisplayClient) -> None:
        with pytest.raises(ServiceFailed) as caught:
            await client.place("P404")
        error = caught.value
        assert (error.status, error.code, error.description) == (
            404,
            "PLACE_NOT_FOUND",
            "no such place",
        )
        assert str(error) == "GET /v1/places/P404 answered HTTP 404 PLACE_NOT_FOUND no such place"

    async def test_error_without_a_body(self, client: DisplayClient, stub: DisplayStub) -> None:
        stub.failures["/v1/places/P1/queues"] = (503, "<html>down for maintenance</html>")
        with pytest.raises(ServiceFailed) as caught:
            await client.place_queues("P1")
        assert (caught.value.status, caught.value.code) == (503, "")
        assert "HTTP 503 Service Unavailable" in str(caught.value)
        assert "<html>" not in str(caught.value)

    async def test_answer_that_is_not_json(self, client: DisplayClient, stub: DisplayStub) -> None:
        stub.failures["/v1/places/P1/queues"] = (200, "surprise")
        with pytest.raises(ServiceFailed, match="not JSON"):
            await client.place_queues("P1")

    async def test_answer_of_the_wrong_shape(
        self, client: DisplayClient, stub: DisplayStub
    ) -> None:
        stub.failures["/v1/places/P1/counters"] = (200, 42)
        with pytest.raises(ServiceFailed, match="not a collection of Counter records"):
            await client.place_counters("P1")

    async def test_connection_refused(self, tmp_path: Path, service_account_file: Path) -> None:
        url = f"http://127.0.0.1:{free_port()}"
        settings = make_settings(url, tmp_path, None, api_key="fixed-key-0123456789")
        async with DisplayClient.from_settings(settings) as display:
            with pytest.raises(ServiceUnreachable) as caught:
                await display.place("P1")
        message = str(caught.value)
        assert message.startswith("GET /v1/places/P1 failed: cannot reach the display service")
        assert "ConnectError" in message
        assert "fixed-key-0123456789" not in message
        assert caught.value.__cause__ is None and caught.value.__suppress_context__

    async def test_key_request_refused_by_an_unreachable_service(
        self, tmp_path: Path, service_account_file: Path
    ) -> None:
        url = f"http://127.0.0.1:{free_port()}"
        settings = make_settings(url, tmp_path, service_account_file)
        async with DisplayClient.from_settings(settings) as display:
            with pytest.raises(ServiceUnreachable, match="GET /v1/api_key failed"):
                await display.place("P1")

    async def test_stall_is_a_timeout(
        self, base_url: str, stub: DisplayStub, tmp_path: Path, service_account_file: Path
    ) -> None:
        stub.stall_seconds = 0.8
        settings = make_settings(base_url, tmp_path, service_account_file, read_timeout=0.2)
        async with DisplayClient.from_settings(settings) as display:
            with pytest.raises(ServiceUnreachable, match="ReadTimeout"):
                await display.place("P1")


class TestKeys:
    async def test_a_rotated_key_is_renewed_once_and_the_request_retried(
        self, client: DisplayClient, stub: DisplayStub
    ) -> None:
        await client.place("P1")
        stub.revoke_keys()
        place = await client.place("P1")
        assert place.place_id == "P1"
        assert len(stub.issued) == 2
        assert [query["key"] for query in stub.seen("/v1/places/P1")] == [
            stub.issued[0],
            stub.issued[0],
            stub.issued[1],
        ]

    async def test_refused_twice(self, client: DisplayClient, stub: DisplayStub) -> None:
        await client.place("P1")
        stub.refuse_every_key = True
        with pytest.raises(AuthRefused) as caught:
            await client.place("P1")
        assert (caught.value.status, caught.value.code) == (401, "INVALID_API_KEY")
        assert "refused again with a new API key" in str(caught.value)
        assert len(stub.seen("/v1/places/P1")) == 3  # one success, then one try and one retry
        assert len(stub.issued) == 2

    async def test_a_fixed_key_that_is_refused(self, base_url: str, tmp_path: Path) -> None:
        settings = make_settings(base_url, tmp_path, None, api_key="fixed-key-0123456789")
        async with DisplayClient.from_settings(settings) as display:
            assert isinstance(display.keys, FixedApiKey)
            with pytest.raises(AuthRefused, match="a fixed key cannot be renewed") as caught:
                await display.place("P1")
        assert "fixed-key-0123456789" not in str(caught.value)

    async def test_a_restart_reuses_the_cached_key(
        self, base_url: str, stub: DisplayStub, tmp_path: Path, service_account_file: Path
    ) -> None:
        settings = make_settings(base_url, tmp_path, service_account_file)
        for _ in range(2):
            async with DisplayClient.from_settings(settings) as display:
                await display.place("P1")
        assert len(stub.issued) == 1
        assert (tmp_path / "state" / KEY_CACHE_NAME).stat().st_mode & 0o777 == 0o600

    async def test_keys_never_reach_logs_or_errors(
        self, client: DisplayClient, stub: DisplayStub, caplog: pytest.LogCaptureFixture
    ) -> None:
        caplog.set_level(logging.DEBUG)
        errors: list[AuthRefused] = []
        await client.place("P1")
        stub.revoke_keys()
        await client.place("P1")  # refused (the service quotes the key back), renewed, retried
        stub.refuse_every_key = True
        try:
            await client.place_queues("P1")
        except AuthRefused as error:
            errors.append(error)
        assert errors
        assert "HTTP Request: GET" in caplog.text  # httpx did log the requests...
        assert "key=***" in caplog.text  # ...with the key masked
        for key in stub.issued:
            assert key not in caplog.text
            for refused in errors:
                assert key not in str(refused)
                assert key not in repr(refused)
                assert key not in refused.description


def test_a_bad_ca_bundle_is_a_config_error(tmp_path: Path) -> None:
    from lobby_display.config import ConfigError

    bundle = tmp_path / "ca.pem"
    bundle.write_text("not a certificate")
    settings = make_settings(
        "https://display.example.test", tmp_path, None, api_key="k-0123456789", ca_bundle=bundle
    )
    with pytest.raises(ConfigError, match=r"service\.ca_bundle: cannot load"):
        DisplayClient.from_settings(settings)


def test_http_client_is_http11_with_finite_timeouts(tmp_path: Path) -> None:
    settings = make_settings(
        "https://display.example.test", tmp_path, None, api_key="k-0123456789", read_timeout=33
    )
    display = DisplayClient.from_settings(settings)
    timeout = display.http.timeout
    assert (timeout.connect, timeout.read) == (10, 33)
    assert None not in (timeout.write, timeout.pool)
    assert isinstance(display.http, httpx.AsyncClient)
