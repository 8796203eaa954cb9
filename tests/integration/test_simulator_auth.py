"""The simulator's authentication over HTTP: developer tokens for `/api_key`, API keys for the
rest (missing, unknown, rotated within and past the grace period, revoked)."""

from __future__ import annotations

import time

import httpx
import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa

from lobby_display.models import ServiceError
from lobby_display.simulator import ServiceAccount, SimulatorServer


def ask_key(sim: SimulatorServer, token: str | None) -> httpx.Response:
    headers = {} if token is None else {"Authorization": f"Bearer {token}"}
    return httpx.get(f"{sim.url}/v1/api_key", headers=headers, timeout=5)


def token(account: ServiceAccount, **changes: object) -> str:
    now = int(time.time())
    claims: dict[str, object] = {
        "iat": now - 30,
        "exp": now + 300,
        "aud": changes.pop("aud"),
        "iss": account.client_email,
        "email": account.client_email,
        "sub": account.company,
    }
    claims.update(changes)
    claims = {name: value for name, value in claims.items() if value is not None}
    return jwt.encode(claims, account.private_key, algorithm="RS256")


def refused(response: httpx.Response, code: str) -> None:
    assert response.status_code == 401, response.text
    body = ServiceError.model_validate(response.json())
    assert body.error == code
    assert body.error_description and body.error_uri
    assert set(response.json()) == {"error", "error_description", "error_uri"}


def test_a_valid_developer_token_gets_an_api_key_that_opens_the_routes(
    simulator: SimulatorServer,
) -> None:
    answer = ask_key(simulator, simulator.account.sign(simulator.url))
    assert answer.status_code == 200
    key = answer.json()["apiKey"]
    assert isinstance(key, str) and len(key) >= 20
    places = httpx.get(f"{simulator.url}/v1/places", params={"key": key}, timeout=5)
    assert places.status_code == 200 and simulator.place_id in places.json()


def test_missing_developer_token(simulator: SimulatorServer) -> None:
    refused(ask_key(simulator, None), "MISSING_DEVELOPER_TOKEN")
    basic = httpx.get(
        f"{simulator.url}/v1/api_key", headers={"Authorization": "Basic abc"}, timeout=5
    )
    refused(basic, "MISSING_DEVELOPER_TOKEN")


def test_token_signed_with_another_key(simulator: SimulatorServer) -> None:
    stranger = ServiceAccount(
        rsa.generate_private_key(public_exponent=65537, key_size=2048),
        simulator.account.client_email,
        simulator.company,
    )
    refused(ask_key(simulator, stranger.sign(simulator.url)), "INVALID_SIGNATURE")


def test_token_for_another_audience(simulator: SimulatorServer) -> None:
    account = simulator.account
    refused(
        ask_key(simulator, token(account, aud="https://display.example.net")), "INVALID_AUDIENCE"
    )
    refused(ask_key(simulator, token(account, aud=f"{simulator.url}/v1")), "INVALID_AUDIENCE")


def test_expired_token(simulator: SimulatorServer) -> None:
    now = int(time.time())
    expired = token(simulator.account, aud=simulator.url, iat=now - 4000, exp=now - 400)
    refused(ask_key(simulator, expired), "EXPIRED_DEVELOPER_TOKEN")


@pytest.mark.parametrize(
    ("claim", "value", "code"),
    [
        ("iat", None, "INVALID_DEVELOPER_TOKEN"),
        ("exp", None, "INVALID_DEVELOPER_TOKEN"),
        ("iat", int(time.time()) + 3600, "INVALID_DEVELOPER_TOKEN"),
        ("sub", "Another Company", "UNKNOWN_COMPANY"),
        ("iss", "someone@else.test", "UNKNOWN_ISSUER"),
    ],
    # Not the values: a time in an id makes each pytest worker collect other tests.
    ids=["no-iat", "no-exp", "iat-in-an-hour", "another-company", "another-issuer"],
)
def test_token_with_a_wrong_or_missing_claim(
    simulator: SimulatorServer, claim: str, value: object, code: str
) -> None:
    changes: dict[str, object] = {"aud": simulator.url, claim: value}
    if claim == "iat" and value is not None:
        changes["exp"] = int(value) + 300  # type: ignore[call-overload]
    refused(ask_key(simulator, token(simulator.account, **changes)), code)


def test_garbage_instead_of_a_token(simulator: SimulatorServer) -> None:
    refused(ask_key(simulator, "not.a.jwt"), "INVALID_DEVELOPER_TOKEN")


@pytest.mark.parametrize(
    "route",
    ["/v1/places", "/v1/queues/tickets/currents", "/v1/counters?countersId=x"],
)
def test_routes_refuse_a_missing_or_unknown_key(simulator: SimulatorServer, route: str) -> None:
    refused(httpx.get(f"{simulator.url}{route}", timeout=5), "MISSING_API_KEY")
    joiner = "&" if "?" in route else "?"
    unknown = httpx.get(f"{simulator.url}{route}{joiner}key=nope", timeout=5)
    refused(unknown, "INVALID_API_KEY")


def test_feeds_refuse_a_bad_key_before_streaming(simulator: SimulatorServer) -> None:
    for route in ("/v1/queues/tickets/currents/sse", "/v1/queues/state/sse"):
        answer = httpx.get(f"{simulator.url}{route}", params={"key": "nope"}, timeout=5)
        refused(answer, "INVALID_API_KEY")
        assert answer.headers["content-type"].startswith("application/json")


def test_a_rotated_key_works_during_the_grace_period_then_not(
    simulator: SimulatorServer, sim_key: str
) -> None:
    url = f"{simulator.url}/v1/places"
    # The keys' clock is ours: the grace period ends when the test says, not the machine.
    now = [1000.0]
    simulator.call(lambda sim: setattr(sim.keys, "clock", lambda: now[0]))
    assert simulator.rotate_keys(grace=60) >= 1
    now[0] += 59
    assert httpx.get(url, params={"key": sim_key}, timeout=5).status_code == 200
    fresh = ask_key(simulator, simulator.account.sign(simulator.url)).json()["apiKey"]
    now[0] += 2
    refused(httpx.get(url, params={"key": sim_key}, timeout=5), "EXPIRED_API_KEY")
    assert httpx.get(url, params={"key": fresh}, timeout=5).status_code == 200


def test_a_revoked_key_is_refused_at_once(simulator: SimulatorServer, sim_key: str) -> None:
    url = f"{simulator.url}/v1/places"
    assert httpx.get(url, params={"key": sim_key}, timeout=5).status_code == 200
    simulator.revoke_keys()
    refused(httpx.get(url, params={"key": sim_key}, timeout=5), "INVALID_API_KEY")


def test_keys_are_rotated_and_revoked_over_the_admin_route(
    simulator: SimulatorServer, sim_key: str
) -> None:
    answer = httpx.post(f"{simulator.url}/_sim/faults/revoke-keys", timeout=5)
    assert answer.status_code == 200 and answer.json()["result"]["revoked"] >= 1
    refused(
        httpx.get(f"{simulator.url}/v1/places", params={"key": sim_key}, timeout=5),
        "INVALID_API_KEY",
    )
