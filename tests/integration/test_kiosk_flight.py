"""The real programs: `lobby-display run` keeps its flight recorder (files in the state
directory, the three feeds in them, finished cleanly at a stop); `demo --replay` shows a
recorded day."""

from __future__ import annotations

import gzip
import os
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path

from lobby_display.recording import Message, RecordingError, flight_files, read_recording
from lobby_display.simulator import SimulatorServer
from lobby_display.simulator.names import PLACE
from lobby_display.updates import Feed
from tests.helpers.recording_harness import record_until
from tests.helpers.terminal import TerminalProgram

PROGRAM = str(Path(sys.executable).with_name("lobby-display"))


def test_the_running_kiosk_keeps_its_feeds_in_the_state_directory(
    start_simulator: Callable[..., SimulatorServer], tmp_path: Path
) -> None:
    sim = start_simulator()
    state = tmp_path / "state"
    config = sim.write_config(
        tmp_path,
        locales=["en_US"],
        state={"directory": str(state), "record_minutes": 5},
        log={"file": str(tmp_path / "display.log")},
    )
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in ("RUNTIME_DIRECTORY", "STATE_DIRECTORY", "CREDENTIALS_DIRECTORY")
    }
    env["TEXTUAL_ANIMATIONS"] = "none"

    def feeds_recorded() -> set[Feed]:
        files = flight_files(state)
        if not files:
            return set()
        try:
            lines = read_recording(files[-1]).lines
        except RecordingError:
            return set()  # a file just opened, its first lines not written out yet
        return {line.feed for line in lines if isinstance(line, Message) and line.first}

    with TerminalProgram(
        [PROGRAM, "run", "--config", str(config)], env, rows=45, columns=160
    ) as program:
        deadline = time.monotonic() + 60
        while feeds_recorded() != set(Feed):
            assert time.monotonic() < deadline, f"flight files: {flight_files(state)}"
            time.sleep(0.2)
        program.wait_for(b"Live", timeout=60)  # the screen is up: SIGTERM is the kiosk's stop
        program.send_signal(signal.SIGTERM)
        assert program.wait().returncode == 0
    files = flight_files(state)
    assert len(files) == 1
    assert oct(files[0].stat().st_mode & 0o777) == "0o600"
    recording = read_recording(files[0])
    assert recording.start is not None and recording.start.place == sim.place_id
    answers = {line.path for line in recording.lines if line.kind == "answer"}
    assert f"/places/{sim.place_id}/endpoints" in answers
    gzip.decompress(files[0].read_bytes())  # finished at the stop: a whole gzip stream
    log = (tmp_path / "display.log").read_text()
    assert "flight recorder" not in log and "Traceback" not in log


def test_demo_replays_a_recorded_day(
    start_simulator: Callable[..., SimulatorServer], tmp_path: Path
) -> None:
    sim = start_simulator()
    config = sim.write_config(tmp_path / "place", locales=["en_US"])
    day = tmp_path / "day.jsonl.gz"
    record_until(config, day)
    sim.stop()  # the demo shows the recording, not the place
    env = {**os.environ, "TEXTUAL_ANIMATIONS": "none"}
    command = [PROGRAM, "demo", "--replay", str(day), "--speed", "10", "--graphics", "text"]
    with TerminalProgram(command, env, rows=45, columns=160) as program:
        program.wait_for(PLACE["en_US"].encode(), timeout=60)
        program.wait_for(b"Live", timeout=60)
        program.send_signal(signal.SIGTERM)
        program.wait()
