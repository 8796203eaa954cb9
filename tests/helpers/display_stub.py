"""A small stand-in for the display service's REST routes, served over HTTP on 127.0.0.1.

`serve(app)` runs any ASGI app with uvicorn in a background thread on a free port. `DisplayStub`
is an app with just enough of the display service for the REST client's tests: keys that can be
revoked, ticket pages, error bodies and stalls on demand, and a log of the requests it saw.
"""

from __future__ import annotations

import asyncio
import secrets
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import jwt
import uvicorn
from cryptography.hazmat.primitives.asymmetric.rsa import RSAPublicKey
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route


@contextmanager
def serve(app: Any, timeout: float = 10.0) -> Iterator[str]:
    """Run `app` on 127.0.0.1 in a thread; yield its base address; stop it on exit."""
    # IPPROTO_TCP, not 0: asyncio sets TCP_NODELAY only on sockets that say so; without it
    # every response waits ~40 ms for a delayed ACK (Nagle).
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(
        app, log_level="warning", access_log=False, lifespan="off", timeout_graceful_shutdown=1
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + timeout
    while not server.started:
        if not thread.is_alive():
            raise RuntimeError("the test server stopped while starting")
        if time.monotonic() > deadline:
            raise TimeoutError("the test server did not start")
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout)
        sock.close()


class Switchboard:
    """An ASGI app that passes each request to whichever app is plugged in now, so one server
    can serve a fresh stub to every test."""

    def __init__(self) -> None:
        self.app: Any = None

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        await self.app(scope, receive, send)


def free_port() -> int:
    """A port on 127.0.0.1 that nothing listens on (connections to it are refused)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


def ticket(number: int, queue_id: str = "Q1", state: int = 0, **extra: Any) -> dict[str, Any]:
    """A ticket record shaped like booking-service-v2.md."""
    return {
        "ticketId": f"T{number:04d}",
        "label": f"A{number:03d}",
        "queue": {"id": queue_id, "name": "Accueil"},
        "place": {"id": "P1", "name": "Mairie"},
        "state": state,
        "isAnAppointment": False,
        "groupSize": 1,
        "recalledCount": 0,
        "lang": "fr_FR",
        "timeline": {"bookedAt": "2026-11-22T08:05:00:00,0000+0100", "recalledAt": []},
        "endpoint": {"id": None, "name": ""},
        **extra,
    }


@dataclass
class DisplayStub:
    """The display service's REST routes, with knobs for the tests.

    Keys: `GET /v1/api_key` checks the developer token (when `public_key` is set) and issues a
    new key; every other route wants a key from `valid_keys`. `failures` maps a path to the
    answer it gets instead (status, JSON body or text). `requests` logs (path, query) pairs.
    """

    public_key: RSAPublicKey | None = None
    audience: str = ""
    valid_keys: set[str] = field(default_factory=set)
    issued: list[str] = field(default_factory=list)
    refuse_every_key: bool = False
    failures: dict[str, tuple[int, Any]] = field(default_factory=dict)
    tickets: list[dict[str, Any]] = field(default_factory=list)
    history: list[dict[str, Any]] = field(default_factory=list)
    endless_tickets: bool = False
    on_page: Callable[[object], None] | None = None
    """Called before each ticket page is served (to change the tickets between pages)."""
    stall_seconds: float = 0.0
    requests: list[tuple[str, dict[str, str]]] = field(default_factory=list)
    place: dict[str, Any] = field(
        default_factory=lambda: {
            "placeId": "P1",
            "companyId": "C1",
            "name": {"fr_FR": "Mairie", "en_US": "Town hall"},
            "city": "Lyon",
            "timezone": "Europe/Paris",
            "position": {"lat": 45.76, "lng": 4.83},
        }
    )
    queues: dict[str, Any] = field(
        default_factory=lambda: {
            "Q1": {"queueId": "Q1", "placeId": "P1", "name": {"fr_FR": "Accueil"}},
            "Q2": {"queueId": "Q2", "placeId": "P1", "name": {"fr_FR": "État civil"}},
        }
    )
    counters: dict[str, Any] = field(
        default_factory=lambda: {
            "Q1": {"counterId": "Q1", "name": {"fr_FR": "Accueil"}, "infos": {"value": 12}},
        }
    )
    endpoints: dict[str, Any] = field(
        default_factory=lambda: {
            "E1": {"endpointId": "E1", "queueId": "Q1", "name": {"fr_FR": "Guichet 1"}},
            "E2": {"endpointId": "E2", "queueId": "Q2", "name": {"fr_FR": "Guichet 2"}},
        }
    )
    timeslots: list[dict[str, Any]] = field(
        default_factory=lambda: [
            {
                "startAt": "2026-11-22T09:00:00:00,0000+0100",
                "endAt": "2026-11-22T12:00:00:00,0000+0100",
            },
            {"startAt": "garbage", "endAt": "2026-11-22T18:00:00:00,0000+0100"},
        ]
    )
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def issue_key(self) -> str:
        """Hand out a new valid key (long and random, like a real one)."""
        with self._lock:
            key = f"stub-key-{len(self.issued) + 1}-{secrets.token_hex(12)}"
            self.issued.append(key)
            self.valid_keys.add(key)
        return key

    def revoke_keys(self) -> None:
        """The service rotates its keys: every key handed out so far stops working."""
        with self._lock:
            self.valid_keys.clear()

    def seen(self, path: str) -> list[dict[str, str]]:
        """The query of each request made to `path`, in order."""
        return [query for seen, query in self.requests if seen == path]

    @property
    def app(self) -> Starlette:
        """The ASGI app. Handlers read the stub's fields at request time, so tests may change
        them while it runs."""
        keyed = self._keyed
        routes = {
            "/v1/places/{place_id}": self._place,
            "/v1/places/{place_id}/queues": keyed("queues"),
            "/v1/places/{place_id}/counters": keyed("counters"),
            "/v1/places/{place_id}/endpoints": keyed("endpoints"),
            "/v1/places/{place_id}/timeslots": self._timeslots,
            "/v1/queues": keyed("queues", "queuesId", "queueId"),
            "/v1/queues/endpoints": keyed("endpoints", "queuesId", "queueId"),
            "/v1/counters": keyed("counters", "countersId", "counterId"),
            "/v1/queues/tickets/currents": self._page("tickets"),
            "/v1/queues/tickets/history": self._page("history"),
        }
        return Starlette(
            routes=[
                Route("/v1/api_key", self._api_key),
                *(Route(path, self._with_key(handler)) for path, handler in routes.items()),
            ]
        )

    async def _api_key(self, request: Request) -> Response:
        self.requests.append((request.url.path, dict(request.query_params)))
        if self.public_key is not None:
            token = request.headers.get("authorization", "").removeprefix("Bearer ")
            try:
                jwt.decode(token, self.public_key, algorithms=["RS256"], audience=self.audience)
            except jwt.InvalidTokenError as error:
                body = {"error": "INVALID_TOKEN", "error_description": str(error)}
                return JSONResponse(body, status_code=401)
        return JSONResponse({"apiKey": self.issue_key()})

    def _with_key(self, handler: Any) -> Any:
        async def checked(request: Request) -> Response:
            query = dict(request.query_params)
            self.requests.append((request.url.path, query))
            if self.stall_seconds:
                await asyncio.sleep(self.stall_seconds)
            key = query.get("key", "")
            if self.refuse_every_key or key not in self.valid_keys:
                # Like many services, it quotes the key back: the client must mask it.
                body = {"error": "INVALID_API_KEY", "error_description": f"unknown key {key}"}
                return JSONResponse(body, status_code=401)
            if (failure := self.failures.get(request.url.path)) is not None:
                status, body = failure
                if isinstance(body, str):
                    return PlainTextResponse(body, status_code=status)
                return JSONResponse(body, status_code=status)
            response: Response = await handler(request)
            return response

        return checked

    async def _place(self, request: Request) -> Response:
        if request.path_params["place_id"] != self.place["placeId"]:
            body = {"error": "PLACE_NOT_FOUND", "error_description": "no such place"}
            return JSONResponse(body, status_code=404)
        return JSONResponse(self.place)

    async def _timeslots(self, request: Request) -> Response:
        return JSONResponse(self.timeslots)

    def _keyed(self, attribute: str, ids_param: str = "", id_field: str = "") -> Any:
        async def handler(request: Request) -> Response:
            records: dict[str, Any] = getattr(self, attribute)
            wanted = request.query_params.get(ids_param, "") if ids_param else ""
            if not wanted:
                return JSONResponse(records)
            ids = wanted.split(",")
            chosen = {key: value for key, value in records.items() if value[id_field] in ids}
            return JSONResponse(chosen)

        return handler

    def _page(self, attribute: str) -> Any:
        async def handler(request: Request) -> Response:
            if self.on_page is not None:
                self.on_page(request)
            tickets: list[dict[str, Any]] = getattr(self, attribute)
            page = int(request.query_params.get("page", "1"))
            size = int(request.query_params.get("pageSize", "20"))
            if not 1 <= size <= 50 or page < 1:
                body = {"error": "BAD_REQUEST", "error_description": "pageSize is 1 to 50"}
                return JSONResponse(body, status_code=400)
            if self.endless_tickets:
                start = (page - 1) * size
                chosen = [ticket(number) for number in range(start, start + size)]
                return JSONResponse(
                    {"totalCount": 1_000_000, "page": page, "pageSize": size, "tickets": chosen}
                )
            queues = request.query_params.get("queuesId", "")
            wanted = [t for t in tickets if not queues or t["queue"]["id"] in queues.split(",")]
            chosen = wanted[(page - 1) * size : page * size]
            return JSONResponse(
                {"totalCount": len(wanted), "page": page, "pageSize": size, "tickets": chosen}
            )

        return handler
