"""What `systemctl stop` and `systemctl reload` do to a running screen: real signals.

Each program is a subprocess that installs `process.install_signal_handlers` and says "ready"
once it has; the test then signals it and checks how it ends.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from lobby_display import terminal_loss
from tests.helpers.terminal import TerminalProgram, assert_terminal_restored

SRC = Path(__file__).resolve().parents[2] / "src"

# A small asyncio program: exits 0 via on_exit, counts reloads, runs until told to stop. What
# it says after "ready" goes to the file $RECORD when that is set (its terminal may be gone by
# then), else to standard output.
ASYNCIO_PROGRAM = textwrap.dedent(
    """
    import asyncio, os, sys
    from lobby_display.process import install_signal_handlers

    def say(what):
        if "RECORD" in os.environ:
            with open(os.environ["RECORD"], "a") as file:
                file.write(what + "\\n")
        else:
            print(what, flush=True)

    async def main():
        loop = asyncio.get_running_loop()
        stop = asyncio.Event()
        install_signal_handlers(loop, stop.set, lambda: say("reloaded"))
        print("ready", flush=True)
        await asyncio.wait_for(stop.wait(), 60)
        say("leaving cleanly")
        return 0

    sys.exit(asyncio.run(main()))
    """
)

# A tiny Textual app that wires the handlers the way the kiosk does when its screen is mounted
# (`take_signals` with the loop-independent exits of a screen on a terminal).
TEXTUAL_PROGRAM = textwrap.dedent(
    """
    from textual.app import App
    from textual.widgets import Static
    from lobby_display.process import take_signals

    class Board(App):
        def compose(self):
            yield Static("board ready")
        def on_mount(self):
            take_signals(self.exit, self.reload, terminal=True)
        def reload(self):
            self.query_one(Static).update("reloaded")

    Board().run()
    """
)


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NOTIFY_", "WATCHDOG_"))}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(SRC), env.get("PYTHONPATH", "")]))
    env["TEXTUAL_ANIMATIONS"] = "none"
    env.update(extra)
    return env


def _start(program: str, **env: str) -> subprocess.Popen[str]:
    process = subprocess.Popen(
        [sys.executable, "-c", program],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_env(**env),
    )
    assert process.stdout is not None
    assert process.stdout.readline().strip() == "ready", process.stderr
    return process


@pytest.mark.parametrize("number", [signal.SIGTERM, signal.SIGINT])
def test_stop_signal_ends_the_program_with_exit_code_0(number: signal.Signals) -> None:
    process = _start(ASYNCIO_PROGRAM)
    process.send_signal(number)
    out, err = process.communicate(timeout=30)
    assert process.returncode == 0, err
    assert "leaving cleanly" in out


def test_sighup_reloads_and_the_program_keeps_running() -> None:
    process = _start(ASYNCIO_PROGRAM)
    assert process.stdout is not None
    process.send_signal(signal.SIGHUP)
    assert process.stdout.readline().strip() == "reloaded"
    process.send_signal(signal.SIGHUP)
    assert process.stdout.readline().strip() == "reloaded"
    assert process.poll() is None
    process.send_signal(signal.SIGTERM)
    process.communicate(timeout=30)
    assert process.returncode == 0


def test_the_pid_file_lets_reload_find_the_program(tmp_path: Path) -> None:
    """The kiosk unit's ExecReload signals the PID in $RUNTIME_DIRECTORY/app.pid (not cage's)."""
    process = _start(ASYNCIO_PROGRAM, RUNTIME_DIRECTORY=str(tmp_path))
    assert process.stdout is not None
    pid_file = tmp_path / "app.pid"
    assert pid_file.read_text().strip() == str(process.pid)
    # The same command line as ExecReload=, with the unit's `$$` unescaped.
    subprocess.run(
        ["/bin/sh", "-c", 'kill -HUP "$(cat "$RUNTIME_DIRECTORY/app.pid")"'],
        env={"RUNTIME_DIRECTORY": str(tmp_path), "PATH": os.environ.get("PATH", "/usr/bin:/bin")},
        check=True,
    )
    assert process.stdout.readline().strip() == "reloaded"
    process.send_signal(signal.SIGTERM)
    process.communicate(timeout=30)
    assert process.returncode == 0


def test_textual_app_stopped_by_sigterm_restores_the_terminal() -> None:
    with TerminalProgram([sys.executable, "-c", TEXTUAL_PROGRAM], env=_env()) as program:
        program.wait_for(b"board ready")
        program.send_signal(signal.SIGTERM)
        run = program.wait()
    assert_terminal_restored(run)


def test_textual_app_reloads_on_sighup_and_still_stops_cleanly() -> None:
    with TerminalProgram([sys.executable, "-c", TEXTUAL_PROGRAM], env=_env()) as program:
        program.wait_for(b"board ready")
        program.send_signal(signal.SIGHUP)
        program.wait_for(b"reloaded")
        program.send_signal(signal.SIGTERM)
        run = program.wait()
    assert_terminal_restored(run)


def test_sighup_from_a_lost_terminal_ends_the_program_instead_of_reloading(
    tmp_path: Path,
) -> None:
    """foot dying hangs up the app's terminal: that SIGHUP must end the app, not reload it."""
    record = tmp_path / "handlers"
    env = _env(RECORD=str(record))
    with TerminalProgram([sys.executable, "-c", ASYNCIO_PROGRAM], env=env) as program:
        program.wait_for(b"ready")
        program.hang_up()
        run = program.wait()
    assert record.read_text().splitlines() == ["leaving cleanly"]
    # Nothing can be restored on a terminal that no longer exists; the exit must be clean.
    assert run.returncode == 0


def test_textual_app_leaves_when_its_terminal_goes_away() -> None:
    """Wired as the kiosk is, the app ends once foot is gone: cleanly, or by the guard when
    Textual's writer died with the terminal and the clean exit is stuck behind it."""
    with TerminalProgram([sys.executable, "-c", TEXTUAL_PROGRAM], env=_env()) as program:
        program.wait_for(b"board ready")
        program.hang_up()
        run = program.wait(timeout=terminal_loss.HANGUP_GRACE_SECONDS + 15)
    assert run.returncode in (0, terminal_loss.HANGUP_EXIT)


def test_without_the_handlers_sigterm_leaves_the_terminal_raw() -> None:
    """The reason for all this (FIELD-NOTES): Textual alone dies on SIGTERM in raw mode."""
    bare = TEXTUAL_PROGRAM.replace("take_signals(self.exit, self.reload, terminal=True)", "pass")
    with TerminalProgram([sys.executable, "-c", bare], env=_env()) as program:
        program.wait_for(b"board ready")
        program.send_signal(signal.SIGTERM)
        run = program.wait()
    assert run.returncode == -signal.SIGTERM
    assert run.attributes_after != run.attributes_before, "expected the terminal left in raw mode"
