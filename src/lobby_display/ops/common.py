"""What the operations commands share: a client that leaves the display's key cache alone, quiet
logs, and the wording of service failures."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import httpx

from lobby_display.auth import (
    ApiKeys,
    CredentialsError,
    FixedApiKey,
    ServiceAccount,
    ServiceApiKeys,
    load_service_account,
)
from lobby_display.client import DisplayClient, make_http
from lobby_display.config import Settings


def config_name(settings: Settings) -> str:
    """The config file as the user named it, for messages ("the config" when not from a file)."""
    return str(settings.source) if settings.source is not None else "the config"


def keys_for(
    settings: Settings, http: httpx.AsyncClient, account: ServiceAccount | None = None
) -> ApiKeys:
    """The API keys the settings ask for, without the display's key cache.

    The commands must prove that the credentials still yield a key (a cached key would hide a
    revoked account), and must not leave a cache owned by whoever ran them (root, say) where
    the display keeps its own. Raises `CredentialsError` for a bad service-account file.
    """
    service = settings.service
    if service.api_key is not None:
        return FixedApiKey(service.api_key.get_secret_value())
    if account is None:
        account = load_account(settings)
    return ServiceApiKeys(
        account,
        display_url=service.display_url,
        company=service.company,
        http=http,
        cache_file=None,
        refresh_after=timedelta(hours=service.key_refresh_hours),
        deadline=service.request_timeout,
    )


def client_for(
    settings: Settings,
    *,
    account: ServiceAccount | None = None,
    read_timeout: float | None = None,
) -> DisplayClient:
    """A REST client for the commands (see `keys_for`); `read_timeout` shortens the wait for a
    silent service. Raises `CredentialsError` and, for a bad CA bundle, `ConfigError`."""
    if account is None and settings.service.api_key is None:
        account = load_account(settings)  # before any connection is opened: it may fail
    http = make_http(settings)
    if read_timeout is not None:
        connect = settings.service.connect_timeout
        http.timeout = httpx.Timeout(
            connect=connect, read=read_timeout, write=connect, pool=connect
        )
    keys = keys_for(settings, http, account)
    return DisplayClient(
        settings.service.display_url,
        keys,
        http,
        langs=settings.display.locales,
        deadline=settings.service.request_timeout,
    )


def load_account(settings: Settings) -> ServiceAccount:
    """The service account of `service.credentials` (honouring `$CREDENTIALS_DIRECTORY`)."""
    path = settings.credentials_path()
    if path is None:
        raise CredentialsError("neither service.credentials nor service.api_key is set")
    return load_service_account(path)


@contextlib.contextmanager
def quiet_logs() -> Iterator[None]:
    """Keep the program's log lines off the terminal while a command prints its own report."""
    logger = logging.getLogger("lobby_display")
    handler = logging.NullHandler()
    propagate = logger.propagate
    logger.addHandler(handler)
    logger.propagate = False
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.propagate = propagate


def is_under(path: Path, directory: str) -> bool:
    """True when `path` lies inside `directory`."""
    try:
        path.resolve().relative_to(Path(directory).resolve())
    except (ValueError, OSError):
        return False
    return True
