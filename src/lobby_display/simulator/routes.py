"""The HTTP routes: the display service's `/v1` interface and the simulator's `/_sim` controls.

Every `/v1` route but `/api_key` wants the API key as query parameter `key`; errors have the
services' body. The choices where the spec is silent: docs/architecture.md (the simulator).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Final

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from lobby_display.models import LOCALES, parse_datetime
from lobby_display.simulator.auth import AuthError, verify_developer_token
from lobby_display.simulator.sse import Subscriber
from lobby_display.updates import Feed

if TYPE_CHECKING:
    from lobby_display.simulator.server import Simulator

DEFAULT_PAGE_SIZE: Final = 20
MAX_PAGE_SIZE: Final = 50
ERROR_URI: Final = "urn:lobby-display:simulator:error:"

_STATUS_CODES: Final = {
    500: "INTERNAL_ERROR",
    502: "BAD_GATEWAY",
    503: "SERVICE_UNAVAILABLE",
    504: "GATEWAY_TIMEOUT",
    429: "TOO_MANY_REQUESTS",
}

Handler = Callable[[Request], Awaitable[Response]]


class BadRequest(Exception):
    """A parameter the route cannot use: answered 400."""


def error(status: int, code: str, description: str) -> JSONResponse:
    """An error answer with the services' error body."""
    body = {"error": code, "error_description": description, "error_uri": ERROR_URI + code}
    headers = {"Retry-After": "1"} if status in (429, 503) else None
    return JSONResponse(body, status_code=status, headers=headers)


def list_param(request: Request, name: str) -> list[str] | None:
    """A list parameter, comma-separated or repeated (`name=a,b`, `name=a&name=b`, `name[]=a`)."""
    raw = request.query_params.getlist(name) + request.query_params.getlist(name + "[]")
    if not raw:
        return None
    return [part.strip() for value in raw for part in value.split(",") if part.strip()]


def langs_param(request: Request) -> tuple[str, ...] | None:
    """The `langs` parameter: locale codes, or None for every locale."""
    langs = list_param(request, "langs")
    if langs is None:
        return None
    unknown = [locale for locale in langs if locale not in LOCALES]
    if unknown:
        raise BadRequest(
            f"langs: unknown locale(s) {', '.join(unknown[:5])}; use {' '.join(LOCALES)}"
        )
    return tuple(dict.fromkeys(langs))


def int_param(request: Request, name: str, default: int, low: int, high: int | None) -> int:
    """An integer parameter within [low, high]."""
    text = request.query_params.get(name)
    if text is None or text == "":
        return default
    try:
        value = int(text)
    except ValueError:
        raise BadRequest(f"{name} must be a whole number") from None
    if value < low or (high is not None and value > high):
        bounds = f"at least {low}" if high is None else f"from {low} to {high}"
        raise BadRequest(f"{name} must be {bounds}")
    return value


def paging(request: Request) -> tuple[int, int]:
    """`page` (from 1, default 1) and `pageSize` (1 to 50, default 20)."""
    page = int_param(request, "page", 1, 1, None)
    size = int_param(request, "pageSize", DEFAULT_PAGE_SIZE, 1, MAX_PAGE_SIZE)
    return page, size


def dumps(payload: object) -> bytes:
    """Compact JSON, UTF-8."""
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode()


class SSEResponse(Response):
    """A response that hands the connection to the feed hub."""

    def __init__(self, sim: Simulator, subscriber: Subscriber, first: bytes) -> None:
        super().__init__(media_type="text/event-stream")
        self.sim = sim
        self.subscriber = subscriber
        self.first = first

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self.sim.hub.stream(self.subscriber, self.first, scope, receive, send)


def build_app(sim: Simulator) -> Starlette:
    """The ASGI application of simulator `sim`."""

    def guarded(handler: Handler, sse: bool = False, keyed: bool = True) -> Handler:
        async def endpoint(request: Request) -> Response:
            status = sim.faults.fail.take(sse)
            if status is not None:
                code = _STATUS_CODES.get(status, f"HTTP_{status}")
                return error(status, code, "a fault set on the simulator")
            if keyed:
                try:
                    sim.keys.check(request.query_params.get("key"))
                except AuthError as refused:
                    return error(401, refused.code, refused.description)
            try:
                return await handler(request)
            except BadRequest as bad:
                return error(400, "INVALID_PARAMETER", str(bad))

        return endpoint

    place = sim.place
    records = place.records

    def check_place(request: Request) -> None:
        if request.path_params["place_id"] != place.place_id:
            raise HTTPException(404, "no place with this id")

    def queue_ids(request: Request, name: str = "queuesId") -> list[str]:
        wanted = list_param(request, name)
        if wanted is None:
            return list(place.queues)
        return [queue_id for queue_id in dict.fromkeys(wanted) if queue_id in place.queues]

    # --- authentication -----------------------------------------------------------------------

    async def api_key(request: Request) -> Response:
        audiences = {sim.url, f"{request.url.scheme}://{request.headers.get('host', '')}"}
        try:
            verify_developer_token(request.headers.get("authorization"), sim.account, audiences)
        except AuthError as refused:
            return error(401, refused.code, refused.description)
        return JSONResponse({"apiKey": sim.keys.issue()})

    # --- reference data -----------------------------------------------------------------------

    async def companies(request: Request) -> Response:
        return JSONResponse({place.company_id: records.company(langs_param(request))})

    async def company_places(request: Request) -> Response:
        if request.path_params["company_id"] != place.company_id:
            raise HTTPException(404, "no company with this id")
        return await places(request)

    async def places(request: Request) -> Response:
        return JSONResponse({place.place_id: records.place_record(langs_param(request))})

    async def one_place(request: Request) -> Response:
        check_place(request)
        return JSONResponse(records.place_record(langs_param(request)))

    async def place_queues(request: Request) -> Response:
        check_place(request)
        return queues_of(list(place.queues), langs_param(request))

    def queues_of(ids: list[str], langs: tuple[str, ...] | None) -> Response:
        return JSONResponse(
            {queue_id: records.queue(place.queues[queue_id], langs) for queue_id in ids}
        )

    async def place_counters(request: Request) -> Response:
        check_place(request)
        return counters_of(list(place.queues), langs_param(request))

    def counters_of(ids: list[str], langs: tuple[str, ...] | None) -> Response:
        return JSONResponse(
            {queue_id: records.counter(place.queues[queue_id], langs) for queue_id in ids}
        )

    async def place_endpoints(request: Request) -> Response:
        check_place(request)
        return endpoints_of(list(place.queues), langs_param(request))

    def endpoints_of(ids: list[str], langs: tuple[str, ...] | None) -> Response:
        return JSONResponse(
            {
                endpoint.endpoint_id: records.endpoint(endpoint, langs)
                for queue_id in ids
                for endpoint in place.queues[queue_id].endpoints
            }
        )

    async def timeslots(request: Request) -> Response:
        check_place(request)
        start_of_day, midnight = place.day_bounds()
        start = _moment_param(request, "startAt", start_of_day, place.elapsed_of)
        end = _moment_param(request, "endAt", midnight, place.elapsed_of)
        if end < start:
            raise BadRequest("endAt must not be before startAt")
        return JSONResponse(records.timeslots(start, end))

    async def queues(request: Request) -> Response:
        return queues_of(queue_ids(request), langs_param(request))

    async def one_queue(request: Request) -> Response:
        queue = place.queues.get(request.path_params["queue_id"])
        if queue is None:
            raise HTTPException(404, "no queue with this id")
        return JSONResponse(records.queue(queue, langs_param(request)))

    async def queue_endpoints(request: Request) -> Response:
        return endpoints_of(queue_ids(request), langs_param(request))

    # --- tickets ------------------------------------------------------------------------------

    def ticket_page(tickets: list[Any], page: int, size: int) -> dict[str, Any]:
        chosen = tickets[(page - 1) * size : page * size]
        return {
            "totalCount": len(tickets),
            "page": page,
            "pageSize": size,
            "tickets": records.tickets(chosen),
        }

    async def currents(request: Request) -> Response:
        page, size = paging(request)
        return JSONResponse(ticket_page(place.current_tickets(queue_ids(request)), page, size))

    async def history(request: Request) -> Response:
        page, size = paging(request)
        return JSONResponse(ticket_page(place.history_tickets(queue_ids(request)), page, size))

    async def state_check(request: Request) -> Response:
        try:
            body = await request.json()
        except (ValueError, UnicodeDecodeError):
            raise BadRequest('the body must be JSON: {"queuesId": [...]}') from None
        wanted = body.get("queuesId") if isinstance(body, dict) else None
        if not isinstance(wanted, list) or not all(isinstance(item, str) for item in wanted):
            raise BadRequest("queuesId (an array of strings) is required")
        return JSONResponse(
            {
                queue_id: records.queue_state(place.queues[queue_id])
                for queue_id in dict.fromkeys(wanted)
                if queue_id in place.queues
            }
        )

    # --- counters -----------------------------------------------------------------------------

    def counter_ids(request: Request) -> list[str]:
        wanted = list_param(request, "countersId")
        if wanted is None:
            raise BadRequest("countersId is required")
        return [counter_id for counter_id in dict.fromkeys(wanted) if counter_id in place.queues]

    async def counters(request: Request) -> Response:
        return counters_of(counter_ids(request), langs_param(request))

    async def one_counter(request: Request) -> Response:
        queue = place.queues.get(request.path_params["counter_id"])
        if queue is None:
            raise HTTPException(404, "no counter with this id")
        return JSONResponse(records.counter(queue, langs_param(request)))

    # --- feeds --------------------------------------------------------------------------------

    def subscribe(
        feed: Feed, ids: list[str] | None, langs: tuple[str, ...] | None = None
    ) -> Subscriber:
        if sim.hub.closed:
            raise HTTPException(503, "the simulator is stopping")
        subscriber = Subscriber(feed, None if ids is None else frozenset(ids), langs)
        sim.hub.subscribers[feed].add(subscriber)
        return subscriber

    async def tickets_sse(request: Request) -> Response:
        page, size = paging(request)
        if sim.dialect.first_page is not None:
            size = min(size, sim.dialect.first_page)
        ids = queue_ids(request)
        subscriber = subscribe(Feed.TICKETS, ids)
        first = dumps(ticket_page(place.current_tickets(ids), page, size))
        return SSEResponse(sim, subscriber, first)

    async def state_sse(request: Request) -> Response:
        ids = queue_ids(request)
        subscriber = subscribe(Feed.QUEUES, ids)
        first = dumps(
            {
                "resource": "queueState",
                "actionCategory": "ALL_QUEUE_STATE",
                "actionName": "ALL_DATA",
                "data": {queue_id: records.queue_state(place.queues[queue_id]) for queue_id in ids},
            }
        )
        return SSEResponse(sim, subscriber, first)

    async def counters_sse(request: Request) -> Response:
        ids = counter_ids(request)
        langs = langs_param(request)
        subscriber = subscribe(Feed.COUNTERS, ids, langs)
        first = dumps(
            {queue_id: records.counter(place.queues[queue_id], langs) for queue_id in ids}
        )
        return SSEResponse(sim, subscriber, first)

    # --- simulator controls -------------------------------------------------------------------

    async def sim_status(request: Request) -> Response:
        return JSONResponse(sim.status())

    async def sim_truth(request: Request) -> Response:
        return JSONResponse(sim.truth())

    async def sim_fault(request: Request) -> Response:
        name = request.path_params["name"]
        params = dict(request.query_params)
        try:
            result = sim.apply_fault(name, params)
        except KeyError:
            return error(404, "UNKNOWN_FAULT", f"no fault named {name!r}; see GET /_sim/status")
        except (TypeError, ValueError) as bad:
            return error(400, "INVALID_PARAMETER", str(bad))
        return JSONResponse({"fault": name, "result": result})

    async def sim_control(request: Request) -> Response:
        name = request.path_params["name"]
        params = dict(request.query_params)
        values = {key: request.query_params.getlist(key) for key in params}
        try:
            result = sim.apply_control(name, params, values)
        except KeyError:
            return error(404, "UNKNOWN_CONTROL", f"no control named {name!r}; see GET /_sim/status")
        except (TypeError, ValueError) as bad:
            return error(400, "INVALID_PARAMETER", str(bad))
        return JSONResponse({"control": name, "result": result})

    v1 = "/v1"
    routes = [
        Route(f"{v1}/api_key", guarded(api_key, keyed=False)),
        Route(f"{v1}/companies", guarded(companies)),
        Route(f"{v1}/companies/{{company_id}}/places", guarded(company_places)),
        Route(f"{v1}/places", guarded(places)),
        Route(f"{v1}/places/{{place_id}}", guarded(one_place)),
        Route(f"{v1}/places/{{place_id}}/queues", guarded(place_queues)),
        Route(f"{v1}/places/{{place_id}}/counters", guarded(place_counters)),
        Route(f"{v1}/places/{{place_id}}/endpoints", guarded(place_endpoints)),
        Route(f"{v1}/places/{{place_id}}/timeslots", guarded(timeslots)),
        Route(f"{v1}/queues", guarded(queues)),
        Route(f"{v1}/queues/endpoints", guarded(queue_endpoints)),
        Route(f"{v1}/queues/state", guarded(state_check), methods=["POST"]),
        Route(f"{v1}/queues/state/sse", guarded(state_sse, sse=True)),
        Route(f"{v1}/queues/tickets/currents", guarded(currents)),
        Route(f"{v1}/queues/tickets/currents/sse", guarded(tickets_sse, sse=True)),
        Route(f"{v1}/queues/tickets/history", guarded(history)),
        Route(f"{v1}/queues/{{queue_id}}", guarded(one_queue)),
        Route(f"{v1}/counters", guarded(counters)),
        Route(f"{v1}/counters/sse", guarded(counters_sse, sse=True)),
        Route(f"{v1}/counters/{{counter_id}}", guarded(one_counter)),
        Route("/_sim/status", sim_status),
        Route("/_sim/truth", sim_truth),
        Route("/_sim/faults/{name}", sim_fault, methods=["POST"]),
        Route("/_sim/{name}", sim_control, methods=["POST"]),
    ]

    async def http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        codes = {404: "NOT_FOUND", 405: "METHOD_NOT_ALLOWED", 503: "SERVICE_UNAVAILABLE"}
        return error(exc.status_code, codes.get(exc.status_code, "HTTP_ERROR"), exc.detail)

    return Starlette(routes=routes, exception_handlers={HTTPException: http_error})


def _moment_param(
    request: Request, name: str, default: float, elapsed_of: Callable[[Any], float]
) -> float:
    text = request.query_params.get(name)
    if not text:
        return default
    try:
        return elapsed_of(parse_datetime(text))
    except ValueError:
        raise BadRequest(f"{name} is not a date-time") from None


__all__ = ["build_app", "error", "langs_param", "list_param", "paging"]
