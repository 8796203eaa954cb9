"""Configuration: each class of mistake is reported with its key and its file."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from lobby_display.cli import EXIT_BAD_CONFIG, main
from lobby_display.config import ConfigError, Settings, load_config

GOOD = """\
[service]
display_url = "https://display.example.net/"
credentials = "/etc/lobby-display/service-account.json"
company = "Example Company"

[place]
id = "P1"
queues = ["Q1", "Q2"]

[display]
locales = ["fr_FR", "en_US"]
"""

EXAMPLE = Path(__file__).resolve().parents[2] / "config.example.toml"
#: A commented-out key of the example (`# queues = ["Q1", "Q2"]`).
COMMENTED_KEY = re.compile(r"^# (\w+ = .*)$", re.MULTILINE)


def write(tmp_path: Path, text: str, name: str = "config.toml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    path.chmod(0o600)  # as a file holding service.api_key must be
    return path


def problems(path: Path, environ: dict[str, str] | None = None) -> list[str]:
    """The problems `load_config` reports, checking each names the file."""
    with pytest.raises(ConfigError) as caught:
        load_config(path, environ={} if environ is None else environ)
    error = caught.value
    assert error.source == str(path)
    for line in str(error).splitlines()[1:]:
        assert line.strip().startswith(f"{path}: ")
    return error.problems


def one_problem(path: Path, environ: dict[str, str] | None = None) -> str:
    (problem,) = problems(path, environ)
    return problem


class TestGoodFiles:
    def test_a_good_file(self, tmp_path: Path) -> None:
        settings = load_config(write(tmp_path, GOOD), environ={})
        assert settings.service.display_url == "https://display.example.net"  # slash dropped
        assert settings.place.queues == ["Q1", "Q2"]
        assert settings.display.locales == ["fr_FR", "en_US"]
        assert settings.display.rotation_seconds == 12  # a default
        assert settings.source == tmp_path / "config.toml"

    def test_the_example_file_loads(self) -> None:
        settings = load_config(EXAMPLE, environ={})
        assert settings.service.company == "Example Company"
        assert settings.service.key_refresh_hours == 20

    def test_the_example_with_every_optional_key_uncommented(self, tmp_path: Path) -> None:
        text = COMMENTED_KEY.sub(r"\1", EXAMPLE.read_text(encoding="utf-8"))
        assert "\napi_key = " in text and "\nqueues = " in text
        settings = load_config(write(tmp_path, text), environ={})
        assert settings.place.queues == ["Q1", "Q2"]
        assert settings.display.timezone == "Europe/Paris"


class TestMistakes:
    def test_unknown_key_with_a_suggestion(self, tmp_path: Path) -> None:
        path = write(tmp_path, GOOD.replace('queues = ["Q1", "Q2"]', 'queus = ["Q1"]'))
        assert one_problem(path) == "place.queus: unknown key (did you mean queues?)"

    def test_unknown_section(self, tmp_path: Path) -> None:
        path = write(tmp_path, GOOD + '\n[displya]\nclock = "12h"\n')
        assert one_problem(path).startswith("displya: unknown key (did you mean display?)")

    def test_missing_key(self, tmp_path: Path) -> None:
        path = write(tmp_path, GOOD.replace('id = "P1"\n', ""))
        assert one_problem(path) == "place.id: required key is missing"

    def test_missing_section(self, tmp_path: Path) -> None:
        path = write(tmp_path, GOOD.split("[place]")[0])
        assert one_problem(path) == "place: required key is missing"

    def test_wrong_type(self, tmp_path: Path) -> None:
        path = write(tmp_path, GOOD + 'recent_calls = "six"\n')
        problem = one_problem(path)
        assert problem.startswith("display.recent_calls: ")
        assert "(got 'six')" in problem

    def test_out_of_range(self, tmp_path: Path) -> None:
        path = write(tmp_path, GOOD + "rotation_seconds = 1\n")
        assert one_problem(path).startswith("display.rotation_seconds: ")

    def test_bad_locale(self, tmp_path: Path) -> None:
        path = write(tmp_path, GOOD.replace('"en_US"]', '"en_GB"]'))
        problem = one_problem(path)
        assert problem.startswith("display.locales.1: 'en_GB' is not one of 'fr_FR'")

    @pytest.mark.parametrize(
        ("url", "why"),
        [
            ("display.example.net", "http:// or https://"),
            ("ftp://display.example.net", "http:// or https://"),
            ("https://display.example.net/v1", "without /v1"),
            ("https://display.example.net/?key=x", "query"),
        ],
    )
    def test_bad_url(self, tmp_path: Path, url: str, why: str) -> None:
        path = write(tmp_path, GOOD.replace("https://display.example.net/", url))
        problem = one_problem(path)
        assert problem.startswith("service.display_url: ")
        assert why in problem

    def test_bad_timezone(self, tmp_path: Path) -> None:
        path = write(tmp_path, GOOD + 'timezone = "Mars/Olympus_Mons"\n')
        assert one_problem(path) == (
            "display.timezone: unknown time zone 'Mars/Olympus_Mons' (use a name like Europe/Paris)"
        )

    def test_neither_credentials_nor_api_key(self, tmp_path: Path) -> None:
        text = GOOD.replace('credentials = "/etc/lobby-display/service-account.json"\n', "")
        problem = one_problem(write(tmp_path, text))
        assert problem.startswith("service: ")
        assert "credentials" in problem and "api_key" in problem

    def test_credentials_without_company(self, tmp_path: Path) -> None:
        path = write(tmp_path, GOOD.replace('company = "Example Company"\n', ""))
        assert "company is required" in one_problem(path)

    def test_thresholds_in_the_wrong_order(self, tmp_path: Path) -> None:
        path = write(tmp_path, GOOD + "stale_after_seconds = 300\nwithdraw_after_seconds = 60\n")
        problem = one_problem(path)
        assert problem.startswith("display: ")
        assert "withdraw_after_seconds must be longer than stale_after_seconds" in problem

    def test_invalid_toml_gives_the_line(self, tmp_path: Path) -> None:
        path = write(tmp_path, GOOD.replace('id = "P1"', "id = P1"))
        problem = one_problem(path)
        assert problem.startswith("not valid TOML: ")
        assert "line 7" in problem

    def test_not_utf8(self, tmp_path: Path) -> None:
        path = tmp_path / "config.toml"
        path.write_bytes(GOOD.replace("Example", "Soci\xe9t\xe9").encode("latin-1"))
        assert one_problem(path) == "is not UTF-8 text"

    def test_missing_file(self, tmp_path: Path) -> None:
        assert one_problem(tmp_path / "absent.toml") == "file not found"

    def test_a_directory(self, tmp_path: Path) -> None:
        assert one_problem(tmp_path) == "is a directory, not a TOML file"

    def test_every_mistake_at_once(self, tmp_path: Path) -> None:
        text = GOOD.replace('queues = ["Q1", "Q2"]', 'queus = ["Q1"]') + 'clock = "13h"\n'
        found = problems(write(tmp_path, text))
        assert len(found) == 2
        assert found[0].startswith("place.queus: ")
        assert found[1].startswith("display.clock: '13h' is not one of '24h' or '12h'")

    def test_a_wrong_choice(self, tmp_path: Path) -> None:
        path = write(tmp_path, GOOD + '\n[log]\nlevel = "TRACE"\n')
        assert one_problem(path).startswith("log.level: 'TRACE' is not one of 'DEBUG'")

    def test_a_secret_is_not_echoed(self, tmp_path: Path) -> None:
        text = GOOD.replace('company = "Example Company"', 'api_key = ["s3cr3t-key-value"]')
        problem = one_problem(write(tmp_path, text))
        assert problem.startswith("service.api_key: Input should be a valid string")
        assert "s3cr3t-key-value" not in problem


class TestEnvironment:
    def test_overrides_the_file(self, tmp_path: Path) -> None:
        settings = load_config(
            write(tmp_path, GOOD),
            environ={
                "LOBBY_DISPLAY_PLACE__ID": "P2",
                "LOBBY_DISPLAY_DISPLAY__LOCALES": '["de_DE", "ja_JP"]',
                "LOBBY_DISPLAY_DISPLAY__RECENT_CALLS": "3",
                "LOBBY_DISPLAY_SERVICE__API_KEY": "key-from-the-environment",
                "OTHER_VARIABLE": "ignored",
            },
        )
        assert settings.place.id == "P2"
        assert settings.display.locales == ["de_DE", "ja_JP"]
        assert settings.display.recent_calls == 3
        assert settings.service.api_key is not None
        assert settings.service.api_key.get_secret_value() == "key-from-the-environment"

    def test_comma_separated_locales(self, tmp_path: Path) -> None:
        settings = load_config(
            write(tmp_path, GOOD), environ={"LOBBY_DISPLAY_DISPLAY__LOCALES": "th_TH, ko_KR"}
        )
        assert settings.display.locales == ["th_TH", "ko_KR"]

    def test_a_bad_value_names_the_key(self, tmp_path: Path) -> None:
        problem = one_problem(
            write(tmp_path, GOOD), {"LOBBY_DISPLAY_DISPLAY__RECENT_CALLS": "many"}
        )
        assert problem.startswith("display.recent_calls: ")
        assert "'many'" in problem

    def test_an_unknown_key_is_reported(self, tmp_path: Path) -> None:
        problem = one_problem(write(tmp_path, GOOD), {"LOBBY_DISPLAY_DISPLAY__LOCALS": "fr_FR"})
        assert problem == "display.locals: unknown key (did you mean locales?)"

    def test_a_malformed_name(self, tmp_path: Path) -> None:
        problem = one_problem(write(tmp_path, GOOD), {"LOBBY_DISPLAY_PLACEID": "P2"})
        assert problem.startswith("environment variable LOBBY_DISPLAY_PLACEID: expected")


class TestSystemdDirectories:
    def settings(self, tmp_path: Path, credentials: str = "service-account.json") -> Settings:
        text = GOOD.replace("/etc/lobby-display/service-account.json", credentials)
        text += f'\n[state]\ndirectory = "{tmp_path / "state"}"\n'
        return load_config(write(tmp_path, text), environ={})

    def test_credentials_directory_wins(self, tmp_path: Path) -> None:
        loaded = tmp_path / "credentials"
        loaded.mkdir()
        (loaded / "service-account.json").write_text("{}")
        settings = self.settings(tmp_path, "/etc/lobby-display/service-account.json")
        environ = {"CREDENTIALS_DIRECTORY": str(loaded)}
        assert settings.credentials_path(environ) == loaded / "service-account.json"
        assert settings.credentials_path({}) == Path("/etc/lobby-display/service-account.json")

    def test_configured_path_without_a_loaded_credential(self, tmp_path: Path) -> None:
        loaded = tmp_path / "credentials"
        loaded.mkdir()
        settings = self.settings(tmp_path, "/etc/lobby-display/service-account.json")
        assert settings.credentials_path({"CREDENTIALS_DIRECTORY": str(loaded)}) == Path(
            "/etc/lobby-display/service-account.json"
        )

    def test_relative_name_is_looked_up_there(self, tmp_path: Path) -> None:
        settings = self.settings(tmp_path, "screen.json")
        environ = {"CREDENTIALS_DIRECTORY": "/run/credentials/lobby-display.service"}
        assert settings.credentials_path(environ) == Path(
            "/run/credentials/lobby-display.service/screen.json"
        )

    def test_state_directory(self, tmp_path: Path) -> None:
        settings = self.settings(tmp_path)
        assert settings.state_directory({}) == tmp_path / "state"
        assert settings.state_directory({"STATE_DIRECTORY": "/var/lib/a:/var/lib/b"}) == Path(
            "/var/lib/a"
        )


class TestCheckCommand:
    def test_bad_config_exits_2_with_the_problems(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        for name in [name for name in os.environ if name.startswith("LOBBY_DISPLAY_")]:
            monkeypatch.delenv(name)
        path = write(tmp_path, GOOD.replace("queues", "queus") + 'clock = "13h"\n', "bad.toml")
        assert main(["check", "--config", str(path)]) == EXIT_BAD_CONFIG
        captured = capsys.readouterr()
        assert captured.out == ""
        assert f"{path}: place.queus: unknown key (did you mean queues?)" in captured.err
        assert f"{path}: display.clock: '13h' is not one of" in captured.err
        assert "Traceback" not in captured.err

    def test_missing_config_exits_2(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        path = tmp_path / "absent.toml"
        assert main(["check", "--config", str(path)]) == EXIT_BAD_CONFIG
        assert f"{path}: file not found" in capsys.readouterr().err
