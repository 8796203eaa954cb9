"""`terminal_loss.guard` on its own: a program whose event loop is stuck for good (as the screen's
is in Textual's full writer queue) still ends on SIGTERM and when its terminal closes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from lobby_display.terminal_loss import HANGUP_EXIT, HANGUP_GRACE_SECONDS, STOP_GRACE_SECONDS
from tests.helpers.terminal import TerminalProgram

SRC = Path(__file__).resolve().parents[2] / "src"

#: The loop's handlers as the app installs them, the guard, then a loop stuck in a full queue.
STUCK = textwrap.dedent(
    """
    import asyncio, queue, sys
    from lobby_display import terminal_loss
    from lobby_display.process import install_signal_handlers

    async def main():
        loop = asyncio.get_running_loop()
        install_signal_handlers(loop, lambda: print("loop handler ran", flush=True))
        terminal_loss.guard(lambda: None, call_soon=loop.call_soon_threadsafe)
        full = queue.Queue(1)
        full.put("frame")
        print("stuck", flush=True)
        full.put("next frame")  # blocks the loop for good, as Textual's writer queue does

    asyncio.run(main())
    """
)


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NOTIFY_", "WATCHDOG_"))}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(SRC), env.get("PYTHONPATH", "")]))
    return env


def test_sigterm_ends_a_program_whose_loop_is_stuck() -> None:
    program = subprocess.Popen(
        [sys.executable, "-c", STUCK], stdout=subprocess.PIPE, text=True, env=_env()
    )
    try:
        assert program.stdout is not None and program.stdout.readline().strip() == "stuck"
        started = time.monotonic()
        program.send_signal(signal.SIGTERM)
        code = program.wait(STOP_GRACE_SECONDS + 3)
    finally:
        if program.poll() is None:
            program.kill()
            program.wait()
    assert code == 128 + signal.SIGTERM
    assert time.monotonic() - started >= STOP_GRACE_SECONDS - 0.5  # a clean exit had its chance


def test_a_closed_terminal_ends_a_program_whose_loop_is_stuck() -> None:
    # Not its controlling terminal: no SIGHUP comes, only the hang-up of the descriptors.
    with TerminalProgram([sys.executable, "-c", STUCK], env=_env(), controlling=False) as program:
        program.wait_for(b"stuck", 30)
        assert program.process is not None
        program.hang_up()
        # Within 5 s of the hang-up (the bound): a wait that times out fails the test.
        code = program.process.wait(HANGUP_GRACE_SECONDS + 3)
    assert code == HANGUP_EXIT
