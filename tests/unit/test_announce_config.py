"""The `[sound]` section: defaults, quiet hours, and the mistakes an installer can make."""

from __future__ import annotations

from typing import Any

import pytest

from lobby_display.config import ConfigError, settings_from_dict

BASE: dict[str, Any] = {
    "service": {"display_url": "https://display.example.net", "api_key": "k"},
    "place": {"id": "P1"},
}


def with_sound(**sound: Any) -> dict[str, Any]:
    return {**BASE, "sound": sound}


def test_sound_is_off_unless_enabled() -> None:
    sound = settings_from_dict(BASE, environ={}).sound
    assert sound.enabled is False
    assert sound.mode == "both"
    assert sound.voice_locales == []
    assert sound.quiet_window() is None


def test_quiet_hours_are_normalised_and_may_cross_midnight() -> None:
    sound = settings_from_dict(with_sound(quiet_hours=" 22:00 - 7:30 "), environ={}).sound
    assert sound.quiet_hours == "22:00-07:30"
    assert sound.quiet_window() == (22 * 60, 7 * 60 + 30)


def test_quiet_hours_until_midnight_may_be_written_24_00() -> None:
    sound = settings_from_dict(with_sound(quiet_hours="20:00-24:00"), environ={}).sound
    assert sound.quiet_window() == (20 * 60, 0)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("22h-7h", "write it as HH:MM-HH:MM"),
        ("22:00", "write it as HH:MM-HH:MM"),
        ("25:00-07:00", "write it as HH:MM-HH:MM"),
        ("22:61-07:00", "write it as HH:MM-HH:MM"),
        ("08:00-08:00", "same time"),
    ],
)
def test_a_bad_quiet_hours_value_names_the_key_and_the_format(text: str, expected: str) -> None:
    with pytest.raises(ConfigError) as caught:
        settings_from_dict(with_sound(quiet_hours=text), "screen.toml", environ={})
    (problem,) = caught.value.problems
    assert problem.startswith("sound.quiet_hours: ")
    assert expected in problem


def test_unknown_mode_and_locale_are_reported_together() -> None:
    with pytest.raises(ConfigError) as caught:
        settings_from_dict(
            with_sound(mode="loud", voice_locales=["fr_FR", "xx_XX"], volume=150),
            environ={},
        )
    problems = "\n".join(caught.value.problems)
    assert "sound.mode" in problems
    assert "sound.voice_locales.1" in problems
    assert "sound.volume" in problems


def test_voice_locales_and_switches_come_from_the_environment() -> None:
    sound = settings_from_dict(
        BASE,
        environ={
            "LOBBY_DISPLAY_SOUND__ENABLED": "true",
            "LOBBY_DISPLAY_SOUND__VOICE_LOCALES": "fr_FR, en_US",
            "LOBBY_DISPLAY_SOUND__MODE": "chime",
        },
    ).sound
    assert sound.enabled is True
    assert sound.mode == "chime"
    assert sound.voice_locales == ["fr_FR", "en_US"]


def test_a_player_command_with_unbalanced_quotes_is_refused() -> None:
    with pytest.raises(ConfigError) as caught:
        settings_from_dict(with_sound(player="aplay -D 'plughw:1"), environ={})
    assert caught.value.problems[0].startswith("sound.player: cannot read the command")
