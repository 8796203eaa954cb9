"""Child processes (a sound player, the signing program) never inherit a key given through the
environment, nor systemd's variables meant for the display alone."""

from __future__ import annotations

import json
import stat
import sys
from datetime import UTC, datetime
from pathlib import Path

import jwt
import pytest

from lobby_display.auth import developer_token_apart, load_service_account
from lobby_display.sound.chime import write_chime
from lobby_display.sound.player import CommandPlayer

KEY = "env-given-key-0123456789"
#: What a display under systemd, configured through its environment, has in it.
PARENT_ENVIRONMENT = {
    "LOBBY_DISPLAY_SERVICE__API_KEY": KEY,
    "LOBBY_DISPLAY_PLACE__ID": "P1",
    "NOTIFY_SOCKET": "/run/systemd/notify",
    "CREDENTIALS_DIRECTORY": "/run/credentials/lobby-display-kiosk@hall.service",
}

#: Writes its environment as JSON next to itself, then does the job of `program` (if any).
RECORDER = """\
#!/bin/sh
{python} -c 'import json, os; print(json.dumps(dict(os.environ)))' > {record}
{then}
"""


def recorder(directory: Path, then: str = "") -> tuple[Path, Path]:
    record = directory / "environment.json"
    script = directory / "recorder"
    script.write_text(RECORDER.format(python=sys.executable, record=record, then=then))
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return script, record


def recorded(record: Path) -> dict[str, str]:
    environment: dict[str, str] = json.loads(record.read_text())
    return environment


@pytest.fixture(autouse=True)
def _display_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in PARENT_ENVIRONMENT.items():
        monkeypatch.setenv(name, value)


async def test_a_sound_player_gets_no_key_from_the_environment(tmp_path: Path) -> None:
    script, record = recorder(tmp_path)
    chime = write_chime(tmp_path / "chime.wav", 50)
    await CommandPlayer([str(script)]).play(chime)
    environment = recorded(record)
    assert KEY not in json.dumps(environment)
    assert not [name for name in environment if name.startswith("LOBBY_DISPLAY_")]
    assert "NOTIFY_SOCKET" not in environment and "CREDENTIALS_DIRECTORY" not in environment
    assert environment.get("PATH")  # the rest is kept: a player still finds its libraries


async def test_the_signing_program_gets_no_key_from_the_environment(
    tmp_path: Path, service_account_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The signing program is started as `sys.executable -P -m lobby_display.signing`: a
    # stand-in records its environment and runs the real one.
    script, record = recorder(tmp_path, then=f'exec {sys.executable} "$@"')
    monkeypatch.setattr(sys, "executable", str(script))
    account = load_service_account(service_account_file)
    token = await developer_token_apart(
        account, "https://display.example.net", "Example Company", datetime.now(UTC)
    )
    assert jwt.decode(token, options={"verify_signature": False})["sub"] == "Example Company"
    environment = recorded(record)
    assert KEY not in json.dumps(environment)
    assert "NOTIFY_SOCKET" not in environment
