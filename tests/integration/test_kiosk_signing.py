"""`lobby-display run` signs its developer token in a program of its own: a first boot gets an
API key and goes live, and neither it nor a restart ever loads cryptography (8 MiB held for the
process's life otherwise)."""

from __future__ import annotations

import json
import os
import signal
import sys
from collections.abc import Callable
from pathlib import Path

from lobby_display.simulator import SimulatorServer
from tests.helpers.terminal import TerminalProgram, assert_terminal_restored

PROGRAM = str(Path(sys.executable).with_name("lobby-display"))


def libraries(pid: int) -> str:
    """The files the process has mapped (its shared libraries among them)."""
    return Path(f"/proc/{pid}/maps").read_text()


def live_without_cryptography(config: Path) -> None:
    env = {**os.environ, "TEXTUAL_ANIMATIONS": "none"}
    env.pop("STATE_DIRECTORY", None)
    env.pop("CREDENTIALS_DIRECTORY", None)
    with TerminalProgram([PROGRAM, "run", "--config", str(config)], env, 45, 160) as program:
        program.wait_for(b"Live", timeout=60)
        assert program.process is not None
        mapped = libraries(program.process.pid)
        assert "/cryptography/" not in mapped, "cryptography was loaded by the display"
        program.send_signal(signal.SIGTERM)
        run = program.wait(timeout=30)
    assert_terminal_restored(run)
    assert b"Traceback" not in run.output


def test_first_boot_and_restart_never_load_cryptography(
    start_simulator: Callable[..., SimulatorServer], tmp_path: Path
) -> None:
    sim = start_simulator()
    state = tmp_path / "state"
    config = sim.write_config(
        tmp_path,
        locales=["en_US"],
        state={"directory": str(state)},
        log={"file": str(tmp_path / "display.log")},
    )
    live_without_cryptography(config)  # first boot: a token was signed, apart
    cached = json.loads((state / "api-key.json").read_text())
    assert cached["apiKey"] and cached["displayUrl"] == sim.url
    live_without_cryptography(config)  # restart: the cached key
    assert json.loads((state / "api-key.json").read_text())["apiKey"] == cached["apiKey"]
    assert "Traceback" not in (tmp_path / "display.log").read_text()
