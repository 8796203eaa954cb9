"""`lobby-display record` run as an operator runs it, until the recording holds what a test
needs (waited for by condition, not by a duration), then stopped with SIGTERM."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from lobby_display.recording import Message, Recording, RecordingError, read_recording
from lobby_display.updates import Feed

PROGRAM = str(Path(sys.executable).with_name("lobby-display"))


def every_feed(recording: Recording) -> bool:
    """True when the recording holds a first message of each of the three feeds."""
    firsts = {line.feed for line in recording.lines if isinstance(line, Message) and line.first}
    return firsts == set(Feed)


def record_until(
    config: Path,
    out: Path,
    enough: Callable[[Recording], bool] = every_feed,
    timeout: float = 60.0,
) -> str:
    """Record with `config` into `out` until `enough(what is written so far)`; the command's
    output. The file is flushed every second, so it is read while being written."""
    command = [PROGRAM, "record", "--config", str(config), "--out", str(out)]
    with subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    ) as run:
        deadline = time.monotonic() + timeout
        try:
            while True:
                assert run.poll() is None, "lobby-display record stopped by itself"
                try:
                    if out.exists() and enough(read_recording(out)):
                        break
                except RecordingError:
                    pass  # not a line yet
                assert time.monotonic() < deadline, f"the recording never held enough: {out}"
                time.sleep(0.2)
        finally:
            run.send_signal(signal.SIGTERM)
            printed, errors = run.communicate(timeout=30)
    assert run.returncode == 0, errors
    return printed
