"""The screen's source of updates: the place's three feeds, built from the settings.

The kiosk, the demo and the screenshot command run the screen on it.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from lobby_display.auth import CredentialsError
from lobby_display.backoff import Backoff
from lobby_display.client import DisplayClient
from lobby_display.config import ConfigError, Settings
from lobby_display.feeds import FeedObserver, Feeds, FeedTiming, load_reference
from lobby_display.updates import Feed, FeedHealth, FeedStatus, Update

if TYPE_CHECKING:
    from lobby_display.app import Source

log = logging.getLogger(__name__)

Emit = Callable[[Update], None]
ClientFactory = Callable[[Settings], DisplayClient]


def kiosk_client(settings: Settings) -> DisplayClient:
    """The kiosk's REST client: developer tokens signed apart, so cryptography never loads here."""
    return DisplayClient.from_settings(settings, sign_apart=True)


def feeds_source(
    settings: Settings,
    *,
    client_factory: ClientFactory = kiosk_client,
    see: Emit | None = None,
    known_ids: tuple[Sequence[str], Sequence[str]] = ((), ()),
    timing: FeedTiming | None = None,
    observer: FeedObserver | None = None,
) -> Source:
    """The app's source of updates: the place's three feeds, with their reference data.

    Credentials that cannot be read (a missing or unsafe key file) do not stop the screen: the
    feeds report "refused" with the reason, and the file is read again after the reconnect
    policy's delay (`lobby_display.backoff`: 1 s doubling to 30 s, jittered). `see`, when
    given, is shown every update too (the `screenshot` command watches for live feeds).
    `known_ids` are the queue and counter ids of the place at the last run (`saved_ids`): the
    streams open with them while the reference data loads. `timing`: the feeds' reconnection
    delays and limits (`FeedTiming()`'s by default; the reliability suite shortens them).
    `observer` sees every message and REST answer as it arrives (a recording, `recording.py`).
    """
    place_id = settings.place.id
    langs = list(settings.display.locales)

    async def source(emit: Emit) -> None:
        def both(update: Update) -> None:
            if see is not None:
                see(update)
            emit(update)

        backoff = Backoff()
        while True:
            try:
                client = client_factory(settings)
            except (CredentialsError, ConfigError) as problem:
                refused(both, f"credentials: {problem}")
                await asyncio.sleep(backoff.next_delay())
                continue
            backoff.reset()
            client.observer = observer
            async with client:
                feeds = Feeds(
                    client,
                    functools.partial(load_reference, client, place_id, langs),
                    both,
                    queue_ids=settings.place.queues,
                    counter_ids=settings.place.counters,
                    langs=langs,
                    refresh_every=settings.service.reference_refresh_minutes * 60,
                    known_ids=known_ids,
                    timing=timing,
                    observer=observer,
                )
                await feeds.run()

    return source


def refused(emit: Emit, error: str, feeds: Sequence[Feed] = tuple(Feed)) -> None:
    """Report every feed as refused, with `error` (already free of secrets) as the reason."""
    log.error("%s", error)
    now = datetime.now(UTC)
    for feed in feeds:
        emit(FeedHealth(feed=feed, status=FeedStatus.REFUSED, at=now, error=error))


__all__ = ["ClientFactory", "Emit", "feeds_source", "kiosk_client", "refused"]
