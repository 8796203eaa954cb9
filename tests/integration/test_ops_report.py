"""`lobby-display report` with no screen running: a bundle tarfile reads, every member free of
the API key, the private key and developer tokens, and a manifest saying what is missing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
import zlib
from datetime import UTC, datetime
from pathlib import Path

import pytest

from lobby_display.auth import KEY_CACHE_NAME, developer_token, load_service_account
from lobby_display.recording import (
    Message,
    RecordingWriter,
    flight_directory,
    start_line,
)
from lobby_display.simulator import SimulatorServer
from lobby_display.updates import Feed

PROGRAM = str(Path(sys.executable).with_name("lobby-display"))


def unzipped(data: bytes) -> bytes:
    """A gzip member's text, also of a file still being written (a flight file: no end yet)."""
    return zlib.decompressobj(zlib.MAX_WBITS | 16).decompress(data)


#: The key the screen cached (as `auth.ServiceApiKeys` writes it).
CACHED_KEY = "cachedKey-7f3a9c2e41d84b6f"
#: A fixed key of the config.
FIXED_KEY = "fixedKey-0b1c2d3e4f5a6b7c"


def environment() -> dict[str, str]:
    return {
        key: value
        for key, value in os.environ.items()
        if not key.startswith("LOBBY_DISPLAY_")
        and key not in ("RUNTIME_DIRECTORY", "STATE_DIRECTORY", "CREDENTIALS_DIRECTORY")
    }


def members(bundle: Path) -> dict[str, str]:
    """Every member's text (a gzip member decompressed), by name under the bundle's folder."""
    texts: dict[str, str] = {}
    with tarfile.open(bundle, "r:gz") as archive:
        tops = {member.name.split("/", 1)[0] for member in archive.getmembers()}
        assert len(tops) == 1, f"one folder at the top: {tops}"
        for member in archive.getmembers():
            assert member.isfile(), member.name
            data = archive.extractfile(member).read()  # type: ignore[union-attr]
            if member.name.endswith(".gz"):
                data = unzipped(data)
            texts[member.name.split("/", 1)[1]] = data.decode("utf-8")
    return texts


def write_flight(state: Path, name: str, extra: str = "") -> Path:
    """A flight recorder file in the format of recording.py (a start line, a message)."""
    folder = flight_directory(state)
    folder.mkdir(mode=0o700, exist_ok=True)
    writer = RecordingWriter(folder / name)
    now = datetime.now(UTC)
    writer.write(start_line(place="P1", service_url="http://127.0.0.1:1", at=now))
    writer.write(Message(at=now, feed=Feed.COUNTERS, first=True, data=json.dumps({"c": extra})))
    writer.close()
    return folder / name


@pytest.mark.parametrize("auth", ["credentials", "api_key"])
def test_the_bundle_holds_no_secret_and_says_what_is_missing(
    simulator: SimulatorServer, tmp_path: Path, auth: str
) -> None:
    config = simulator.write_config(
        tmp_path,
        api_key=FIXED_KEY if auth == "api_key" else None,
        log={"file": str(tmp_path / "display.log")},
    )
    state = tmp_path / "state"
    # Written in both cases (with a fixed key, a file the config does not name).
    credentials = simulator.write_credentials(tmp_path)
    account = load_service_account(credentials)
    token = developer_token(account, simulator.url, simulator.company)
    body_lines = [line for line in account.pem.splitlines() if "-----" not in line]
    secrets = [CACHED_KEY, token, *body_lines] + ([FIXED_KEY] if auth == "api_key" else [])

    (state / KEY_CACHE_NAME).write_text(json.dumps({"apiKey": CACHED_KEY}))
    # A log that quotes every secret, as a careless line might.
    (tmp_path / "display.log").write_text(
        "2026-11-24 10:00:00 INFO lobby_display.kiosk: lobby-display starting for place P1\n"
        f"GET {simulator.url}/v1/queues?key={CACHED_KEY} 200\n"
        f"token {token} sent\n"
        f"the key {FIXED_KEY} and {CACHED_KEY} in prose\n"
        f"{account.pem}\n"
    )
    clean = write_flight(state, "flight-20261124T100000.000000Z.jsonl.gz")
    leaky = write_flight(state, "flight-20261124T100500.000000Z.jsonl.gz", extra=CACHED_KEY)

    bundle = tmp_path / "out" / "report.tar.gz"
    bundle.parent.mkdir()
    done = subprocess.run(
        [PROGRAM, "report", "--config", str(config), "--out", str(bundle)],
        env=environment(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert bundle.stat().st_mode & 0o777 == 0o600

    texts = members(bundle)
    for name, text in texts.items():
        for secret in secrets:
            assert secret not in text, f"{name} holds a secret ({secret[:12]}...)"
    assert set(texts) >= {"MANIFEST.txt", "config.toml", "log.txt", "versions.txt"}
    assert f"flight/{clean.name}" in texts, "the clean flight file is in"
    assert f"flight/{leaky.name}" not in texts, "the flight file holding a key is left out"

    manifest = texts["MANIFEST.txt"]
    assert "screenshot.svg: no display of this config is running" in manifest
    assert f"{leaky.name}: holds a secret" in manifest
    assert "health.json" in manifest.split("Not included:")[1]
    # The log is there, masked, not dropped.
    assert "lobby-display starting for place P1" in texts["log.txt"]
    assert "key=***" in texts["log.txt"]
    # The settings: the credentials file's path, never its contents; no key.
    if auth == "credentials":
        assert f'credentials = "{credentials}"' in texts["config.toml"]
        assert f"credentials file: {credentials}" in manifest
    else:
        assert 'api_key = "***"' in texts["config.toml"]
    versions = texts["versions.txt"]
    for library in ("lobby-display", "Python", "textual", "babel", "httpx", "OS", "terminal"):
        assert library in versions, versions


def test_an_unwritable_bundle_path_fails_with_a_message(
    simulator: SimulatorServer, tmp_path: Path
) -> None:
    config = simulator.write_config(tmp_path)
    done = subprocess.run(
        [PROGRAM, "report", "--config", str(config), "--out", str(tmp_path / "no" / "b.tar.gz")],
        env=environment(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1
    assert "cannot write" in done.stderr and "Traceback" not in done.stderr


def fake_journalctl(directory: Path, output: str, *, echo: bool = True) -> dict[str, str]:
    """An environment whose `journalctl` prints its arguments (with `echo`), then `output`."""
    directory.mkdir()
    program = directory / "journalctl"
    arguments = 'echo "journalctl $*"\n' if echo else ""
    program.write_text(f'#!/bin/sh\n{arguments}cat <<"END"\n{output}\nEND\n')
    program.chmod(0o755)
    env = environment()
    env["PATH"] = f"{directory}:{env.get('PATH', '/usr/bin:/bin')}"
    return env


def report_of(config: Path, env: dict[str, str], tmp_path: Path) -> dict[str, str]:
    bundle = tmp_path / "report.tar.gz"
    done = subprocess.run(
        [PROGRAM, "report", "--config", str(config), "--out", str(bundle)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return members(bundle)


def test_without_a_log_file_the_log_comes_from_the_journal(
    simulator: SimulatorServer, tmp_path: Path
) -> None:
    config = simulator.write_config(tmp_path)  # no [log] file: the journal under the units
    (tmp_path / "state" / KEY_CACHE_NAME).write_text(json.dumps({"apiKey": CACHED_KEY}))
    env = fake_journalctl(
        tmp_path / "bin",
        f"Nov 24 10:00:01 box lobby-display[812]: feeds: GET /v1/x?key={CACHED_KEY} failed\n"
        f"Nov 24 10:00:02 box lobby-display[812]: quoted {CACHED_KEY} in prose",
    )
    texts = report_of(config, env, tmp_path)
    log = texts["log.txt"]
    # The units of the screen named like its config file (config.toml: "config").
    assert "-u lobby-display-kiosk@config.service" in log
    assert "-u lobby-display-console@config.service" in log
    assert "-n 5000" in log
    assert "lobby-display[812]: feeds: GET /v1/x?key=*** failed" in log
    assert CACHED_KEY not in log
    assert "log.txt: the screen's last journal entries" in texts["MANIFEST.txt"]


def test_an_empty_journal_falls_back_to_the_log_file_in_the_state_directory(
    simulator: SimulatorServer, tmp_path: Path
) -> None:
    config = simulator.write_config(tmp_path)
    env = fake_journalctl(tmp_path / "bin", "-- No entries --", echo=False)
    texts = report_of(config, env, tmp_path)
    assert "log.txt" not in texts
    assert (
        "the journal has no entries of lobby-display-kiosk@config.service"
        in (texts["MANIFEST.txt"])
    )
    (tmp_path / "state" / "lobby-display.log").write_text("2026-11-24 INFO started\n")
    texts = report_of(config, env, tmp_path)
    assert texts["log.txt"] == "2026-11-24 INFO started\n"


def test_a_log_file_that_is_a_link_is_not_followed(
    simulator: SimulatorServer, tmp_path: Path
) -> None:
    """Run as root, the command must not copy whatever file the screen's user links there."""
    private = tmp_path / "private.txt"
    private.write_text("root's own secret notes\n")
    config = simulator.write_config(tmp_path, log={"file": str(tmp_path / "display.log")})
    (tmp_path / "display.log").symlink_to(private)
    texts = report_of(config, environment(), tmp_path)
    assert all("root's own secret notes" not in text for text in texts.values())
    assert "is a symbolic link, not a log file: refused" in texts["MANIFEST.txt"]


def test_a_config_that_does_not_load_is_bundled_with_why(tmp_path: Path) -> None:
    config = tmp_path / "hall.toml"
    config.write_text(
        "[service]\n"
        'display_url = "https://display.example.net"\n'
        f'api_key = "{FIXED_KEY}"\n'
        "[place]\n"
        'id = "P1"\n'
        "[display]\n"
        'clock = "13h"\n'
    )
    config.chmod(0o600)
    env = fake_journalctl(tmp_path / "bin", f"lobby-display[9]: key={FIXED_KEY} refused")
    texts = report_of(config, env, tmp_path)
    for name, text in texts.items():
        assert FIXED_KEY not in text, f"{name} holds the key"
    assert "display.clock: '13h' is not one of" in texts["config-error.txt"]
    assert 'clock = "13h"' in texts["config.toml"], "the file as it is"
    assert 'api_key = "***"' in texts["config.toml"]
    assert "-u lobby-display-kiosk@hall.service" in texts["log.txt"]
    assert "DOES NOT LOAD" in texts["MANIFEST.txt"]


def test_a_damaged_flight_file_is_left_out_and_named(
    simulator: SimulatorServer, tmp_path: Path
) -> None:
    config = simulator.write_config(tmp_path)
    good = write_flight(tmp_path / "state", "flight-20261124T100000.000000Z.jsonl.gz")
    bad = flight_directory(tmp_path / "state") / "flight-20261124T100500.000000Z.jsonl.gz"
    bad.write_bytes(b"not gzip at all")
    texts = report_of(config, environment(), tmp_path)
    assert f"flight/{good.name}" in texts
    assert f"flight/{bad.name}" not in texts
    assert f"flight/{bad.name}: not a gzip file: left out" in texts["MANIFEST.txt"]
