"""Shared fixtures: small and generic (a service account; nothing about any one module)."""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from lobby_display import redaction


@pytest.fixture(autouse=True)
def _logging_as_it_was() -> Iterator[None]:
    """Logging as it was before each test, whatever ran before it (in any order): a command run
    in-process sets up logging for the whole process (`service.setup_logging`: the root level, a
    handler of ours, httpx and others quietened, warnings captured)."""
    root = logging.getLogger()
    loggers = logging.Logger.manager.loggerDict
    levels = {
        name: item.level for name, item in loggers.items() if isinstance(item, logging.Logger)
    }
    root_level, root_handlers = root.level, set(root.handlers)
    capturing = getattr(logging, "_warnings_showwarning", None) is not None
    yield
    for name, item in list(loggers.items()):
        if isinstance(item, logging.Logger):
            item.setLevel(levels.get(name, logging.NOTSET))
    root.setLevel(root_level)
    for handler in list(root.handlers):
        # pytest's own capture handlers come and go with each phase: left alone.
        if handler not in root_handlers and not type(handler).__module__.startswith("_pytest"):
            root.removeHandler(handler)
            handler.close()
    logging.captureWarnings(capturing)


@pytest.fixture(autouse=True)
def _no_secrets_from_other_tests() -> Iterator[None]:
    """Every test starts with no registered secret, whatever ran before it (in any order):
    `redaction.register_secret` keeps them for the process's life, as a display does."""
    saved = set(redaction._known)
    redaction._known.clear()
    yield
    redaction._known.clear()
    redaction._known.update(saved)


#: Where X servers put their sockets (Xwayland, which cage and sway start).
X11_SOCKETS = Path("/tmp/.X11-unix")


@pytest.fixture(scope="session", autouse=True)
def _x11_sockets_as_on_a_booted_system() -> None:
    """/tmp/.X11-unix as a booted system has it (systemd-tmpfiles' x11.conf: root's, mode 1777).
    On a new machine without it, the first compositor to start Xwayland (the kiosk chain's, as
    its own user) made it that user's, and cage started later as `nobody` refused it ("not
    owned by root or us") and exited. Only root can set it so; others keep what is there."""
    if os.geteuid() != 0:
        return
    X11_SOCKETS.mkdir(mode=0o1777, exist_ok=True)
    os.chown(X11_SOCKETS, 0, 0)
    os.chmod(X11_SOCKETS, 0o1777)


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
