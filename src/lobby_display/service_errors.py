"""The errors of talking to the display service, and how an HTTP exchange maps onto them.

`ServiceUnreachable`, `ServiceFailed`, `AuthRefused`, `KeyRefused`, for the key flow, the client
and the feeds, with messages that never hold a secret or a URL; `fetch` makes one REST request
bounded as a whole (one deadline, a cap on the answer's bytes).
"""

from __future__ import annotations

import asyncio
from typing import Any, Final

import httpx

from lobby_display.models import ServiceError, clean_text
from lobby_display.redaction import redact

#: Statuses that mean "this API key is refused": renew it, never retry with the same one.
AUTH_STATUSES: Final = frozenset({401, 403})
#: Seconds a whole REST request may take by default (`service.request_timeout`).
REQUEST_DEADLINE: Final = 30.0
#: Largest answer read from a REST route, in bytes (after decompression): a whole place's
#: reference data, or a page of 50 tickets with the longest names, is a few MB at most.
MAX_ANSWER_BYTES: Final = 16 * 1024 * 1024
#: Headers of the streamed answer that no longer describe the body once it is read.
_BODY_HEADERS: Final = frozenset({"content-encoding", "content-length", "transfer-encoding"})


class DisplayServiceError(Exception):
    """A failure talking to the display service. The message never holds a secret."""

    def __init__(self, message: str) -> None:
        super().__init__(redact(message))


class ServiceUnreachable(DisplayServiceError):
    """The service could not be reached: refused connection, unknown host, TLS, timeout."""


class ServiceFailed(DisplayServiceError):
    """The service answered with an error (or an answer that cannot be read).

    `status` is the HTTP status (None when there was no answer to speak of), `error` the
    service's error body `{error, error_description, error_uri}` (empty fields when absent).
    """

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        error: ServiceError | None = None,
        route: str = "",
    ) -> None:
        super().__init__(message)
        self.status = status
        self.error = error if error is not None else ServiceError()
        self.route = route

    @property
    def code(self) -> str:
        """The service's error code (`error`), "" when it gave none."""
        return self.error.error

    @property
    def description(self) -> str:
        """The service's `error_description` (secrets masked), "" when it gave none."""
        return redact(self.error.error_description)


class AuthRefused(ServiceFailed):
    """The service refuses our credentials, even with a freshly obtained API key.

    `renewal` is why no new key could be had (the key was refused and could not be renewed),
    None when a fresh key was refused too or no renewal was tried.
    """

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        error: ServiceError | None = None,
        route: str = "",
        renewal: KeyRefused | None = None,
    ) -> None:
        super().__init__(message, status=status, error=error, route=route)
        self.renewal = renewal


class KeyRefused(AuthRefused):
    """No new API key can be had: the key is fixed in the config, or `/api_key` refused the
    developer token."""


def service_error_body(response: httpx.Response) -> ServiceError | None:
    """The error body `{error, error_description, error_uri}` of `response`, if it has one.

    The body must have been read (`response.read()` / `aread()`).
    """
    try:
        payload = response.json()
    except ValueError:
        return None
    if not isinstance(payload, dict) or not (
        payload.get("error") or payload.get("error_description")
    ):
        return None
    try:
        return ServiceError.model_validate(payload)
    except ValueError:
        return None


def describe_failure(what: str, response: httpx.Response, body: ServiceError | None) -> str:
    """`what answered HTTP 404 CODE description`, or the status reason when the body is silent.

    (Route and status are joined by words, not a colon: `/v1/api_key: ...` reads as a secret
    assignment to the redaction patterns.)
    """
    status = f"HTTP {response.status_code}"
    if body is None:
        reason = clean_text(response.reason_phrase, 60)
        return f"{what} answered {status}{f' {reason}' if reason else ''}"
    details = " ".join(part for part in (body.error, body.error_description) if part)
    return f"{what} answered {status} {details}".rstrip()


def describe_transport_error(error: httpx.HTTPError) -> str:
    """What went wrong on the wire, in words and without the URL (which holds the key)."""
    text = clean_text(redact(str(error)), 200)
    kind = type(error).__name__
    return f"{kind}: {text}" if text else kind


def unreachable(route: str, base_url: str, error: httpx.HTTPError) -> ServiceUnreachable:
    """The error for `route` failing on the wire (raise it `from None`: the httpx error holds
    the request, whose URL holds the key)."""
    return ServiceUnreachable(
        f"{route} failed: cannot reach the display service at {base_url} "
        f"({describe_transport_error(error)})"
    )


def failed(what: str, response: httpx.Response, body: ServiceError | None = None) -> ServiceFailed:
    """The error for an answer that is not a success: `what answered HTTP ...`.

    `body` is the answer's error body when it was read (`service_error_body`); `what` names the
    route (`GET /v1/places/P1`) or the feed, and is the error's `route`.
    """
    return ServiceFailed(
        describe_failure(what, response, body),
        status=response.status_code,
        error=body,
        route=what,
    )


async def fetch(
    http: httpx.AsyncClient,
    url: str,
    *,
    route: str,
    base_url: str,
    deadline: float = REQUEST_DEADLINE,
    limit: int = MAX_ANSWER_BYTES,
    **options: Any,
) -> httpx.Response:
    """GET `url` and read the whole answer, within `deadline` seconds and `limit` bytes.

    `route` (`GET /v1/places/P1`, no query: the URL holds the key) names the request in
    messages, `base_url` the service; `options` go to httpx (`params`, `headers`, `auth`).
    Returns the answer, read (`json()` works), whatever its status. Raises `ServiceUnreachable`
    when it cannot be had (a transport error, or no complete answer within `deadline`),
    `ServiceFailed` when it is larger than `limit`, and whatever `auth` raises.
    """
    try:
        async with asyncio.timeout(deadline):
            async with http.stream("GET", url, **options) as response:
                body = await _read_capped(response, route, limit)
    except TimeoutError:
        raise ServiceUnreachable(
            f"{route} failed: the display service at {base_url} gave no complete answer "
            f"within {deadline:g} s (service.request_timeout)"
        ) from None
    except httpx.HTTPError as error:
        # `from None`: the httpx error holds the request, whose URL holds the key.
        raise unreachable(route, base_url, error) from None
    headers = [
        (name, value) for name, value in response.headers.items() if name not in _BODY_HEADERS
    ]
    return httpx.Response(
        response.status_code,
        headers=headers,
        content=body,
        request=response.request,
        extensions={"reason_phrase": response.reason_phrase.encode("ascii", "replace")},
    )


async def _read_capped(response: httpx.Response, route: str, limit: int) -> bytes:
    """The body of `response` (decoded), refused once it passes `limit` bytes."""

    def too_large() -> ServiceFailed:
        return ServiceFailed(
            f"{route} answered more than {_size(limit)}, the largest answer the display reads "
            "(the service, or a proxy on the way, sent something else)",
            status=response.status_code,
            route=route,
        )

    declared = response.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise too_large()
    parts: list[bytes] = []
    size = 0
    async for part in response.aiter_bytes():
        size += len(part)
        if size > limit:
            raise too_large()
        parts.append(part)
    return b"".join(parts)


def _size(count: int) -> str:
    """`16 MiB`, `512 KiB` or `100 bytes`."""
    if count >= 1024 * 1024 and count % (1024 * 1024) == 0:
        return f"{count // (1024 * 1024)} MiB"
    if count >= 1024 and count % 1024 == 0:
        return f"{count // 1024} KiB"
    return f"{count} bytes"


def route_of(request: httpx.Request) -> str:
    """`GET /v1/places/P1`: the request's method and path, without its query (and key)."""
    path = request.url.raw_path.split(b"?", 1)[0].decode("ascii", "replace")
    return f"{request.method} {path}"


__all__ = [
    "AUTH_STATUSES",
    "MAX_ANSWER_BYTES",
    "REQUEST_DEADLINE",
    "AuthRefused",
    "DisplayServiceError",
    "KeyRefused",
    "ServiceFailed",
    "ServiceUnreachable",
    "describe_failure",
    "describe_transport_error",
    "failed",
    "fetch",
    "route_of",
    "service_error_body",
    "unreachable",
]
