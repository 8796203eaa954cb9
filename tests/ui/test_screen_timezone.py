"""The clock's time zone, in the documented order (config.example.toml, `display.timezone`):
the configured zone, else the place's (from the service), else the machine's (`$TZ`,
/etc/timezone, /etc/localtime). Every other test uses one zone; these use four, each giving
the fixed moment (13:05 UTC) a different time on the screen."""

from __future__ import annotations

import dataclasses

import pytest

from lobby_display.app import LobbyApp
from lobby_display.updates import ReferenceData
from tests.helpers.boards import Clock, FakeSource, make_settings, reference, screen_text, wait_for

#: 13:05 UTC on 24 November 2026, as each zone's clock reads it.
TIMES = {
    "Asia/Tokyo": "22:05",
    "America/New_York": "08:05",
    "Europe/Paris": "14:05",
    "Asia/Kolkata": "18:35",  # the machine's, below
}


@pytest.fixture(autouse=True)
def _machine_in_kolkata(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TZ", "Asia/Kolkata")


def place_in(zone: str) -> ReferenceData:
    """The reference data of a place whose time zone is `zone` ("": the service gives none)."""
    data = reference()
    assert data.place is not None
    return dataclasses.replace(data, place=data.place.model_copy(update={"timezone": zone}))


def shown_times(text: str) -> set[str]:
    return {zone for zone, time in TIMES.items() if time in text}


async def test_the_configured_zone_wins_over_the_place_and_the_machine() -> None:
    source = FakeSource()
    app = LobbyApp(make_settings(timezone="Asia/Tokyo"), source, clock=Clock())
    async with app.run_test(size=(120, 34)) as pilot:
        await wait_for(pilot, lambda: "Asia/Tokyo" in shown_times(screen_text(app)))
        source.push(place_in("America/New_York"))
        await wait_for(pilot, lambda: "Civil registry" in screen_text(app))
        assert shown_times(screen_text(app)) == {"Asia/Tokyo"}, screen_text(app)


async def test_without_one_the_place_zone_once_known_else_the_machines() -> None:
    source = FakeSource()
    app = LobbyApp(make_settings(timezone=""), source, clock=Clock())
    async with app.run_test(size=(120, 34)) as pilot:
        # Before the service has said where the place is: the machine's zone.
        await wait_for(pilot, lambda: "Asia/Kolkata" in shown_times(screen_text(app)))
        assert shown_times(screen_text(app)) == {"Asia/Kolkata"}, screen_text(app)
        source.push(place_in("America/New_York"))
        await wait_for(pilot, lambda: "America/New_York" in shown_times(screen_text(app)))
        assert shown_times(screen_text(app)) == {"America/New_York"}, screen_text(app)


async def test_a_place_without_a_zone_leaves_the_machines() -> None:
    source = FakeSource()
    app = LobbyApp(make_settings(timezone=""), source, clock=Clock())
    async with app.run_test(size=(120, 34)) as pilot:
        source.push(place_in(""))
        await wait_for(pilot, lambda: "Civil registry" in screen_text(app))
        assert shown_times(screen_text(app)) == {"Asia/Kolkata"}, screen_text(app)
