"""Credentials: the service-account file, the developer token, and the API-key cache."""

from __future__ import annotations

import asyncio
import base64
import json
import logging
import random
import shutil
import stat
import subprocess
import sys
from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa

from lobby_display import signing
from lobby_display.auth import (
    KEY_CACHE_NAME,
    KEY_PROBLEM_STATUS,
    ClockNotSynchronised,
    CredentialsError,
    FixedApiKey,
    KeyRefused,
    ServiceAccount,
    ServiceApiKeys,
    ServiceFailed,
    ServiceUnreachable,
    api_keys_from_settings,
    developer_token,
    developer_token_apart,
    load_service_account,
    token_claims,
)
from lobby_display.config import settings_from_dict
from tests.helpers.unprivileged import as_unprivileged, give, shared_folder

DISPLAY_URL = "https://display.example.test"
COMPANY = "Example Company"
START = datetime(2026, 11, 22, 8, 0, tzinfo=UTC)


class Clock:
    """A clock the test moves by hand."""

    def __init__(self, now: datetime = START) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **delta: float) -> None:
        self.now += timedelta(**delta)


class MaxJitter(random.Random):
    """Draws the largest jitter every time, so the test knows when a key falls due."""

    def uniform(self, a: float, b: float) -> float:
        return b


class KeyService:
    """Stands for `GET /v1/api_key`: counts requests, hands out a new key each time."""

    def __init__(self) -> None:
        self.requests: list[httpx.Request] = []
        self.answer: Callable[[httpx.Request], httpx.Response] | None = None
        self.gate: asyncio.Event | None = None
        self.entered = asyncio.Event()

    async def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        self.entered.set()
        if self.gate is not None:
            await self.gate.wait()
        if self.answer is not None:
            return self.answer(request)
        return httpx.Response(200, json={"apiKey": f"issued-key-{len(self.requests)}-s3cr3t"})


@pytest.fixture
def account(service_account_file: Path) -> ServiceAccount:
    return load_service_account(service_account_file)


@pytest.fixture
def service() -> KeyService:
    return KeyService()


@pytest.fixture
async def http(service: KeyService) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(transport=httpx.MockTransport(service)) as client:
        yield client


def signed_claims(token: str, key: rsa.RSAPrivateKey) -> dict[str, Any]:
    """The claims of `token`, checked against `key`'s public half and the display's address
    (not against the clock: tests sign at a fixed moment)."""
    claims: dict[str, Any] = jwt.decode(
        token,
        key.public_key(),
        algorithms=["RS256"],
        audience=DISPLAY_URL,
        options={"verify_exp": False, "verify_iat": False},
    )
    return claims


def make_keys(
    account: ServiceAccount,
    http: httpx.AsyncClient,
    cache_file: Path | None,
    clock: Clock | None = None,
    rng: random.Random | None = None,
    display_url: str = DISPLAY_URL,
) -> ServiceApiKeys:
    return ServiceApiKeys(
        account,
        display_url=display_url,
        company=COMPANY,
        http=http,
        cache_file=cache_file,
        refresh_after=timedelta(hours=20),
        clock=clock or Clock(),
        rng=rng or random.Random(7),
    )


# --- the service-account file ----------------------------------------------------------------


class TestServiceAccountFile:
    def test_a_good_file_gives_the_address_and_key(self, service_account_file: Path) -> None:
        account = load_service_account(service_account_file)
        assert account.client_email == "screen@example-company.test"
        assert account.private_key.key_size == 2048

    def test_the_repr_does_not_show_the_key(self, account: ServiceAccount, rsa_pem: str) -> None:
        text = repr(account)
        assert "screen@example-company.test" in text
        assert "PRIVATE" not in text
        assert rsa_pem.splitlines()[1][:20] not in text

    def test_missing_file(self, tmp_path: Path) -> None:
        path = tmp_path / "nope.json"
        with pytest.raises(CredentialsError, match="not found") as caught:
            load_service_account(path)
        assert str(path) in str(caught.value)

    def test_directory(self, tmp_path: Path) -> None:
        with pytest.raises(CredentialsError, match="is a directory") as caught:
            load_service_account(tmp_path)
        assert str(tmp_path) in str(caught.value)

    def test_path_through_a_file(self, service_account_file: Path) -> None:
        path = service_account_file / "inner.json"
        with pytest.raises(CredentialsError, match="cannot be read") as caught:
            load_service_account(path)
        assert str(path) in str(caught.value)

    def test_unreadable(self, service_account_file: Path) -> None:
        # As an unprivileged user even under root (root reads any file whatever its mode).
        folder = shared_folder()
        try:
            path = folder / "service-account.json"
            path.write_bytes(service_account_file.read_bytes())
            give(path)
            path.chmod(0o000)
            with pytest.raises(CredentialsError, match="permission denied") as caught:
                as_unprivileged(load_service_account, path)
            assert str(path) in str(caught.value)
        finally:
            shutil.rmtree(folder)

    @pytest.mark.parametrize("mode", [0o640, 0o604, 0o644, 0o660])
    def test_open_to_group_or_others(
        self, service_account_file: Path, rsa_pem: str, mode: int
    ) -> None:
        service_account_file.chmod(mode)
        with pytest.raises(CredentialsError) as caught:
            load_service_account(service_account_file)
        message = str(caught.value)
        assert f"chmod 600 {service_account_file}" in message
        assert f"{mode:04o}" in message
        assert "BEGIN" not in message

    def write(self, path: Path, content: str) -> Path:
        path.write_text(content, encoding="utf-8")
        path.chmod(0o600)
        return path

    def test_not_json(self, tmp_path: Path) -> None:
        path = self.write(tmp_path / "sa.json", '{"private_key": "x",\n oops}')
        with pytest.raises(CredentialsError, match=r"is not JSON .*line 2") as caught:
            load_service_account(path)
        assert str(path) in str(caught.value)

    def test_not_an_object(self, tmp_path: Path) -> None:
        path = self.write(tmp_path / "sa.json", '["private_key"]')
        with pytest.raises(CredentialsError, match="not a JSON object"):
            load_service_account(path)

    @pytest.mark.parametrize("missing", ["private_key", "client_email"])
    def test_missing_field(self, tmp_path: Path, rsa_pem: str, missing: str) -> None:
        data = {"private_key": rsa_pem, "client_email": "a@b.test"}
        del data[missing]
        path = self.write(tmp_path / "sa.json", json.dumps(data))
        with pytest.raises(CredentialsError, match=f"missing or empty {missing}") as caught:
            load_service_account(path)
        assert str(path) in str(caught.value)
        assert "BEGIN" not in str(caught.value)

    def test_empty_fields_are_named_together(self, tmp_path: Path) -> None:
        path = self.write(tmp_path / "sa.json", '{"private_key": "", "client_email": " "}')
        with pytest.raises(CredentialsError, match="private_key and client_email"):
            load_service_account(path)

    def test_email_that_is_not_an_address(self, tmp_path: Path, rsa_pem: str) -> None:
        data = {"private_key": rsa_pem, "client_email": "screen"}
        path = self.write(tmp_path / "sa.json", json.dumps(data))
        with pytest.raises(CredentialsError, match="not an e-mail address"):
            load_service_account(path)

    def test_garbage_key(self, tmp_path: Path) -> None:
        secret = "-----BEGIN PRIVATE KEY-----\nTOPSECRETBYTES\n-----END PRIVATE KEY-----\n"
        data = {"private_key": secret, "client_email": "a@b.test"}
        path = self.write(tmp_path / "sa.json", json.dumps(data))
        with pytest.raises(CredentialsError, match="not a valid PEM private key") as caught:
            load_service_account(path)
        assert "TOPSECRET" not in str(caught.value)
        assert caught.value.__cause__ is None

    def test_key_that_is_not_rsa(self, tmp_path: Path) -> None:
        pem = (
            ec.generate_private_key(ec.SECP256R1())
            .private_bytes(
                serialization.Encoding.PEM,
                serialization.PrivateFormat.PKCS8,
                serialization.NoEncryption(),
            )
            .decode()
        )
        path = self.write(
            tmp_path / "sa.json", json.dumps({"private_key": pem, "client_email": "a@b.test"})
        )
        with pytest.raises(CredentialsError, match="not an RSA key"):
            load_service_account(path)

    def test_encrypted_key(self, tmp_path: Path, rsa_key: rsa.RSAPrivateKey) -> None:
        pem = rsa_key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.BestAvailableEncryption(b"passphrase"),
        ).decode()
        path = self.write(
            tmp_path / "sa.json", json.dumps({"private_key": pem, "client_email": "a@b.test"})
        )
        with pytest.raises(CredentialsError, match="encrypted"):
            load_service_account(path)


# --- the developer token -------------------------------------------------------------------------


class TestDeveloperToken:
    def test_claims(self, account: ServiceAccount, rsa_key: rsa.RSAPrivateKey) -> None:
        token = developer_token(account, DISPLAY_URL, COMPANY, START)
        assert jwt.get_unverified_header(token)["alg"] == "RS256"
        claims = signed_claims(token, rsa_key)
        issued = int(START.timestamp()) - 30
        assert claims == {
            "iat": issued,
            "exp": issued + 300,
            "aud": DISPLAY_URL,
            "iss": "screen@example-company.test",
            "email": "screen@example-company.test",
            "sub": COMPANY,
        }

    def test_a_token_signed_by_another_key_does_not_verify(self, account: ServiceAccount) -> None:
        token = developer_token(account, DISPLAY_URL, COMPANY, START)
        other = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        with pytest.raises(jwt.InvalidSignatureError):
            jwt.decode(token, other.public_key(), algorithms=["RS256"], audience=DISPLAY_URL)

    def test_a_fresh_token_is_accepted_now(
        self, account: ServiceAccount, rsa_key: rsa.RSAPrivateKey
    ) -> None:
        # Backdated by 30 s, valid for 5 minutes: verifies against the real clock.
        token = developer_token(account, DISPLAY_URL, COMPANY)
        claims = jwt.decode(token, rsa_key.public_key(), algorithms=["RS256"], audience=DISPLAY_URL)
        assert claims["sub"] == COMPANY

    def test_no_token_before_the_clock_is_set(self, account: ServiceAccount) -> None:
        with pytest.raises(ClockNotSynchronised, match="not synchronised"):
            developer_token(account, DISPLAY_URL, COMPANY, datetime(1970, 1, 1, tzinfo=UTC))


# --- API keys ------------------------------------------------------------------------------------


class TestFixedKey:
    async def test_gives_the_configured_key(self) -> None:
        assert await FixedApiKey("fixed-key-123").get() == "fixed-key-123"

    async def test_cannot_be_renewed(self) -> None:
        keys = FixedApiKey("fixed-key-123")
        with pytest.raises(KeyRefused, match="cannot be renewed") as caught:
            await keys.refresh("fixed-key-123")
        assert "fixed-key-123" not in str(caught.value)
        assert "fixed-key-123" not in repr(keys)


class TestServiceKeys:
    async def test_asks_with_a_developer_token(
        self,
        account: ServiceAccount,
        http: httpx.AsyncClient,
        service: KeyService,
        rsa_key: rsa.RSAPrivateKey,
        tmp_path: Path,
    ) -> None:
        keys = make_keys(account, http, tmp_path / KEY_CACHE_NAME)
        assert await keys.get() == "issued-key-1-s3cr3t"
        (request,) = service.requests
        assert request.url == f"{DISPLAY_URL}/v1/api_key"
        scheme, token = request.headers["Authorization"].split(" ", 1)
        assert scheme == "Bearer"
        claims = signed_claims(token, rsa_key)
        assert claims["sub"] == COMPANY

    async def test_key_is_reused_until_due(
        self, account: ServiceAccount, http: httpx.AsyncClient, service: KeyService
    ) -> None:
        clock = Clock()
        keys = make_keys(account, http, None, clock)
        first = await keys.get()
        clock.advance(hours=19)
        assert await keys.get() == first
        assert len(service.requests) == 1

    async def test_renewal_waits_for_the_jitter(
        self, account: ServiceAccount, http: httpx.AsyncClient, service: KeyService
    ) -> None:
        clock = Clock()
        keys = make_keys(account, http, None, clock, rng=MaxJitter())
        first = await keys.get()
        assert keys.renew_at == START + timedelta(hours=22)
        clock.advance(hours=21, minutes=59)  # past 20 h, within 20 h + 10 %
        assert await keys.get() == first
        clock.advance(minutes=2)
        assert await keys.get() != first
        assert len(service.requests) == 2

    async def test_jitter_is_drawn_per_key_within_ten_percent(
        self, account: ServiceAccount, http: httpx.AsyncClient
    ) -> None:
        renewals = set()
        for seed in range(20):
            keys = make_keys(account, http, None, rng=random.Random(seed))
            await keys.get()
            assert keys.renew_at is not None
            age = keys.renew_at - START
            assert timedelta(hours=20) <= age <= timedelta(hours=22)
            renewals.add(age)
        assert len(renewals) > 10  # screens started together do not renew together

    async def test_cache_survives_a_restart(
        self, account: ServiceAccount, service: KeyService, tmp_path: Path
    ) -> None:
        cache = tmp_path / "state" / KEY_CACHE_NAME
        clock = Clock()
        async with httpx.AsyncClient(transport=httpx.MockTransport(service)) as http:
            first = await make_keys(account, http, cache, clock, MaxJitter()).get()
        assert stat.S_IMODE(cache.stat().st_mode) == 0o600
        clock.advance(hours=21)  # due without the jitter, which was drawn once and kept
        async with httpx.AsyncClient(transport=httpx.MockTransport(service)) as http:
            restarted = make_keys(account, http, cache, clock, random.Random(0))
            assert await restarted.get() == first
        assert len(service.requests) == 1

    async def test_a_cached_key_that_is_due_is_renewed_and_rewritten(
        self, account: ServiceAccount, http: httpx.AsyncClient, service: KeyService, tmp_path: Path
    ) -> None:
        cache = tmp_path / KEY_CACHE_NAME
        clock = Clock()
        first = await make_keys(account, http, cache, clock).get()
        clock.advance(hours=23)
        second = await make_keys(account, http, cache, clock).get()
        assert second != first
        assert json.loads(cache.read_text())["apiKey"] == second
        assert not list(tmp_path.glob(".*tmp"))  # no temporary file left behind

    async def test_corrupt_cache_is_ignored(
        self,
        account: ServiceAccount,
        http: httpx.AsyncClient,
        service: KeyService,
        tmp_path: Path,
        caplog: pytest.LogCaptureFixture,
    ) -> None:
        cache = tmp_path / KEY_CACHE_NAME
        cache.write_text('{"apiKey": "half-writ')
        caplog.set_level(logging.WARNING, logger="lobby_display.auth")
        key = await make_keys(account, http, cache).get()
        assert key == "issued-key-1-s3cr3t"
        assert f"ignored the API-key cache {cache}" in caplog.text
        assert json.loads(cache.read_text())["apiKey"] == key

    async def test_cache_of_another_service_is_ignored(
        self, account: ServiceAccount, http: httpx.AsyncClient, service: KeyService, tmp_path: Path
    ) -> None:
        cache = tmp_path / KEY_CACHE_NAME
        await make_keys(account, http, cache, display_url="https://other.example.test").get()
        await make_keys(account, http, cache).get()
        assert len(service.requests) == 2

    async def test_cache_from_a_wrong_clock_is_not_trusted(
        self, account: ServiceAccount, http: httpx.AsyncClient, service: KeyService, tmp_path: Path
    ) -> None:
        cache = tmp_path / KEY_CACHE_NAME
        await make_keys(account, http, cache, Clock(START + timedelta(days=30))).get()
        await make_keys(account, http, cache, Clock(START)).get()
        assert len(service.requests) == 2

    async def test_unwritable_cache_keeps_the_key_in_memory(
        self,
        account: ServiceAccount,
        http: httpx.AsyncClient,
        service_account_file: Path,
        caplog: pytest.LogCaptureFixture,
    ) -> None:
        cache = service_account_file / KEY_CACHE_NAME  # "inside" a file: cannot be created
        keys = make_keys(account, http, cache)
        assert await keys.get() == await keys.get()
        assert "cannot write the API-key cache" in caplog.text

    async def test_forced_refresh(
        self, account: ServiceAccount, http: httpx.AsyncClient, service: KeyService
    ) -> None:
        keys = make_keys(account, http, None)
        first = await keys.get()
        second = await keys.refresh(first)
        assert second != first
        assert await keys.get() == second
        # A caller that still holds the old key gets the new one without another request.
        assert await keys.refresh(first) == second
        assert len(service.requests) == 2

    async def test_concurrent_refreshes_share_one_request(
        self, account: ServiceAccount, http: httpx.AsyncClient, service: KeyService
    ) -> None:
        keys = make_keys(account, http, None)
        first = await keys.get()
        service.gate = asyncio.Event()
        service.entered.clear()
        refreshes = asyncio.gather(*(keys.refresh(first) for _ in range(3)))
        await asyncio.wait_for(service.entered.wait(), 5)
        service.gate.set()
        results = await asyncio.wait_for(refreshes, 5)
        assert len(set(results)) == 1
        assert results[0] != first
        assert len(service.requests) == 2  # the first key, then exactly one renewal

    async def test_concurrent_failures_share_one_request(
        self, account: ServiceAccount, http: httpx.AsyncClient, service: KeyService
    ) -> None:
        service.answer = lambda request: httpx.Response(503)
        keys = make_keys(account, http, None)
        outcomes = await asyncio.gather(*(keys.get() for _ in range(3)), return_exceptions=True)
        assert all(isinstance(outcome, ServiceFailed) for outcome in outcomes)
        assert len(service.requests) == 1

    async def test_a_service_refusing_every_key_is_asked_at_most_every_five_minutes(
        self, account: ServiceAccount, http: httpx.AsyncClient, service: KeyService
    ) -> None:
        clock = Clock()
        keys = make_keys(account, http, None, clock=clock)
        first = await keys.get()
        renewed = await keys.refresh(first)  # a rotation: renewed at once
        assert renewed != first
        for _ in range(10):  # the renewed key is refused too, at every reconnection
            clock.advance(seconds=20)
            with pytest.raises(KeyRefused, match="at most 5 minutes"):
                await keys.refresh(await keys.get())
        assert len(service.requests) == 2
        clock.advance(minutes=2)  # five minutes after the renewal: a new key to try
        assert await keys.get() not in (first, renewed)
        assert len(service.requests) == 3

    async def test_a_renewed_key_that_worked_is_renewed_at_once_when_refused(
        self, account: ServiceAccount, http: httpx.AsyncClient, service: KeyService
    ) -> None:
        # Two rotations a few seconds apart: the screen must not wait five minutes.
        clock = Clock()
        keys = make_keys(account, http, None, clock=clock)
        first = await keys.get()
        second = await keys.refresh(first)
        keys.accepted(second)
        clock.advance(seconds=10)
        third = await keys.refresh(second)
        assert third not in (first, second)
        assert len(service.requests) == 3

    async def test_a_refused_key_is_not_handed_out_again(
        self, account: ServiceAccount, http: httpx.AsyncClient, service: KeyService
    ) -> None:
        keys = make_keys(account, http, None)
        first = await keys.get()
        service.answer = lambda request: httpx.Response(503)
        with pytest.raises(ServiceFailed):
            await keys.refresh(first)
        service.answer = None
        assert await keys.get() not in (first, "")
        assert len(service.requests) == 3

    async def test_developer_token_refused(
        self, account: ServiceAccount, http: httpx.AsyncClient, service: KeyService
    ) -> None:
        def refuse(request: httpx.Request) -> httpx.Response:
            token = request.headers["Authorization"].removeprefix("Bearer ")
            body = {"error": "INVALID_TOKEN", "error_description": f"bad token {token}"}
            return httpx.Response(401, json=body)

        service.answer = refuse
        with pytest.raises(KeyRefused) as caught:
            await make_keys(account, http, None).get()
        error = caught.value
        assert (error.status, error.code) == (401, "INVALID_TOKEN")
        assert "GET /v1/api_key answered HTTP 401 INVALID_TOKEN" in str(error)
        assert "check the credentials file" in str(error)
        assert "eyJ" not in str(error)  # the echoed token is masked

    async def test_service_failure(
        self, account: ServiceAccount, http: httpx.AsyncClient, service: KeyService
    ) -> None:
        service.answer = lambda request: httpx.Response(502, text="<html>proxy</html>")
        with pytest.raises(ServiceFailed, match="HTTP 502 Bad Gateway") as caught:
            await make_keys(account, http, None).get()
        assert caught.value.status == 502
        assert caught.value.code == ""

    async def test_answer_without_a_key(
        self, account: ServiceAccount, http: httpx.AsyncClient, service: KeyService
    ) -> None:
        service.answer = lambda request: httpx.Response(200, json={"key": "elsewhere"})
        with pytest.raises(ServiceFailed, match="without an apiKey"):
            await make_keys(account, http, None).get()

    async def test_unreachable(self, account: ServiceAccount) -> None:
        def refuse(request: httpx.Request) -> httpx.Response:
            raise httpx.ConnectError("[Errno 111] Connection refused", request=request)

        async with httpx.AsyncClient(transport=httpx.MockTransport(refuse)) as http:
            with pytest.raises(ServiceUnreachable, match="Connection refused") as caught:
                await make_keys(account, http, None).get()
        assert caught.value.__cause__ is None

    async def test_no_token_is_signed_with_a_wrong_clock(
        self, account: ServiceAccount, http: httpx.AsyncClient, service: KeyService
    ) -> None:
        keys = make_keys(account, http, None, Clock(datetime(1970, 1, 1, 0, 1, tzinfo=UTC)))
        with pytest.raises(ClockNotSynchronised):
            await keys.get()
        assert service.requests == []

    async def test_keys_never_reach_the_log(
        self,
        account: ServiceAccount,
        http: httpx.AsyncClient,
        service: KeyService,
        tmp_path: Path,
        caplog: pytest.LogCaptureFixture,
    ) -> None:
        caplog.set_level(logging.DEBUG)
        cache = tmp_path / KEY_CACHE_NAME
        keys = make_keys(account, http, cache)
        first = await keys.get()
        second = await keys.refresh(first)
        await make_keys(account, http, cache).get()  # a restart reads the cache
        assert "API key" in caplog.text
        for key in (first, second):
            assert key not in caplog.text
        assert "eyJ" not in caplog.text  # nor a developer token


class TestFromSettings:
    async def test_fixed_key(self, tmp_path: Path) -> None:
        settings = settings_from_dict(
            {
                "service": {"display_url": DISPLAY_URL, "api_key": "fixed-key-123"},
                "place": {"id": "P"},
            },
            environ={},
        )
        async with httpx.AsyncClient() as http:
            keys = api_keys_from_settings(settings, http)
        assert isinstance(keys, FixedApiKey)
        assert await keys.get() == "fixed-key-123"

    async def test_service_account(
        self, tmp_path: Path, service_account_file: Path, service: KeyService
    ) -> None:
        settings = settings_from_dict(
            {
                "service": {
                    "display_url": DISPLAY_URL,
                    "credentials": str(service_account_file),
                    "company": COMPANY,
                },
                "place": {"id": "P1"},
                "state": {"directory": str(tmp_path / "state")},
            },
            environ={},
        )
        async with httpx.AsyncClient(transport=httpx.MockTransport(service)) as http:
            keys = api_keys_from_settings(settings, http)
            assert isinstance(keys, ServiceApiKeys)
            await keys.get()
        assert (tmp_path / "state" / KEY_CACHE_NAME).is_file()

    def test_bad_credentials_fail_at_once(self, tmp_path: Path) -> None:
        settings = settings_from_dict(
            {
                "service": {
                    "display_url": DISPLAY_URL,
                    "credentials": str(tmp_path / "absent.json"),
                    "company": COMPANY,
                },
                "place": {"id": "P1"},
            },
            environ={},
        )
        with pytest.raises(CredentialsError, match=r"absent\.json"):
            api_keys_from_settings(settings, httpx.AsyncClient())


# --- the key parsed when a token is signed, and signed apart -----------------------------------


def pem_of(
    key: rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey, fmt: str, password: bytes = b""
) -> str:
    encryption = (
        serialization.BestAvailableEncryption(password)
        if password
        else serialization.NoEncryption()
    )
    formats = {
        "pkcs8": serialization.PrivateFormat.PKCS8,
        "traditional": serialization.PrivateFormat.TraditionalOpenSSL,
    }
    return key.private_bytes(serialization.Encoding.PEM, formats[fmt], encryption).decode()


def truncated_pem(rsa_pem: str) -> str:
    """A PKCS#8 RSA key cut short: the right shape (a DER sequence naming RSA), not a key."""
    body = "".join(rsa_pem.splitlines()[1:-1])
    cut = base64.b64encode(base64.b64decode(body)[:-200]).decode()
    return f"-----BEGIN PRIVATE KEY-----\n{cut}\n-----END PRIVATE KEY-----\n"


def write_account(path: Path, pem: str) -> Path:
    path.write_text(json.dumps({"private_key": pem, "client_email": "a@b.test"}), encoding="utf-8")
    path.chmod(0o600)
    return path


class TestKeyParsedWhenNeeded:
    def test_a_good_file_is_read_without_loading_cryptography(
        self, service_account_file: Path
    ) -> None:
        # A fresh interpreter: this one has cryptography loaded already.
        script = (
            "import sys\n"
            "from lobby_display.auth import load_service_account\n"
            f"account = load_service_account({str(service_account_file)!r}, parse_key=False)\n"
            "assert 'cryptography' not in sys.modules and 'jwt' not in sys.modules\n"
            "assert account.private_key.key_size == 2048\n"
        )
        subprocess.run([sys.executable, "-c", script], check=True, timeout=60)

    @pytest.mark.parametrize(
        ("case", "match"),
        [
            ("encrypted pkcs8", "is encrypted"),
            ("encrypted traditional", "is encrypted"),
            ("ec pkcs8", "not an RSA key"),
            ("ec traditional", "not an RSA key"),
            ("no pem block", "not a valid PEM private key"),
            ("not base64", "not a valid PEM private key"),
            ("base64 of text", "not a valid PEM private key"),
        ],
    )
    def test_a_key_of_the_wrong_shape_fails_at_once_as_when_parsed(
        self, tmp_path: Path, rsa_key: rsa.RSAPrivateKey, case: str, match: str
    ) -> None:
        ec_key = ec.generate_private_key(ec.SECP256R1())
        pems: dict[str, Callable[[], str]] = {
            "encrypted pkcs8": lambda: pem_of(rsa_key, "pkcs8", b"passphrase"),
            "encrypted traditional": lambda: pem_of(rsa_key, "traditional", b"passphrase"),
            "ec pkcs8": lambda: pem_of(ec_key, "pkcs8"),
            "ec traditional": lambda: pem_of(ec_key, "traditional"),
            "no pem block": lambda: "TOPSECRET",
            "not base64": lambda: (
                "-----BEGIN PRIVATE KEY-----\nnot a key\n-----END PRIVATE KEY-----"
            ),
            "base64 of text": lambda: (
                "-----BEGIN RSA PRIVATE KEY-----\nVE9QU0VDUkVUIEJZVEVT\n"
                "-----END RSA PRIVATE KEY-----"
            ),
        }
        pem = pems[case]()
        path = write_account(tmp_path / "sa.json", pem)
        for parse_key in (True, False):
            with pytest.raises(CredentialsError, match=match) as caught:
                load_service_account(path, parse_key=parse_key)
            assert str(path) in str(caught.value)
            assert "TOPSECRET" not in str(caught.value)

    async def test_a_key_that_does_not_parse_is_refused_then_read_again_once_fixed(
        self,
        tmp_path: Path,
        rsa_pem: str,
        http: httpx.AsyncClient,
        service: KeyService,
    ) -> None:
        path = write_account(tmp_path / "sa.json", truncated_pem(rsa_pem))
        keys = make_keys(load_service_account(path, parse_key=False), http, None)
        with pytest.raises(KeyRefused, match="not a valid PEM private key") as caught:
            await keys.get()
        assert str(path) in str(caught.value)
        assert service.requests == []  # nothing asked with a token that was never signed
        write_account(path, rsa_pem)  # the installer fixes the file
        assert await keys.get() == "issued-key-1-s3cr3t"

    async def test_a_cached_key_is_used_without_parsing_the_private_key(
        self, tmp_path: Path, rsa_pem: str, http: httpx.AsyncClient, service: KeyService
    ) -> None:
        cache = tmp_path / KEY_CACHE_NAME
        good = load_service_account(write_account(tmp_path / "good.json", rsa_pem))
        first = await make_keys(good, http, cache).get()
        broken = load_service_account(
            write_account(tmp_path / "sa.json", truncated_pem(rsa_pem)), parse_key=False
        )
        assert await make_keys(broken, http, cache).get() == first  # a restart
        assert len(service.requests) == 1


class TestSignedApart:
    async def test_the_token_verifies_with_the_claims_signed_here(
        self, account: ServiceAccount, rsa_key: rsa.RSAPrivateKey
    ) -> None:
        token = await developer_token_apart(account, DISPLAY_URL, COMPANY, START)
        claims = signed_claims(token, rsa_key)
        assert claims == token_claims(account, DISPLAY_URL, COMPANY, START)
        assert token == developer_token(account, DISPLAY_URL, COMPANY, START)  # RS256: same

    async def test_a_key_that_does_not_parse_names_the_file(
        self, tmp_path: Path, rsa_pem: str
    ) -> None:
        path = write_account(tmp_path / "sa.json", truncated_pem(rsa_pem))
        account = load_service_account(path, parse_key=False)
        with pytest.raises(CredentialsError, match="not a valid PEM private key") as caught:
            await developer_token_apart(account, DISPLAY_URL, COMPANY, START)
        assert str(path) in str(caught.value)
        assert "BEGIN" not in str(caught.value)

    async def test_no_program_runs_before_the_clock_is_set(self, account: ServiceAccount) -> None:
        with pytest.raises(ClockNotSynchronised):
            await developer_token_apart(
                account, DISPLAY_URL, COMPANY, datetime(1970, 1, 1, tzinfo=UTC)
            )

    async def test_service_keys_sign_apart_when_asked(
        self,
        account: ServiceAccount,
        http: httpx.AsyncClient,
        service: KeyService,
        rsa_key: rsa.RSAPrivateKey,
    ) -> None:
        keys = ServiceApiKeys(
            account,
            display_url=DISPLAY_URL,
            company=COMPANY,
            http=http,
            cache_file=None,
            refresh_after=timedelta(hours=20),
            sign_apart=True,
        )
        assert await keys.get() == "issued-key-1-s3cr3t"
        token = service.requests[0].headers["Authorization"].split(" ", 1)[1]
        claims = jwt.decode(token, rsa_key.public_key(), algorithms=["RS256"], audience=DISPLAY_URL)
        assert claims["sub"] == COMPANY

    def test_the_program_quotes_nothing_it_was_given(self) -> None:
        secret = "-----BEGIN PRIVATE KEY-----\nU0VDUkVUU0VDUkVU\n-----END PRIVATE KEY-----"
        for request in (json.dumps({"pem": secret, "claims": {}}), secret):
            done = subprocess.run(
                [sys.executable, "-m", "lobby_display.signing"],
                input=request,
                capture_output=True,
                text=True,
                timeout=60,
            )
            assert done.returncode in (signing.KEY_PROBLEM, 2)
            assert done.stdout == ""
            assert "U0VDUkVU" not in done.stderr
        assert signing.KEY_PROBLEM == KEY_PROBLEM_STATUS
