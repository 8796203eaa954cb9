"""The kiosk's keyboard: asleep while nobody types, awake for a key, out at once on quitting.

The real program on a pseudo-terminal, against a quiet simulator. Textual's own input thread
woke ten times a second to look for keys (a third of a bare Textual clock's CPU on a small PC).
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

from lobby_display.simulator import SimulatorServer
from tests.helpers.terminal import TerminalProgram, assert_terminal_restored

PROGRAM = str(Path(sys.executable).with_name("lobby-display"))
#: What the status line says once every feed is live.
LIVE = b"Live"
#: Seconds the screen is watched while nobody types.
QUIET_SECONDS = 3.0


def wakeups(pid: int) -> dict[str, int]:
    """How many times each thread of `pid` has gone to sleep and woken so far."""
    counts = {}
    for thread in os.listdir(f"/proc/{pid}/task"):
        status = Path(f"/proc/{pid}/task/{thread}/status").read_text()
        line = next(line for line in status.splitlines() if line.startswith("voluntary_ctxt"))
        counts[thread] = int(line.split()[1])
    return counts


def test_the_screen_sleeps_while_nobody_types_and_still_quits_on_its_key(
    start_simulator: Callable[..., SimulatorServer], tmp_path: Path
) -> None:
    # A place whose own story is slowed down to nothing: no event wakes the screen.
    sim = start_simulator(speed=0.001, tickets=20)
    config = sim.write_config(tmp_path, locales=["en_US"])
    env = {**os.environ, "TEXTUAL_ANIMATIONS": "none"}
    program = TerminalProgram([PROGRAM, "run", "--config", str(config)], env, rows=45, columns=160)
    with program:
        program.wait_for(LIVE)
        time.sleep(1.5)  # the terminal's answers to the screen's questions are read
        assert program.process is not None
        before = wakeups(program.process.pid)
        time.sleep(QUIET_SECONDS)
        after = wakeups(program.process.pid)
        main = str(program.process.pid)
        woken = {
            thread: after[thread] - before.get(thread, 0) for thread in after if thread != main
        }
        # The screen's own thread wakes for its clock and its feeds; the others for a frame to
        # write or the state to save, now and then. Polling for keys woke one of them 30 times
        # in these 3 seconds.
        assert max(woken.values()) <= QUIET_SECONDS + 2, woken
        started = time.monotonic()
        program.write(b"\x11")  # ctrl+q
        run = program.wait(timeout=10)
        assert time.monotonic() - started < 3, "the key is read at once, and the screen leaves"
    assert run.returncode == 0
    assert_terminal_restored(run)
