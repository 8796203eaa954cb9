"""The process's reload (SIGHUP): the config file read again, a bad one never replacing working
settings, the changed keys named without their values."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from lobby_display.config import Settings, settings_from_dict
from lobby_display.process import changed_keys, reload_config

API_KEY = "k3y-VERY-secret-0123456789"


def _settings(tmp_path: Path) -> Settings:
    return settings_from_dict(
        {
            "service": {"display_url": "https://display.example.net", "api_key": API_KEY},
            "place": {"id": "P1"},
            "state": {"directory": str(tmp_path / "state")},
        },
        environ={},
    )


# --------------------------------------------------------------------------------------------
# Reload (SIGHUP)

GOOD = """
[service]
display_url = "https://display.example.net"
api_key = "{key}"
[place]
id = "P1"
[display]
locales = [{locales}]
"""


def _write(path: Path, locales: str = '"fr_FR", "en_US"', key: str = API_KEY) -> Path:
    path.write_text(GOOD.format(locales=locales, key=key), encoding="utf-8")
    path.chmod(0o600)  # as a file holding service.api_key must be
    return path


def test_reload_with_a_good_config_returns_the_new_settings(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = _write(tmp_path / "hall.toml")
    current = reload_config(path, _settings(tmp_path), environ={})[0]
    _write(path, '"de_DE"')
    with caplog.at_level(logging.INFO, logger="lobby_display.process"):
        fresh, error = reload_config(None, current, environ={})
    assert error is None
    assert fresh.display.locales == ["de_DE"]
    assert "display.locales" in caplog.text


def test_reload_with_a_bad_config_keeps_the_running_settings(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = _write(tmp_path / "hall.toml")
    current, _ = reload_config(path, _settings(tmp_path), environ={})
    path.write_text(path.read_text().replace('"fr_FR", "en_US"', '"xx_XX"') + "\nclok = 1\n")
    with caplog.at_level(logging.WARNING, logger="lobby_display.process"):
        kept, error = reload_config(path, current, environ={})
    assert kept is current
    assert error is not None
    assert "display.locales" in error
    assert "clok" in error
    assert "keeping the running configuration" in caplog.text
    assert "display.locales" in caplog.text


def test_reload_of_a_missing_file_keeps_the_running_settings(tmp_path: Path) -> None:
    current = _settings(tmp_path)
    kept, error = reload_config(tmp_path / "gone.toml", current, environ={})
    assert kept is current
    assert error is not None and "file not found" in error


def test_changed_keys_names_a_new_api_key_without_showing_it(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = _write(tmp_path / "hall.toml")
    current, _ = reload_config(path, _settings(tmp_path), environ={})
    _write(path, key="another-secret-key-987654")
    with caplog.at_level(logging.INFO, logger="lobby_display.process"):
        fresh, _ = reload_config(path, current, environ={})
    assert changed_keys(current, fresh) == ["service.api_key"]
    assert "another-secret-key-987654" not in caplog.text
    assert API_KEY not in caplog.text
