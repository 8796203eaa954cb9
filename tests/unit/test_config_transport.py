"""`http://` carries the API key and a replayable developer token in clear: the service's address
is refused in plain HTTP unless it is this machine (127.0.0.0/8, ::1, localhost), with a message
that names the key and the fix, beside every other problem of the file, and exit status 2."""

from __future__ import annotations

from pathlib import Path

import pytest

from lobby_display.cli import EXIT_BAD_CONFIG, main
from lobby_display.config import ConfigError, settings_from_dict


def settings(url: str, **service: object) -> object:
    return settings_from_dict(
        {"service": {"display_url": url, "api_key": "k" * 20, **service}, "place": {"id": "P1"}},
        environ={},
    )


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:8765",
        "http://127.45.6.7",
        "http://[::1]:8080",
        "http://localhost:9000",
        "http://LOCALHOST",
        "https://display.example.net",
        "https://10.0.0.5",
    ],
)
def test_https_anywhere_and_http_to_this_machine_are_accepted(url: str) -> None:
    settings(url)


@pytest.mark.parametrize(
    "url",
    [
        "http://display.example.net",
        "http://10.0.0.5:8765",
        "http://192.168.1.20",
        "http://[::2]",
        "http://localhost.example.net",
        "http://128.0.0.1",
    ],
)
def test_http_elsewhere_is_refused_naming_the_key_and_the_fix(url: str) -> None:
    with pytest.raises(ConfigError) as caught:
        settings(url)
    (problem,) = caught.value.problems
    assert problem.startswith("service.display_url: http:// to ")
    assert "in clear" in problem and "use https://" in problem


def test_it_is_reported_with_every_other_problem_at_once() -> None:
    with pytest.raises(ConfigError) as caught:
        settings("http://display.example.net", read_timeout=-1)
    keys = sorted(problem.split(":", 1)[0] for problem in caught.value.problems)
    assert keys == ["service.display_url", "service.read_timeout"]


@pytest.mark.parametrize("command", ["run", "check", "discover", "screenshot"])
def test_every_command_stops_with_exit_2_and_never_shows_the_key(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "config.toml"
    config.write_text(
        '[service]\ndisplay_url = "http://display.example.net"\n'
        'api_key = "secret-key-0123456789"\n[place]\nid = "P1"\n'
    )
    config.chmod(0o600)
    extra = ["--output", str(tmp_path / "x.svg")] if command == "screenshot" else []
    assert main([command, "--config", str(config), *extra]) == EXIT_BAD_CONFIG
    err = capsys.readouterr().err
    assert "service.display_url: http:// to display.example.net" in err
    assert "https://display.example.net" in err
    assert "secret-key-0123456789" not in err


def test_an_environment_override_is_held_to_the_same_rule() -> None:
    with pytest.raises(ConfigError) as caught:
        settings_from_dict(
            {
                "service": {"display_url": "https://display.example.net", "api_key": "k" * 20},
                "place": {"id": "P1"},
            },
            environ={"LOBBY_DISPLAY_SERVICE__DISPLAY_URL": "http://display.example.net"},
        )
    assert "service.display_url: http:// to display.example.net" in str(caught.value)
