"""REST client of the display service: reference data and ticket pages, with the API key.

Every route gets the key through `auth.ApiKeyAuth`, as the feeds do; failures come out as the
errors of `service_errors` (re-exported here), whose messages never hold the key.
"""

from __future__ import annotations

import logging
import ssl
from collections.abc import Mapping, Sequence
from datetime import datetime
from types import TracebackType
from typing import Any, Final, Protocol, Self, TypeVar
from urllib.parse import quote, urlsplit

import httpx
from pydantic import ValidationError

from lobby_display import __version__
from lobby_display.auth import ApiKeyAuth, ApiKeys, api_keys_from_settings
from lobby_display.config import ConfigError, Settings
from lobby_display.models import (
    Counter,
    Endpoint,
    Place,
    Queue,
    Record,
    Ticket,
    TicketPage,
    TimeSlot,
    keyed,
)
from lobby_display.service_errors import (
    REQUEST_DEADLINE,
    AuthRefused,
    DisplayServiceError,
    KeyRefused,
    ServiceFailed,
    ServiceUnreachable,
    failed,
    fetch,
    service_error_body,
)

log = logging.getLogger(__name__)

#: Largest page the ticket routes serve.
MAX_PAGE_SIZE: Final = 50
#: Most pages read for one list of tickets (2,000 tickets at 50 a page): a service that keeps
#: reporting more tickets than it sends cannot keep the client reading forever.
MAX_TICKET_PAGES: Final = 40
_R = TypeVar("_R", bound=Record)


def make_http(settings: Settings) -> httpx.AsyncClient:
    """The HTTP client for the display service: HTTP/1.1, finite timeouts, TLS verified.

    Certificates are checked against `service.ca_bundle` when set, else the system's store.
    Raises `ConfigError` when the CA bundle cannot be loaded.
    """
    service = settings.service
    timeout = httpx.Timeout(
        connect=service.connect_timeout,
        read=service.read_timeout,
        write=service.connect_timeout,
        pool=service.connect_timeout,
    )
    return httpx.AsyncClient(
        timeout=timeout,
        verify=_tls_context(settings),
        http1=True,
        http2=False,
        follow_redirects=False,
        headers={"User-Agent": f"lobby-display/{__version__}"},
    )


def _tls_context(settings: Settings) -> ssl.SSLContext:
    bundle = settings.service.ca_bundle
    if bundle is not None:
        try:
            return ssl.create_default_context(cafile=str(bundle))
        except (OSError, ssl.SSLError) as error:
            reason = getattr(error, "strerror", None) or str(error)
            source = str(settings.source) if settings.source else "<config>"
            raise ConfigError(
                source, [f"service.ca_bundle: cannot load {bundle} as PEM certificates ({reason})"]
            ) from None
    if urlsplit(settings.service.display_url).scheme == "http":
        # Every request goes to display_url (redirects are not followed): no TLS, so the
        # system's certificates (40 ms and 1.3 MiB to load) are not read. This context trusts
        # nothing.
        return ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context = ssl.create_default_context()
    if not context.cert_store_stats().get("x509_ca"):
        # No system store (no ca-certificates package): fall back to httpx's own bundle.
        import certifi

        context.load_verify_locations(cafile=certifi.where())
    return context


class AnswerObserver(Protocol):
    """Sees the REST answers the client reads (a recording: `recording.Recorder`)."""

    def answer(self, path: str, query: Mapping[str, str], body: Any) -> None:
        """`path` (under `/v1`) answered `body`; `query` is without the API key."""


class DisplayClient:
    """The display service's REST routes that the screen, `check` and `discover` need.

    `langs` (the configured locales) is sent with every route that takes it, unless a call
    gives its own. Methods raise `ServiceUnreachable`, `ServiceFailed` or `AuthRefused`
    (all `DisplayServiceError`), and whatever the key provider raises (`ClockNotSynchronised`).
    """

    def __init__(
        self,
        display_url: str,
        keys: ApiKeys,
        http: httpx.AsyncClient,
        *,
        langs: Sequence[str] = (),
        deadline: float = REQUEST_DEADLINE,
    ) -> None:
        self.base_url = display_url.rstrip("/")
        self.deadline = deadline
        """Seconds a whole REST request may take (`service.request_timeout`); the feeds give
        their streams as long to answer."""
        self.keys = keys
        self.auth = ApiKeyAuth(keys)
        """The key on every request: pass it as `auth=` (the feeds do)."""
        self.http = http
        self.langs = tuple(langs)
        self.observer: AnswerObserver | None = None
        """Sees every JSON answer of `get_json` (a recording), its query without the key."""

    @classmethod
    def from_settings(
        cls, settings: Settings, http: httpx.AsyncClient | None = None, *, sign_apart: bool = False
    ) -> Self:
        """A client as the settings describe (reads the credentials file now).

        `sign_apart`: developer tokens are signed by a program of their own (the kiosk, which
        runs for months, then never loads cryptography; see `auth.ServiceApiKeys`).
        """
        client = http if http is not None else make_http(settings)
        keys = api_keys_from_settings(settings, client, sign_apart=sign_apart)
        return cls(
            settings.service.display_url,
            keys,
            client,
            langs=settings.display.locales,
            deadline=settings.service.request_timeout,
        )

    async def aclose(self) -> None:
        """Close the HTTP connections."""
        await self.http.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.aclose()

    def __repr__(self) -> str:
        return f"DisplayClient({self.base_url!r})"

    # --- conventions shared with the feeds -----------------------------------------------------

    def url(self, path: str) -> str:
        """The full address of a route given relative to `/v1` (`/queues/state/sse`)."""
        return f"{self.base_url}/v1/{path.lstrip('/')}"

    async def params(self, **values: object) -> dict[str, str]:
        """Query parameters with the current API key as `key`; lists comma-separated.

        `None` values are left out. (Requests made with `auth=self.auth` get the key, and its
        renewal, without this.)
        """
        return {**self._query(values), "key": await self.keys.get()}

    @staticmethod
    def _query(values: Mapping[str, object]) -> dict[str, str]:
        return {name: _param(value) for name, value in values.items() if value is not None}

    def _langs(self, langs: Sequence[str] | None) -> list[str] | None:
        chosen = self.langs if langs is None else tuple(langs)
        return list(chosen) or None

    # --- the request behind every route ---------------------------------------------------------

    async def get_json(self, path: str, **values: object) -> Any:
        """GET a route relative to `/v1` with the API key and return its JSON.

        A 401 or 403 renews the key once and retries once; refused again, `AuthRefused`. The
        whole request (a renewal of the key too) has `deadline` seconds, and the answer at most
        `service_errors.MAX_ANSWER_BYTES`.
        """
        route = f"GET /v1/{path.lstrip('/')}"
        response = await fetch(
            self.http,
            self.url(path),
            route=route,
            base_url=self.base_url,
            deadline=self.deadline,
            params=self._query(values),
            auth=self.auth,
        )
        if not response.is_success:
            raise failed(route, response, service_error_body(response))
        try:
            payload = response.json()
        except ValueError:
            raise ServiceFailed(
                f"{route} answered HTTP {response.status_code} with a body that is not JSON",
                status=response.status_code,
                route=route,
            ) from None
        if self.observer is not None:
            self.observer.answer(path, self._query(values), payload)
        return payload

    # --- routes ---------------------------------------------------------------------------------

    async def place(self, place_id: str, langs: Sequence[str] | None = None) -> Place:
        """`/places/{placeId}`: the place."""
        path = f"/places/{_segment(place_id)}"
        payload = await self.get_json(path, langs=self._langs(langs))
        if isinstance(payload, Mapping) and "placeId" not in payload and len(payload) == 1:
            payload = next(iter(payload.values()))  # a collection of one, keyed by id
        try:
            return Place.model_validate(payload)
        except ValidationError:
            raise ServiceFailed(f"GET /v1{path} answered something that is not a place") from None

    async def place_queues(
        self, place_id: str, langs: Sequence[str] | None = None
    ) -> dict[str, Queue]:
        """`/places/{placeId}/queues`: the place's queues by id."""
        path = f"/places/{_segment(place_id)}/queues"
        return await self._collection(Queue, "queue_id", path, langs=self._langs(langs))

    async def place_counters(
        self, place_id: str, langs: Sequence[str] | None = None
    ) -> dict[str, Counter]:
        """`/places/{placeId}/counters`: the place's counters by id."""
        path = f"/places/{_segment(place_id)}/counters"
        return await self._collection(Counter, "counter_id", path, langs=self._langs(langs))

    async def place_endpoints(
        self, place_id: str, langs: Sequence[str] | None = None
    ) -> dict[str, Endpoint]:
        """`/places/{placeId}/endpoints`: the place's endpoints (desks, rooms) by id."""
        path = f"/places/{_segment(place_id)}/endpoints"
        return await self._collection(Endpoint, "endpoint_id", path, langs=self._langs(langs))

    async def queues(
        self, queue_ids: Sequence[str], langs: Sequence[str] | None = None
    ) -> dict[str, Queue]:
        """`/queues`: the given queues by id."""
        return await self._collection(
            Queue, "queue_id", "/queues", queuesId=queue_ids, langs=self._langs(langs)
        )

    async def queue_endpoints(
        self, queue_ids: Sequence[str], langs: Sequence[str] | None = None
    ) -> dict[str, Endpoint]:
        """`/queues/endpoints`: the endpoints of the given queues by id."""
        return await self._collection(
            Endpoint,
            "endpoint_id",
            "/queues/endpoints",
            queuesId=queue_ids,
            langs=self._langs(langs),
        )

    async def counters(
        self, counter_ids: Sequence[str], langs: Sequence[str] | None = None
    ) -> dict[str, Counter]:
        """`/counters`: the given counters by id."""
        return await self._collection(
            Counter, "counter_id", "/counters", countersId=counter_ids, langs=self._langs(langs)
        )

    async def ticket_page(
        self,
        queue_ids: Sequence[str],
        page: int = 1,
        page_size: int = MAX_PAGE_SIZE,
        *,
        history: bool = False,
    ) -> TicketPage:
        """One page of `/queues/tickets/currents` (or `/queues/tickets/history`)."""
        path = "/queues/tickets/history" if history else "/queues/tickets/currents"
        payload = await self.get_json(
            path,
            queuesId=list(queue_ids) or None,
            page=page,
            pageSize=max(1, min(page_size, MAX_PAGE_SIZE)),
        )
        try:
            return TicketPage.model_validate(payload)
        except ValidationError:
            raise ServiceFailed(
                f"GET /v1{path} answered something that is not a ticket page"
            ) from None

    async def current_tickets(
        self, queue_ids: Sequence[str], *, first: TicketPage | None = None
    ) -> list[Ticket]:
        """Every current ticket of the queues, reading as many pages as `totalCount` asks.

        `first` is page 1 when it is already known (the tickets feed's first message): the
        following pages are read with its page size. A ticket seen twice (tickets move between
        pages while they are read) is kept once, as last seen.
        """
        return await self._all_tickets(queue_ids, first)

    async def _all_tickets(
        self, queue_ids: Sequence[str], first: TicketPage | None
    ) -> list[Ticket]:
        if first is None:
            page_size = MAX_PAGE_SIZE
            first = await self.ticket_page(queue_ids, 1, page_size)
        else:
            page_size = first.page_size if 1 <= first.page_size <= MAX_PAGE_SIZE else MAX_PAGE_SIZE
        pages = max(1, -(-first.total_count // page_size))
        if pages > MAX_TICKET_PAGES:
            log.warning(
                "reading only %d pages of tickets (%d tickets at %d a page)",
                MAX_TICKET_PAGES,
                first.total_count,
                page_size,
            )
            pages = MAX_TICKET_PAGES
        # Pages are read from the last to the first, page 1 again at the end. A ticket that
        # leaves the list while the pages are read moves the ones after it towards page 1; read
        # in this order, every ticket that stays is met on some page (read first to last, one
        # could slip from a page not yet read to one already read). A ticket seen on two pages
        # is kept once, as last read, in its first page's order.
        read = [first]
        if pages > 1:
            for number in range(pages, 0, -1):
                read.append(await self.ticket_page(queue_ids, number, page_size))
        latest = {ticket.ticket_id: ticket for page in read for ticket in page.tickets}
        ordered = sorted(read, key=lambda page: page.page)
        return [
            latest[ticket_id]
            for ticket_id in dict.fromkeys(
                ticket.ticket_id for page in ordered for ticket in page.tickets
            )
        ]

    async def timeslots(
        self,
        place_id: str,
        start_at: str | datetime | None = None,
        end_at: str | datetime | None = None,
    ) -> list[TimeSlot]:
        """`/places/{placeId}/timeslots` (default: the current day). Unreadable slots are skipped.

        The spec does not give the shape of `startAt` / `endAt`: strings are passed as given,
        datetimes in ISO-8601.
        """
        path = f"/places/{_segment(place_id)}/timeslots"
        payload = await self.get_json(path, startAt=start_at, endAt=end_at)
        if isinstance(payload, Mapping):
            items = list(payload.values())
        elif isinstance(payload, list):
            items = payload
        else:
            raise ServiceFailed(
                f"GET /v1{path} answered something that is not a list of time slots"
            )
        slots = []
        for item in items:
            try:
                slots.append(TimeSlot.model_validate(item))
            except ValidationError:
                log.warning("skipped an unreadable time slot of place %s", place_id)
        return slots

    async def _collection(
        self, model: type[_R], id_field: str, path: str, **values: object
    ) -> dict[str, _R]:
        payload = await self.get_json(path, **values)
        try:
            return keyed(model, payload, id_field)
        except ValueError:
            raise ServiceFailed(
                f"GET /v1{path} answered something that is not a collection of "
                f"{model.__name__} records"
            ) from None


def _param(value: object) -> str:
    """A query-parameter value as the service expects it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, list | tuple):
        return ",".join(_param(item) for item in value)
    return str(value)


def _segment(value: str) -> str:
    """An id as one path segment: `/`, `?` and `#` cannot change the route."""
    return quote(value, safe="")


__all__ = [
    "MAX_PAGE_SIZE",
    "MAX_TICKET_PAGES",
    "AuthRefused",
    "DisplayClient",
    "DisplayServiceError",
    "KeyRefused",
    "ServiceFailed",
    "ServiceUnreachable",
    "make_http",
]
