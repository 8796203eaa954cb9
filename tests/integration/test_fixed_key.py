"""A fixed `service.api_key` wins over `credentials` (README, "Credentials"): when both are set,
the fixed key is used and the service-account file is never read, so a file that is missing,
not JSON, or a FIFO (which a read would refuse, or hang on) changes nothing. Against the
simulator on 127.0.0.1, with the kiosk's own client (`source.kiosk_client`) and `check`."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from lobby_display.auth import KEY_CACHE_NAME
from lobby_display.config import load_config
from lobby_display.simulator import SimulatorServer
from lobby_display.source import kiosk_client
from tests.integration.test_ops_check import run_check, status

FIXED_KEY = "fixed-key-for-the-credentials-test-5b1e"


@pytest.fixture(autouse=True)
def _plain_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("CREDENTIALS_DIRECTORY", "STATE_DIRECTORY", "RUNTIME_DIRECTORY", "NO_COLOR"):
        monkeypatch.delenv(name, raising=False)
    for name in [name for name in os.environ if name.startswith("LOBBY_DISPLAY_")]:
        monkeypatch.delenv(name)


def unusable_file(folder: Path, kind: str) -> Path:
    path = folder / "service-account.json"
    if kind == "not JSON":
        path.write_text("this is not a service account")
        path.chmod(0o600)
    elif kind == "FIFO":
        os.mkfifo(path, 0o600)
    return path


KINDS = ["missing", "not JSON", "FIFO"]


@pytest.mark.parametrize("kind", KINDS)
async def test_the_fixed_key_reads_the_place_whatever_the_file(
    simulator: SimulatorServer, tmp_path: Path, kind: str
) -> None:
    credentials = unusable_file(tmp_path, kind)
    config = simulator.write_config(
        tmp_path,
        api_key=FIXED_KEY,
        service={"credentials": str(credentials), "company": simulator.company},
    )
    settings = load_config(config, environ={})
    assert settings.credentials_path() == credentials  # both are set
    async with kiosk_client(settings) as client:
        place = await client.place(settings.place.id)
    assert place.place_id == settings.place.id
    assert not (tmp_path / "state" / KEY_CACHE_NAME).exists(), "no key was asked for"


@pytest.mark.parametrize("kind", KINDS)
def test_check_passes_with_the_fixed_key_whatever_the_file(
    simulator: SimulatorServer, tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str
) -> None:
    credentials = unusable_file(tmp_path, kind)
    config = simulator.write_config(
        tmp_path,
        api_key=FIXED_KEY,
        service={"credentials": str(credentials), "company": simulator.company},
    )
    code, report = run_check(capsys, config)
    assert status(report, "API key") == "ok", report
    assert status(report, "place") == "ok", report
    assert "FAIL" not in report, report
    assert code == 0, report
