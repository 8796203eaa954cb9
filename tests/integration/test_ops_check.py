"""`lobby-display check` against the simulator on 127.0.0.1: a good config passes, and each way a
screen can be set up wrong is one FAIL line that says what, where and how to fix it."""

from __future__ import annotations

import io
import json
import os
import re
import socket
from pathlib import Path

import pytest

from lobby_display.cli import main
from lobby_display.config import load_config
from lobby_display.ops import check
from lobby_display.simulator import SimulatorServer

#: Every check a reachable, well-configured screen reports, in order.
ALL_CHECKS = (
    "config",
    "credentials",
    "state",
    "service",
    "API key",
    "clock",
    "place",
    "queues",
    "counters",
    "tickets feed",
    "queues feed",
    "counters feed",
    "sound",
    "fonts",
)
FIXED_KEY = "fixed-key-for-the-ops-tests-7f3a9c"


@pytest.fixture(autouse=True)
def _plain_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """The checks read systemd's variables and the config overrides: none of the caller's."""
    for name in ("CREDENTIALS_DIRECTORY", "STATE_DIRECTORY", "RUNTIME_DIRECTORY", "NO_COLOR"):
        monkeypatch.delenv(name, raising=False)
    for name in [name for name in os.environ if name.startswith("LOBBY_DISPLAY_")]:
        monkeypatch.delenv(name)


def run_check(capsys: pytest.CaptureFixture[str], config: Path, *extra: str) -> tuple[int, str]:
    code = main(["check", "--config", str(config), *extra])
    return code, capsys.readouterr().out


_LINE = re.compile(r"^(?:[✓✗!-] )?(ok  |warn|FAIL|skip)  (.{13}) (.*)$")


def lines(report: str, name: str) -> list[tuple[str, str]]:
    """(status, message with its fix) of every line of check `name`."""
    found: list[tuple[str, str]] = []
    for text in report.splitlines():
        match = _LINE.match(text)
        if match and match.group(2).strip() == name:
            found.append((match.group(1).strip(), match.group(3)))
        elif found and text.lstrip().startswith("fix: ") and not match:
            status, message = found[-1]
            found[-1] = (status, f"{message}\n{text.strip()}")
    return found


def line(report: str, name: str) -> str:
    """The message (and fix) of the first line of check `name`."""
    found = lines(report, name)
    assert found, f"no line for {name!r} in:\n{report}"
    return found[0][1]


def status(report: str, name: str) -> str:
    """ok, warn, FAIL or skip: the outcome of the first line of check `name`."""
    found = lines(report, name)
    assert found, f"no line for {name!r} in:\n{report}"
    return found[0][0]


def test_a_good_config_passes_every_check(
    simulator: SimulatorServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = simulator.write_config(tmp_path)
    code, report = run_check(capsys, config)
    assert code == 0, report
    for name in ALL_CHECKS:
        assert status(report, name) == "ok", line(report, name)
    assert "All checks passed" in report
    assert str(config) in line(report, "config")
    assert "within" in line(report, "clock")  # compared with the service's Date header
    assert "all 5 of the place" in line(report, "queues")


def test_the_report_never_shows_the_private_key_or_the_api_key(
    simulator: SimulatorServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with_account = simulator.write_config(tmp_path / "account")
    code, report = run_check(capsys, with_account)
    assert code == 0, report
    pem = json.loads((tmp_path / "account" / "service-account.json").read_text())["private_key"]
    body = [part for part in pem.splitlines() if part and "-----" not in part]
    assert not any(part in report for part in body)
    assert "PRIVATE KEY" not in report and "key=" not in report

    with_key = simulator.write_config(tmp_path / "fixed", api_key=FIXED_KEY)
    code, report = run_check(capsys, with_key)
    assert code == 0, report
    assert status(report, "API key") == "ok"
    assert FIXED_KEY not in report


def test_an_unknown_place_is_named_with_the_way_to_find_the_right_one(
    simulator: SimulatorServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = simulator.write_config(tmp_path, place={"id": "no-such-place"})
    code, report = run_check(capsys, config)
    assert code == 1
    place = line(report, "place")
    assert status(report, "place") == "FAIL"
    assert "no-such-place" in place and "discover" in place
    assert status(report, "queues") == "skip" and status(report, "feeds") == "skip"


def test_an_unknown_queue_id_fails_its_own_line_and_the_others_pass(
    simulator: SimulatorServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    real = simulator.queue_ids[1]
    config = simulator.write_config(tmp_path, place={"queues": [real, "Q-TYPO"]})
    code, report = run_check(capsys, config)
    assert code == 1
    (good, ok_text), (bad, bad_text) = lines(report, "queue")
    assert good == "ok" and real in ok_text
    assert bad == "FAIL" and "'Q-TYPO'" in bad_text and "place.queues" in bad_text
    assert "fix:" in bad_text and "lobby-display discover" in bad_text
    assert status(report, "tickets feed") == "ok"  # the real queue is still followed


def test_an_unknown_counter_id_fails(
    simulator: SimulatorServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = simulator.write_config(tmp_path, place={"counters": ["C-TYPO"]})
    code, report = run_check(capsys, config)
    assert code == 1
    assert status(report, "counter") == "FAIL"
    assert "'C-TYPO' (in place.counters) is not a counter" in line(report, "counter")


def test_a_key_file_open_to_others_is_refused_with_chmod(
    simulator: SimulatorServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = simulator.write_config(tmp_path)
    credentials = tmp_path / "service-account.json"
    credentials.chmod(0o644)
    code, report = run_check(capsys, config)
    assert code == 1
    text = line(report, "credentials")
    assert status(report, "credentials") == "FAIL"
    assert "0644" in text and f"fix: chmod 600 {credentials}" in text
    assert status(report, "service") == "skip" and status(report, "place") == "skip"


def test_a_key_file_that_is_not_json_is_named(
    simulator: SimulatorServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = simulator.write_config(tmp_path)
    credentials = tmp_path / "service-account.json"
    credentials.write_text("client_email: screen@example\n")
    code, report = run_check(capsys, config)
    assert code == 1
    assert status(report, "credentials") == "FAIL"
    assert "is not JSON" in line(report, "credentials")


def test_a_key_the_service_does_not_know_fails_at_the_api_key(
    simulator: SimulatorServer,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    rsa_pem: str,
) -> None:
    config = simulator.write_config(tmp_path)
    credentials = tmp_path / "service-account.json"
    account = json.loads(credentials.read_text())
    credentials.write_text(json.dumps({**account, "private_key": rsa_pem}))  # another key pair
    code, report = run_check(capsys, config)
    assert code == 1
    assert status(report, "credentials") == "ok"
    assert status(report, "service") == "ok"
    api_key = line(report, "API key")
    assert status(report, "API key") == "FAIL" and "HTTP 401" in api_key
    assert "company" in api_key  # the fix names what to compare
    assert rsa_pem.splitlines()[1] not in report


def test_an_unreachable_service_fails_the_service_line(
    simulator: SimulatorServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed = probe.getsockname()[1]
    config = simulator.write_config(tmp_path, url=f"http://127.0.0.1:{closed}")
    code, report = run_check(capsys, config)
    assert code == 1
    service = line(report, "service")
    assert status(report, "service") == "FAIL"
    assert "cannot reach" in service and f"127.0.0.1:{closed}" in service
    assert "service.display_url" in service
    assert status(report, "API key") == "skip" and status(report, "place") == "skip"
    assert status(report, "clock") == "ok"  # the local clock alone is still judged


def test_a_revoked_fixed_key_fails_the_api_key_line(
    simulator: SimulatorServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = simulator.write_config(tmp_path, api_key=FIXED_KEY)
    simulator.revoke_keys()
    code, report = run_check(capsys, config)
    assert code == 1
    api_key = line(report, "API key")
    assert status(report, "API key") == "FAIL"
    assert "refuses the fixed service.api_key" in api_key and "service.credentials" in api_key
    assert FIXED_KEY not in report


def test_a_feed_that_never_sends_its_first_message_fails_within_the_bound(
    simulator: SimulatorServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = simulator.write_config(tmp_path)
    simulator.stall("counters")
    code, report = run_check(capsys, config, "--feed-timeout", "1")
    assert code == 1
    assert status(report, "tickets feed") == "ok" and status(report, "queues feed") == "ok"
    counters = line(report, "counters feed")
    assert status(report, "counters feed") == "FAIL"
    assert "/v1/counters/sse: no first message within 1 s" in counters
    assert "proxy" in counters


def test_an_unwritable_state_directory_fails(
    simulator: SimulatorServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    config = simulator.write_config(tmp_path, state={"directory": str(blocker / "state")})
    code, report = run_check(capsys, config)
    assert code == 1
    assert status(report, "state") == "FAIL"
    assert str(blocker / "state") in line(report, "state")


def test_a_file_without_utf8_gets_words_only(simulator: SimulatorServer, tmp_path: Path) -> None:
    settings = load_config(simulator.write_config(tmp_path), environ={})
    out = io.StringIO()  # no encoding: as a pipe to an ASCII locale
    assert check(settings, out=out, environ={}) == 0
    report = out.getvalue()
    assert report.startswith("ok    config")
    assert not any(symbol in report for symbol in "✓✗")


def test_no_color_asks_for_words_only(
    simulator: SimulatorServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    config = simulator.write_config(tmp_path)
    monkeypatch.setenv("NO_COLOR", "1")
    code, report = run_check(capsys, config)
    assert code == 0
    assert report.startswith("ok    config") and "✓" not in report


def test_a_thai_screen_on_the_text_console_is_warned_not_failed(
    simulator: SimulatorServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = simulator.write_config(
        tmp_path, locales=["th_TH", "en_US"], display={"theme": "console"}
    )
    code, report = run_check(capsys, config)
    assert code == 0, report
    assert status(report, "fonts") == "warn"
    assert "th_TH cannot be shown on the Linux text console" in line(report, "fonts")


def test_sound_with_a_player_passes_and_leaves_the_state_directory_alone(
    simulator: SimulatorServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # `true` stands for a player: it exists and accepts a file name.
    sound = {"enabled": True, "mode": "chime", "player": "true"}
    config = simulator.write_config(tmp_path, sound=sound)
    code, report = run_check(capsys, config)
    assert code == 0, report
    assert status(report, "sound") == "ok" and "played with true" in line(report, "sound")
    assert list((tmp_path / "state").iterdir()) == []


def test_sound_without_a_player_fails_with_the_packages_to_install(
    simulator: SimulatorServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sound = {"enabled": True, "player": "no-such-player-on-this-machine"}
    config = simulator.write_config(tmp_path, sound=sound)
    code, report = run_check(capsys, config)
    assert code == 1
    assert status(report, "sound") == "FAIL"
    assert "no working audio player" in line(report, "sound")
    assert "alsa-utils" in line(report, "sound")
