"""Shared fixtures: small and generic (a service account; nothing about any one module)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from lobby_display import redaction


@pytest.fixture(autouse=True)
def _no_secrets_from_other_tests() -> Iterator[None]:
    """Every test starts with no registered secret, whatever ran before it (in any order):
    `redaction.register_secret` keeps them for the process's life, as a display does."""
    saved = set(redaction._known)
    redaction._known.clear()
    yield
    redaction._known.clear()
    redaction._known.update(saved)


@pytest.fixture(scope="session")
def rsa_key() -> rsa.RSAPrivateKey:
    """An RSA private key (2048 bits, made once per session: key generation is slow)."""
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


@pytest.fixture(scope="session")
def rsa_pem(rsa_key: rsa.RSAPrivateKey) -> str:
    """`rsa_key` as unencrypted PKCS#8 PEM, as a service-account file holds it."""
    return rsa_key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ).decode("ascii")


@pytest.fixture
def service_account_file(tmp_path: Path, rsa_pem: str) -> Path:
    """A service-account JSON file (mode 0600) with `rsa_pem` and a client e-mail address."""
    path = tmp_path / "service-account.json"
    path.write_text(
        json.dumps(
            {
                "type": "service_account",
                "client_email": "screen@example-company.test",
                "private_key": rsa_pem,
            }
        ),
        encoding="utf-8",
    )
    path.chmod(0o600)
    return path
