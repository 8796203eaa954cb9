"""Credentials: the service-account file, the developer token (RS256) and the cached API key.

`ServiceApiKeys` obtains, caches and renews the API key; `ApiKeyAuth` puts it on every request
of the client and the feeds and renews it once when refused. How a key is renewed:
docs/architecture.md. Nothing here logs or prints a private key, a token or an API key.
"""

from __future__ import annotations

import asyncio
import binascii
import contextlib
import functools
import json
import logging
import os
import random
import re
import sys
from collections.abc import AsyncGenerator, Callable, Generator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Protocol

import httpx

from lobby_display import signing
from lobby_display.activity import ACTIVITY
from lobby_display.children import child_environment
from lobby_display.config import Settings
from lobby_display.files import (
    FileRefused,
    expected_owners,
    private_directory,
    read_regular,
    write_atomically,
)
from lobby_display.models import ServiceError, clean_text
from lobby_display.redaction import MASK, RedactingFilter, redact, register_secret
from lobby_display.service_errors import (
    AUTH_STATUSES,
    REQUEST_DEADLINE,
    AuthRefused,
    DisplayServiceError,
    KeyRefused,
    ServiceFailed,
    ServiceUnreachable,
    describe_failure,
    describe_transport_error,
    failed,
    fetch,
    route_of,
    service_error_body,
)

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.rsa import RSAPrivateKey

log = logging.getLogger(__name__)

#: Seconds the developer token's `iat` is set in the past: a box whose clock runs a little behind
#: the service's would otherwise sign tokens "from the future" that the service rejects.
TOKEN_BACKDATE_SECONDS: Final = 30
#: Lifetime of a developer token, counted from its (backdated) `iat`. A token is used for one
#: request to `/api_key` right after it is signed, so five minutes is plenty; a short lifetime
#: limits the harm of a token that leaks. The spec's sample uses an hour; the range it accepts is
#: not given.
TOKEN_LIFETIME_SECONDS: Final = 300
#: A clock before this year has not been synchronised yet (a box without a battery-backed clock
#: boots in 1970): tokens signed with it would be refused, so none are signed.
EARLIEST_PLAUSIBLE_YEAR: Final = 2024
#: Largest random part added to the key's renewal age, as a fraction of `key_refresh_hours`, so
#: that screens started together do not all renew at once.
KEY_RENEWAL_JITTER: Final = 0.10
#: A cache written more than this far in the future (by a clock that was wrong) is not trusted.
_FUTURE_SLACK: Final = timedelta(minutes=5)
#: Shortest time between two keys asked for because the service refused a renewed key before
#: accepting it even once: a service that refuses every key is not asked for a new one at every
#: reconnection (a key that worked and is then refused is a rotation: renewed at once).
RENEWAL_AFTER_REFUSAL: Final = timedelta(minutes=5)
#: Name of the API-key cache in the state directory.
KEY_CACHE_NAME: Final = "api-key.json"
#: Largest service-account file read (one holds an RSA key of a few kilobytes).
MAX_CREDENTIALS_BYTES: Final = 64 * 1024
#: Largest API-key cache read (ours holds a key and two dates).
MAX_CACHE_BYTES: Final = 64 * 1024
#: A JWT, or the start of one: base64url of `{"` then more base64url and dots.
_JWT_SHAPE: Final = re.compile(r"eyJ[A-Za-z0-9_\-]{8,}[A-Za-z0-9_\-.…]*")


# --- errors ------------------------------------------------------------------------------------


class CredentialsError(Exception):
    """The service-account file cannot be used; the message names the file and the fix."""


class ClockNotSynchronised(Exception):
    """The system clock is obviously wrong, so no developer token is signed (yet)."""


# --- the service account and the developer token -----------------------------------------------


@dataclass(frozen=True)
class ServiceAccount:
    """A service account: the e-mail address and the RSA private key that signs tokens.

    The key is parsed from its PEM text the first time it is needed (`private_key`): parsing
    needs the cryptography package (about 8 MiB of memory and 60 ms to import), which a display
    that reuses its cached API key does not load until the key is renewed.
    """

    client_email: str
    pem: str = field(repr=False, compare=False)
    """The private key as PEM text (never shown)."""
    source: Path | None = None

    @functools.cached_property
    def private_key(self) -> RSAPrivateKey:
        """The RSA private key; raises `CredentialsError` when the PEM text holds none."""
        return _rsa_key(self.source, self.pem)


def load_service_account(path: Path | str, *, parse_key: bool = True) -> ServiceAccount:
    """Read a service-account JSON file (`private_key`, `client_email`).

    Raises `CredentialsError` naming the file when it is missing, unreadable, a directory, open
    to group or others, not JSON, lacks a field, or holds no usable RSA private key. With
    `parse_key=False` the key is only checked for its shape (a PEM block of an unencrypted RSA
    key) and parsed when a token is first signed, where a key that is still not usable raises
    `CredentialsError` too.
    """
    path = Path(path)
    try:
        # A FIFO, a device or a huge file is refused at once (a FIFO would hang `check`).
        read = read_regular(
            path,
            limit=MAX_CREDENTIALS_BYTES,
            what="a service-account JSON file",
            owners=None if os.geteuid() == 0 else {os.geteuid(), 0},
        )
    except FileNotFoundError:
        raise CredentialsError(f"{path}: service-account file not found") from None
    except FileRefused as refused:
        raise CredentialsError(str(refused)) from None
    except PermissionError:
        raise CredentialsError(
            f"{path}: cannot be read (permission denied); the display's user must own it"
        ) from None
    except OSError as error:
        raise CredentialsError(f"{path}: cannot be read ({error.strerror})") from None
    if read.open_to_others:
        raise CredentialsError(
            f"{path}: the private key is open to group or others (mode {read.mode:04o}); "
            f"run: chmod 600 {path}"
        )
    raw = read.data
    try:
        data = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise CredentialsError(f"{path}: is not UTF-8 JSON text") from None
    except json.JSONDecodeError as error:
        # The decoder's message quotes no content, only where it stopped.
        raise CredentialsError(
            f"{path}: is not JSON ({error.msg} at line {error.lineno} column {error.colno})"
        ) from None
    if not isinstance(data, dict):
        raise CredentialsError(f"{path}: is not a JSON object with private_key and client_email")
    missing = [
        name
        for name in ("private_key", "client_email")
        if not isinstance(data.get(name), str) or not data[name].strip()
    ]
    if missing:
        raise CredentialsError(f"{path}: missing or empty {' and '.join(missing)}")
    email = clean_text(data["client_email"], 254)
    if "@" not in email:
        raise CredentialsError(f"{path}: client_email {email!r} is not an e-mail address")
    account = ServiceAccount(client_email=email, pem=data["private_key"], source=path)
    if parse_key:
        account.private_key  # noqa: B018 (parsed now: a bad key fails here)
    else:
        _check_pem_shape(path, account.pem)
    return account


#: A PEM block: its label and its base64 body.
_PEM_BLOCK: Final = re.compile(r"-----BEGIN ([A-Z0-9 ]+)-----(.*?)-----END \1-----", re.DOTALL)
#: DER of the rsaEncryption algorithm identifier's OID (1.2.840.113549.1.1.1).
_RSA_OID: Final = bytes.fromhex("06092a864886f70d010101")


def _check_pem_shape(path: Path, pem: str) -> None:
    """Refuse, without parsing it, a key that cannot be an unencrypted RSA private key.

    Checks the PEM block's label, that its body is base64 of a DER sequence, and (PKCS#8) that
    it names the RSA algorithm; the messages are those of the full parse.
    """
    block = _PEM_BLOCK.search(pem)
    if block is None:
        raise _key_problem(path, signing.NOT_A_KEY)
    label, lines = block.group(1), block.group(2).splitlines()
    # RFC 1421 headers (`Proc-Type: 4,ENCRYPTED`) have a colon, which base64 never holds.
    headers = " ".join(line for line in lines if ":" in line)
    body = "".join("".join(line.split()) for line in lines if ":" not in line)
    if label == "ENCRYPTED PRIVATE KEY" or "ENCRYPTED" in headers:
        raise _key_problem(path, signing.ENCRYPTED)
    if label not in ("PRIVATE KEY", "RSA PRIVATE KEY"):
        if label.endswith("PRIVATE KEY") and label != "OPENSSH PRIVATE KEY":
            raise _key_problem(path, signing.NOT_RSA)
        raise _key_problem(path, signing.NOT_A_KEY)
    try:
        der = binascii.a2b_base64(body, strict_mode=True)
    except binascii.Error:
        raise _key_problem(path, signing.NOT_A_KEY) from None
    if not der.startswith(b"\x30"):
        raise _key_problem(path, signing.NOT_A_KEY)
    if label == "PRIVATE KEY" and _RSA_OID not in der[:32]:
        raise _key_problem(path, signing.NOT_RSA)


def _rsa_key(path: Path | None, pem: str) -> RSAPrivateKey:
    try:
        return signing.rsa_key(pem)
    except signing.KeyProblem as problem:
        raise _key_problem(path, problem.args[0]) from None


def _key_problem(path: Path | None, kind: str) -> CredentialsError:
    """The error for a key that is not usable (`kind` is one of `signing`'s problems)."""
    where = path if path is not None else "service account"
    if kind == signing.ENCRYPTED:
        return CredentialsError(
            f"{where}: private_key is encrypted; the display needs an unencrypted key"
        )
    if kind == signing.NOT_RSA:
        return CredentialsError(f"{where}: private_key is not an RSA key (RS256 needs one)")
    return CredentialsError(f"{where}: private_key is not a valid PEM private key")


def token_claims(
    account: ServiceAccount, audience: str, company: str, now: datetime | None = None
) -> dict[str, object]:
    """The claims of a developer token for the service at `audience` (its base address).

    `iat` backdated by TOKEN_BACKDATE_SECONDS, `exp` TOKEN_LIFETIME_SECONDS after `iat`,
    `aud` the service's base address, `iss` and `email` the account's address, `sub` the company.
    Raises `ClockNotSynchronised` when `now` is before EARLIEST_PLAUSIBLE_YEAR.
    """
    moment = now if now is not None else datetime.now(UTC)
    if moment.year < EARLIEST_PLAUSIBLE_YEAR:
        raise ClockNotSynchronised(
            f"the system clock reads {moment:%Y-%m-%d %H:%M}: it is not synchronised yet "
            "(check NTP / systemd-timesyncd); no developer token is signed until it is"
        )
    issued = int(moment.timestamp()) - TOKEN_BACKDATE_SECONDS
    return {
        "iat": issued,
        "exp": issued + TOKEN_LIFETIME_SECONDS,
        "aud": audience,
        "iss": account.client_email,
        "email": account.client_email,
        "sub": company,
    }


def developer_token(
    account: ServiceAccount, audience: str, company: str, now: datetime | None = None
) -> str:
    """Sign a developer token (RS256) for the service at `audience`, in this process.

    The claims are `token_claims`'. Raises `ClockNotSynchronised` when the clock is obviously
    wrong, `CredentialsError` when the account's key is not usable.
    """
    claims = token_claims(account, audience, company, now)
    return signing.sign(claims, account.private_key)


#: Longest wait for the signing program (it takes about 0.2 s).
SIGNING_TIMEOUT_SECONDS: Final = 60.0


async def developer_token_apart(
    account: ServiceAccount, audience: str, company: str, now: datetime | None = None
) -> str:
    """Sign a developer token like `developer_token`, in a short-lived program of its own.

    The program (`python -m lobby_display.signing`) loads cryptography so that this process
    never does (see `lobby_display.signing`); it gets the key's PEM text and the claims on a
    pipe, never on its command line. Raises `ClockNotSynchronised` as `developer_token` does,
    and `CredentialsError` when the key is not usable or the program fails.
    """
    claims = token_claims(account, audience, company, now)
    request = json.dumps({"pem": account.pem, "claims": claims}).encode("utf-8")
    where = account.source if account.source is not None else "service account"
    try:
        # -P: nothing from the working directory is imported in place of the signing code.
        program = await asyncio.create_subprocess_exec(
            sys.executable,
            "-P",
            "-m",
            "lobby_display.signing",
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=child_environment(),
        )
    except OSError as error:
        raise CredentialsError(
            f"{where}: cannot start the signing program ({error.strerror or error})"
        ) from None
    try:
        token, said = await asyncio.wait_for(program.communicate(request), SIGNING_TIMEOUT_SECONDS)
    except TimeoutError:
        program.kill()
        await program.wait()
        raise CredentialsError(
            f"{where}: the signing program did not answer in {SIGNING_TIMEOUT_SECONDS:g} s"
        ) from None
    finally:
        if program.returncode is None:  # cancelled: leave no program behind
            with contextlib.suppress(ProcessLookupError):
                program.kill()
            await asyncio.shield(program.wait())
    problem = said.decode("utf-8", "replace").strip()
    if program.returncode == KEY_PROBLEM_STATUS:
        raise _key_problem(account.source, problem)
    if program.returncode != 0 or not token:
        last = clean_text(redact(problem.splitlines()[-1] if problem else ""), 200)
        raise CredentialsError(
            f"{where}: the signing program failed (exit status {program.returncode}"
            f"{f': {last}' if last else ''})"
        )
    return token.decode("ascii")


#: The signing program's exit status for a key that is not usable.
KEY_PROBLEM_STATUS: Final = signing.KEY_PROBLEM


# --- API keys ----------------------------------------------------------------------------------


class ApiKeys(Protocol):
    """Where the REST client and the feeds get the API key they pass as `key`."""

    async def get(self) -> str:
        """The key to use now (obtained, or renewed, if needed)."""
        ...

    async def refresh(self, rejected: str) -> str:
        """A key other than `rejected`, which the service just refused (401 or 403).

        When the current key already differs from `rejected` (another caller renewed it) it is
        returned as is; concurrent callers share one request. Raises `KeyRefused` when no new
        key can be had.
        """
        ...

    def accepted(self, key: str) -> None:
        """The service accepted `key` (a request or a stream with it succeeded)."""
        ...


class FixedApiKey:
    """The `api_key` of the config: used as is, never renewed."""

    def __init__(self, key: str) -> None:
        register_secret(key)
        self._key = key

    def __repr__(self) -> str:
        return "FixedApiKey(***)"

    async def get(self) -> str:
        """The configured key."""
        return self._key

    def accepted(self, key: str) -> None:
        """Nothing to learn: the key is fixed."""

    async def refresh(self, rejected: str) -> str:
        """A fixed key cannot be renewed: raises `KeyRefused`."""
        raise KeyRefused(
            "the service refuses the api_key set in the configuration, and a fixed key cannot "
            "be renewed: set a valid service.api_key, or use service.credentials instead"
        )


def _utcnow() -> datetime:
    return datetime.now(UTC)


@dataclass
class _CachedKey:
    key: str
    obtained_at: datetime
    jitter: float
    """Fraction of the renewal age added to it, drawn once per key."""


class ServiceApiKeys:
    """API keys obtained with the service account, cached on disk and renewed about daily.

    The key is renewed once it is older than `refresh_after` plus a random part (up to 10 %,
    drawn once per key), or at once when the service refuses it. The cache file (mode 0600)
    lets a restarted display reuse a key instead of asking for a new one. With `sign_apart`,
    developer tokens are signed by a program of their own (`developer_token_apart`), so this
    process never loads cryptography.
    """

    def __init__(
        self,
        account: ServiceAccount,
        *,
        display_url: str,
        company: str,
        http: httpx.AsyncClient,
        cache_file: Path | None,
        refresh_after: timedelta,
        clock: Callable[[], datetime] = _utcnow,
        rng: random.Random | None = None,
        sign_apart: bool = False,
        deadline: float = REQUEST_DEADLINE,
    ) -> None:
        self._account = account
        self._sign_apart = sign_apart
        self._deadline = deadline
        """Seconds the request for a key may take as a whole: every request waiting on it
        fails then (and retries), rather than hang behind it."""
        self._key_failed = False
        """The account's key did not parse: the file is read again before the next token."""
        self._display_url = display_url.rstrip("/")
        self._company = company
        self._http = http
        self._cache_file = cache_file
        self._refresh_after = refresh_after
        self._clock = clock
        self._rng = rng if rng is not None else random.Random()  # noqa: S311 (not for secrets)
        self._current: _CachedKey | None = None
        self._rejected: str | None = None
        self._cache_read = cache_file is None
        self._inflight: asyncio.Task[str] | None = None
        self._forced_at: datetime | None = None
        """When a key was last asked for because the service refused the one before."""

    def __repr__(self) -> str:
        return f"ServiceApiKeys({self._account.client_email!r}, {self._display_url!r})"

    @property
    def renew_at(self) -> datetime | None:
        """When the current key is due for renewal (None when there is no key yet)."""
        current = self._current
        if current is None:
            return None
        return current.obtained_at + self._refresh_after * (1 + current.jitter)

    async def get(self) -> str:
        """The current key, or a new one when there is none, it is due, or it was refused."""
        if not self._cache_read:
            self._read_cache()
        current = self._current
        if (
            current is not None
            and not self._due(current)
            and (current.key != self._rejected or self._throttled())
        ):
            return current.key
        return await self._single_flight()

    async def refresh(self, rejected: str) -> str:
        """A key other than `rejected`: the current one if it differs, else a new one."""
        if self._inflight is not None:
            return await self._single_flight()
        current = self._current
        if current is not None and current.key not in (rejected, self._rejected):
            return current.key
        if current is not None and current.key == rejected and self._throttled():
            self._rejected = rejected
            raise KeyRefused(
                "the service refused the API key renewed after its last refusal; the next one "
                f"is asked for at most {RENEWAL_AFTER_REFUSAL.total_seconds() / 60:.0f} minutes "
                "after the previous one",
                status=401,
                route="GET /v1/api_key",
            )
        self._rejected = rejected
        fresh = await self._single_flight()
        self._forced_at = self._clock()  # only a renewal that gave a key counts
        return fresh

    def accepted(self, key: str) -> None:
        """The service accepted `key`: a later refusal of it is a new rotation, renewed at once."""
        current = self._current
        if current is not None and current.key == key:
            self._forced_at = None

    def _throttled(self) -> bool:
        """True while a key renewed after a refusal, and never accepted since, is too young to
        be renewed again (a service that refuses every new key)."""
        forced = self._forced_at
        return forced is not None and self._clock() - forced < RENEWAL_AFTER_REFUSAL

    def _due(self, current: _CachedKey) -> bool:
        now = self._clock()
        if current.obtained_at - now > _FUTURE_SLACK:
            return True  # obtained "in the future": the clock was wrong then, or is now
        return now >= current.obtained_at + self._refresh_after * (1 + current.jitter)

    async def _single_flight(self) -> str:
        """Join the request for a key in flight, or start one; every caller gets its outcome."""
        task = self._inflight
        if task is None:
            task = asyncio.get_running_loop().create_task(self._fetch())
            self._inflight = task
            task.add_done_callback(self._landed)
        # A caller that is cancelled must not cancel the request the others are waiting on.
        return await asyncio.shield(task)

    def _landed(self, task: asyncio.Task[str]) -> None:
        if self._inflight is task:
            self._inflight = None
        if not task.cancelled():
            task.exception()  # retrieved: a failure with no caller left is not logged as lost

    async def _fetch(self) -> str:
        route = "GET /v1/api_key"
        try:
            if self._key_failed:
                # The key did not parse last time: the file may have been fixed since.
                self._account = self._reread_account()
            if self._sign_apart:
                token = await developer_token_apart(
                    self._account, self._display_url, self._company, self._clock()
                )
            else:
                token = developer_token(
                    self._account, self._display_url, self._company, self._clock()
                )
        except CredentialsError as problem:
            self._key_failed = True
            raise KeyRefused(f"no developer token can be signed: {problem}", route=route) from None
        self._key_failed = False
        response = await fetch(
            self._http,
            f"{self._display_url}/v1/api_key",
            route=route,
            base_url=self._display_url,
            deadline=self._deadline,
            headers={"Authorization": f"Bearer {token}"},
        )
        body = _masked(service_error_body(response), token)
        if response.status_code in (401, 403):
            raise KeyRefused(
                describe_failure(route, response, body)
                + f" (the service refuses the developer token; check the credentials file, "
                f"company {self._company!r} and the clock)",
                status=response.status_code,
                error=body,
                route=route,
            )
        if response.status_code != 200:
            raise failed(route, response, body)
        key = _api_key_of(response)
        if key is None:
            raise ServiceFailed(
                f"{route} answered HTTP 200 without an apiKey",
                status=response.status_code,
                route=route,
            )
        register_secret(key)
        if self._current is not None:
            ACTIVITY.key_renewals += 1
        self._current = _CachedKey(
            key=key, obtained_at=self._clock(), jitter=self._rng.uniform(0, KEY_RENEWAL_JITTER)
        )
        self._rejected = None
        self._write_cache(self._current)
        log.info("obtained a new API key; it is renewed after %s", self.renew_at)
        return key

    def _reread_account(self) -> ServiceAccount:
        """The service account read again from its file (the same one when it has none)."""
        source = self._account.source
        if source is None:
            return self._account
        return load_service_account(source, parse_key=False)

    def _read_cache(self) -> None:
        self._cache_read = True
        path = self._cache_file
        if path is None:
            return
        try:
            directory = private_directory(path.parent, create=False)
            read = read_regular(
                path,
                limit=MAX_CACHE_BYTES,
                what="an API-key cache",
                follow_links=False,
                owners=expected_owners(directory),
            )
            data = json.loads(read.data.decode("utf-8"))
        except FileNotFoundError:
            return
        except FileRefused as refused:
            log.error("ignored the API-key cache: %s", refused)
            return
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
            log.warning("ignored the API-key cache %s: %s", path, type(error).__name__)
            return
        cached = _cached_key(data, self._display_url)
        if cached is None:
            log.warning("ignored the API-key cache %s: not a cache of this service", path)
            return
        register_secret(cached.key)
        self._current = cached
        log.info("reusing the cached API key obtained at %s", cached.obtained_at)

    def _write_cache(self, cached: _CachedKey) -> None:
        path = self._cache_file
        if path is None:
            return
        payload = {
            "apiKey": cached.key,
            "obtainedAt": cached.obtained_at.isoformat(),
            "jitter": cached.jitter,
            "displayUrl": self._display_url,
        }
        try:
            write_private_file(path, json.dumps(payload))
        except OSError as error:
            # The key still works from memory; only a restart would ask for a new one.
            log.warning(
                "cannot write the API-key cache %s (%s); the key is kept in memory only",
                path,
                error if isinstance(error, FileRefused) else error.strerror or type(error).__name__,
            )


# --- the key on every request ------------------------------------------------------------------


def _guard_http_logs() -> None:
    """Mask secrets in httpx's own log lines ("HTTP Request: GET ...?key=...")."""
    logger = logging.getLogger("httpx")
    if not any(isinstance(existing, RedactingFilter) for existing in logger.filters):
        logger.addFilter(RedactingFilter())


_guard_http_logs()


class ApiKeyAuth(httpx.Auth):
    """The API key on a request to the display service (REST routes and SSE feeds alike).

    Adds the key from `keys` as the query parameter `key`. A 401 or 403 asks `keys` for a key
    other than the refused one (requests refused together share one renewal: see
    `ServiceApiKeys.refresh`) and sends the request again, once. Raises, from the request:
    whatever `keys` raises when it has no key to give (`KeyRefused`, `ServiceUnreachable`,
    `ClockNotSynchronised`...); `AuthRefused` with `renewal` set when the refused key cannot be
    renewed; `AuthRefused` without when the fresh key is refused too. An answer that is a
    success tells `keys` that the key was accepted. The refusal's error body is read (a few
    bytes) to describe it; other answers are left to the caller, unread.
    """

    def __init__(self, keys: ApiKeys) -> None:
        self.keys = keys

    def __repr__(self) -> str:
        return f"ApiKeyAuth({self.keys!r})"

    def sync_auth_flow(
        self, request: httpx.Request
    ) -> Generator[httpx.Request, httpx.Response, None]:
        """Not for blocking clients: the key source is asynchronous."""
        raise RuntimeError("ApiKeyAuth works with httpx.AsyncClient only")
        yield request  # pragma: no cover (makes this a generator)

    async def async_auth_flow(
        self, request: httpx.Request
    ) -> AsyncGenerator[httpx.Request, httpx.Response]:
        key = await self.keys.get()
        register_secret(key)  # (key sources do; a key that reaches a URL is masked, whatever)
        request.url = request.url.copy_set_param("key", key)
        response = yield request
        if response.status_code not in AUTH_STATUSES:
            if response.is_success:
                self.keys.accepted(key)
            return
        route = route_of(request)
        await response.aread()
        body = service_error_body(response)
        status = response.status_code

        def no_new_key(renewal: KeyRefused) -> AuthRefused:
            return AuthRefused(
                f"{describe_failure(route, response, body)}; no new API key: {renewal}",
                status=status,
                error=body,
                route=route,
                renewal=renewal,
            )

        try:
            fresh = await self.keys.refresh(key)
        except KeyRefused as refusal:
            raise no_new_key(refusal) from None
        if fresh == key:
            raise no_new_key(KeyRefused("the key source gave the refused key again", route=route))
        register_secret(fresh)
        request.url = request.url.copy_set_param("key", fresh)
        response = yield request
        if response.status_code in AUTH_STATUSES:
            await response.aread()
            body = service_error_body(response)
            raise AuthRefused(
                f"{describe_failure(route, response, body)} (refused again with a new API key)",
                status=response.status_code,
                error=body,
                route=route,
            )
        if response.is_success:
            self.keys.accepted(fresh)


def _masked(body: ServiceError | None, token: str) -> ServiceError | None:
    """`body` with the developer token masked, should the service quote it back.

    The body's strings were cut at a length, so a quoted token may be cut too: anything shaped
    like a JWT (base64url of `{"...`, with dots) is masked, not just the whole token.
    """
    if body is None:
        return None
    fields = body.model_dump()
    masked = {
        name: _JWT_SHAPE.sub(MASK, text.replace(token, MASK)) for name, text in fields.items()
    }
    return body if masked == fields else body.model_copy(update=masked)


def _api_key_of(response: httpx.Response) -> str | None:
    try:
        payload = response.json()
    except ValueError:
        return None
    if isinstance(payload, dict):
        key = payload.get("apiKey")
        if isinstance(key, str) and key.strip():
            return key.strip()
    return None


def _cached_key(data: Any, display_url: str) -> _CachedKey | None:
    """The cache's content, if it is well formed and belongs to the service at `display_url`."""
    if not isinstance(data, dict) or data.get("displayUrl") != display_url:
        return None
    key, obtained, jitter = data.get("apiKey"), data.get("obtainedAt"), data.get("jitter", 0.0)
    if not (isinstance(key, str) and key and isinstance(obtained, str)):
        return None
    if not isinstance(jitter, int | float) or not 0 <= jitter <= KEY_RENEWAL_JITTER:
        return None
    try:
        obtained_at = datetime.fromisoformat(obtained)
    except ValueError:
        return None
    if obtained_at.tzinfo is None:
        obtained_at = obtained_at.replace(tzinfo=UTC)
    return _CachedKey(key=key, obtained_at=obtained_at, jitter=float(jitter))


def write_private_file(path: Path, text: str) -> None:
    """Replace `path` atomically with `text`, readable by its owner only (mode 0600)."""
    write_atomically(path, text, mode=0o600)


def api_keys_from_settings(
    settings: Settings, http: httpx.AsyncClient, *, sign_apart: bool = False
) -> ApiKeys:
    """The key provider the settings ask for.

    A fixed `service.api_key`, when set, is used as is (the credentials file is then not read).
    Otherwise the service-account file is read now, so a bad file fails at start-up with a
    `CredentialsError`, and keys are cached in the state directory. The private key is parsed
    when a token is first signed (a restart that reuses the cached key never needs it); a key
    that the shape check let through but that does not parse then makes the key provider
    raise `KeyRefused`, and the file is read again for the next try. `sign_apart`: see
    `ServiceApiKeys`.
    """
    service = settings.service
    if service.api_key is not None:
        return FixedApiKey(service.api_key.get_secret_value())
    path = settings.credentials_path()
    if path is None:  # excluded by the config's validation; kept for a clear message
        raise CredentialsError("neither service.credentials nor service.api_key is set")
    return ServiceApiKeys(
        load_service_account(path, parse_key=False),
        display_url=service.display_url,
        company=service.company,
        http=http,
        cache_file=settings.state_directory() / KEY_CACHE_NAME,
        refresh_after=timedelta(hours=service.key_refresh_hours),
        sign_apart=sign_apart,
        deadline=service.request_timeout,
    )


__all__ = [
    "AUTH_STATUSES",
    "EARLIEST_PLAUSIBLE_YEAR",
    "KEY_CACHE_NAME",
    "KEY_RENEWAL_JITTER",
    "TOKEN_BACKDATE_SECONDS",
    "TOKEN_LIFETIME_SECONDS",
    "ApiKeyAuth",
    "ApiKeys",
    "AuthRefused",
    "ClockNotSynchronised",
    "CredentialsError",
    "DisplayServiceError",
    "FixedApiKey",
    "KeyRefused",
    "ServiceAccount",
    "ServiceApiKeys",
    "ServiceFailed",
    "ServiceUnreachable",
    "api_keys_from_settings",
    "describe_failure",
    "describe_transport_error",
    "developer_token",
    "developer_token_apart",
    "load_service_account",
    "service_error_body",
    "token_claims",
    "write_private_file",
]
