"""The simulator's side of authentication: its key pair, developer-token checks, API keys.

A developer token signed with the key it handed out, with the right claims, is traded for an API
key; keys can be rotated (old ones kept for a grace period) or revoked.
"""

from __future__ import annotations

import json
import os
import secrets
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

#: Seconds of clock difference tolerated on `exp` and `iat`.
LEEWAY_SECONDS: Final = 60
#: How long a rotated key stays valid by default (the service says 24 hours).
DEFAULT_GRACE_SECONDS: Final = 24 * 3600.0
#: Service-account e-mail of the simulator's account.
ACCOUNT_EMAIL: Final = "display-screens@saint-aubin.simulator.invalid"


class AuthError(Exception):
    """A refused credential; `code` and `description` go into the 401 error body."""

    def __init__(self, code: str, description: str) -> None:
        super().__init__(description)
        self.code = code
        self.description = description


@dataclass(frozen=True, slots=True)
class ServiceAccount:
    """The account the simulator trusts: an RSA key pair, an e-mail and a company name."""

    private_key: rsa.RSAPrivateKey
    client_email: str
    company: str

    @classmethod
    def generate(cls, company: str, client_email: str = ACCOUNT_EMAIL) -> ServiceAccount:
        """A fresh account with a new 2048-bit key pair."""
        key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        return cls(key, client_email, company)

    def private_pem(self) -> str:
        """The private key as unencrypted PKCS#8 PEM (what a service-account file holds)."""
        return self.private_key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        ).decode("ascii")

    def as_json(self) -> dict[str, str]:
        """The service-account file's content."""
        return {
            "type": "service_account",
            "client_email": self.client_email,
            "private_key": self.private_pem(),
            "company": self.company,
        }

    def write(self, path: Path) -> Path:
        """Write the service-account file at `path`, readable by its owner only (0600)."""
        path.parent.mkdir(parents=True, exist_ok=True)
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
            os.fchmod(handle.fileno(), 0o600)
            json.dump(self.as_json(), handle, indent=2)
            handle.write("\n")
        return path

    def sign(self, audience: str, lifetime: float = 300, now: float | None = None) -> str:
        """A developer token for `audience`, as a well-behaved client signs it (for tests)."""
        issued = int(time.time() if now is None else now) - 30
        claims = {
            "iat": issued,
            "exp": issued + int(lifetime),
            "aud": audience,
            "iss": self.client_email,
            "email": self.client_email,
            "sub": self.company,
        }
        return jwt.encode(claims, self.private_key, algorithm="RS256")


def verify_developer_token(
    authorization: str | None,
    account: ServiceAccount,
    audiences: Iterable[str],
    now: float | None = None,
) -> dict[str, Any]:
    """Check the `Authorization` header of `/api_key`; return the token's claims.

    Raises AuthError saying what is wrong: no token, a bad signature, a wrong audience, an
    expired token, an `iat` in the future, a wrong company or issuer.
    """
    if not authorization:
        raise AuthError("MISSING_DEVELOPER_TOKEN", "the Authorization header is missing")
    scheme, _, token = authorization.strip().partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise AuthError("MISSING_DEVELOPER_TOKEN", "expected Authorization: Bearer <token>")
    wanted = sorted({audience.rstrip("/") for audience in audiences})
    moment = time.time() if now is None else now
    try:
        claims: dict[str, Any] = jwt.decode(
            token.strip(),
            account.private_key.public_key(),
            algorithms=["RS256"],
            audience=wanted,
            leeway=LEEWAY_SECONDS,
            options={"require": ["exp", "iat", "aud"], "verify_iat": False},
        )
    except jwt.ExpiredSignatureError:
        raise AuthError("EXPIRED_DEVELOPER_TOKEN", "the developer token has expired") from None
    except jwt.InvalidAudienceError:
        raise AuthError(
            "INVALID_AUDIENCE", f"the token's aud must be this service's base address: {wanted[0]}"
        ) from None
    except jwt.MissingRequiredClaimError as error:
        raise AuthError(
            "INVALID_DEVELOPER_TOKEN", f"the token lacks the {error.claim} claim"
        ) from None
    except jwt.InvalidSignatureError:
        raise AuthError(
            "INVALID_SIGNATURE", "the token is not signed by this service account's key"
        ) from None
    except jwt.InvalidTokenError as error:
        raise AuthError("INVALID_DEVELOPER_TOKEN", f"unreadable developer token: {error}") from None
    issued = claims.get("iat")
    if not isinstance(issued, int | float) or issued > moment + LEEWAY_SECONDS:
        raise AuthError("INVALID_DEVELOPER_TOKEN", "the token's iat is in the future")
    if claims.get("sub") != account.company:
        raise AuthError("UNKNOWN_COMPANY", "the token's sub must be the company name")
    if claims.get("iss") != account.client_email:
        raise AuthError("UNKNOWN_ISSUER", "the token's iss must be the service account's e-mail")
    return claims


@dataclass(slots=True)
class ApiKeys:
    """API keys handed out, with rotation (grace period) and revocation."""

    clock: Callable[[], float] = time.monotonic
    grace: float = DEFAULT_GRACE_SECONDS
    _active: set[str] = field(default_factory=set)
    _retiring: dict[str, float] = field(default_factory=dict)
    issued: int = 0

    def issue(self) -> str:
        """A new key, valid until rotated (plus grace) or revoked."""
        key = secrets.token_urlsafe(24)
        self._active.add(key)
        self.issued += 1
        return key

    def add(self, key: str) -> None:
        """Accept a key chosen by the caller (a fixed `api_key` in a test config)."""
        self._active.add(key)

    def check(self, key: str | None) -> None:
        """Raise AuthError unless `key` is a valid key."""
        if not key:
            raise AuthError("MISSING_API_KEY", "the query parameter key is required")
        if key in self._active:
            return
        deadline = self._retiring.get(key)
        if deadline is not None and self.clock() < deadline:
            return
        if deadline is not None:
            raise AuthError("EXPIRED_API_KEY", "this API key was rotated and its grace is over")
        raise AuthError("INVALID_API_KEY", "unknown or revoked API key")

    def rotate(self, grace: float | None = None) -> int:
        """Retire every active key: each stays valid for `grace` seconds more. Returns how many."""
        deadline = self.clock() + (self.grace if grace is None else grace)
        count = len(self._active)
        for key in self._active:
            self._retiring[key] = deadline
        self._active.clear()
        return count

    def revoke(self) -> int:
        """Refuse every key handed out so far, at once. Returns how many."""
        count = len(self._active) + len(self._retiring)
        self._active.clear()
        self._retiring.clear()
        return count

    @property
    def active(self) -> int:
        """Number of keys currently accepted (rotated keys within their grace included)."""
        now = self.clock()
        return len(self._active) + sum(1 for deadline in self._retiring.values() if now < deadline)
