"""`lobby-display check` with `[monitoring] textfile`: whether the screen can write node-exporter's
file is reported, with the fix; without the key, no line."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from lobby_display.cli import main
from lobby_display.simulator import SimulatorServer


@pytest.fixture(autouse=True)
def _plain_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("CREDENTIALS_DIRECTORY", "STATE_DIRECTORY", "RUNTIME_DIRECTORY", "NO_COLOR"):
        monkeypatch.delenv(name, raising=False)
    for name in [name for name in os.environ if name.startswith("LOBBY_DISPLAY_")]:
        monkeypatch.delenv(name)


def monitoring_lines(
    capsys: pytest.CaptureFixture[str],
    simulator: SimulatorServer,
    tmp_path: Path,
    **monitoring: str,
) -> tuple[int, list[str]]:
    config = simulator.write_config(tmp_path, monitoring=monitoring)
    code = main(["check", "--config", str(config)])
    out = capsys.readouterr().out.splitlines()
    found = [
        f"{text.strip()} {out[i + 1].strip() if i + 1 < len(out) else ''}"
        for i, text in enumerate(out)
        if " monitoring " in text
    ]
    return code, found


def test_a_missing_collector_directory_fails_with_the_fix(
    capsys: pytest.CaptureFixture[str], simulator: SimulatorServer, tmp_path: Path
) -> None:
    textfile = tmp_path / "node-exporter" / "lobby_display.prom"
    code, found = monitoring_lines(capsys, simulator, tmp_path, textfile=str(textfile))
    assert code == 1
    assert len(found) == 1 and "FAIL" in found[0], found
    assert f"{textfile.parent} does not exist" in found[0]
    assert "ReadWritePaths=" in found[0] and "setfacl" in found[0]


def test_a_writable_collector_directory_is_ok(
    capsys: pytest.CaptureFixture[str], simulator: SimulatorServer, tmp_path: Path
) -> None:
    textfile = tmp_path / "node-exporter" / "lobby_display.prom"
    textfile.parent.mkdir()
    code, found = monitoring_lines(capsys, simulator, tmp_path, textfile=str(textfile))
    assert len(found) == 1 and found[0].startswith(("✓ ok", "ok")), found
    assert f"{textfile} can be written" in found[0]
    assert os.listdir(textfile.parent) == [], "check leaves nothing behind"
    assert code == 0


def test_without_a_textfile_no_line(
    capsys: pytest.CaptureFixture[str], simulator: SimulatorServer, tmp_path: Path
) -> None:
    code, found = monitoring_lines(capsys, simulator, tmp_path)
    assert found == [] and code == 0
