"""When the terminal goes away or stops taking output, `lobby-display demo` still ends: within
5 s of the terminal closing (with or without a SIGHUP), within 10 s of SIGTERM even while its
screen is stuck writing to a terminal that reads nothing.

The demo runs on a real pseudo-terminal (`helpers.terminal`) or in tmux, as a person runs it.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from tests.helpers.needs import needs
from tests.helpers.terminal import TerminalProgram, assert_terminal_restored
from tests.helpers.tmux import screen as screen_of
from tests.helpers.tmux import start_session, tmux

pytestmark = pytest.mark.e2e

PROGRAM = str(Path(sys.executable).with_name("lobby-display"))
DEMO = [PROGRAM, "demo", "--locales", "en_US", "--speed", "4"]
#: How long the demo may take to draw its first board.
START_SECONDS = 60.0
#: A closed terminal must end the demo within this.
HANGUP_BOUND = 5.0
#: SIGTERM must end the demo within this, whatever its screen is doing.
STOP_BOUND = 10.0
#: Kernel wait channels of a thread blocked writing to a full terminal.
_TTY_WRITE_WAITS = ("wait_woken", "n_tty_write")


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NOTIFY_", "WATCHDOG_"))}
    env.update(TERM="xterm-256color", TEXTUAL_ANIMATIONS="none")
    return env


def _gone_within(process: subprocess.Popen[bytes], seconds: float) -> float:
    """Seconds the process took to end; fails (and kills it) when it outlives `seconds`."""
    started = time.monotonic()
    try:
        process.wait(seconds)
    except subprocess.TimeoutExpired:
        busy = _busy_threads(process.pid)
        process.kill()
        process.wait()
        pytest.fail(f"still running {seconds:g} s later (threads using the CPU: {busy})")
    return time.monotonic() - started


def _busy_threads(pid: int) -> list[str]:
    """Threads of `pid` that used more than a third of a core over half a second."""

    def ticks() -> dict[str, int]:
        found = {}
        for tid in os.listdir(f"/proc/{pid}/task"):
            fields = Path(f"/proc/{pid}/task/{tid}/stat").read_text().rsplit(")", 1)[1].split()
            found[tid] = int(fields[11]) + int(fields[12])
        return found

    try:
        before = ticks()
        time.sleep(0.5)
        after = ticks()
    except OSError:
        return []
    hertz = os.sysconf("SC_CLK_TCK")
    return [tid for tid, used in after.items() if used - before.get(tid, used) > hertz / 6]


def _writer_blocked(pid: int) -> bool:
    """True when a thread of `pid` waits to write to its terminal."""
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            if Path(f"/proc/{pid}/task/{tid}/wchan").read_text() in _TTY_WRITE_WAITS:
                return True
        except OSError:
            continue
    return False


def test_demo_ends_when_its_terminal_closes_without_sending_sighup() -> None:
    """A demo started apart from its terminal (nohup, setsid) gets no SIGHUP when the terminal
    closes: it must notice the dead terminal itself instead of spinning on it."""
    with TerminalProgram(DEMO, env=_env(), rows=45, columns=160, controlling=False) as program:
        program.wait_for(b"Recent", START_SECONDS)
        assert program.process is not None
        program.hang_up()
        _gone_within(program.process, HANGUP_BOUND)


def test_demo_ends_on_sigterm_while_its_terminal_takes_no_output() -> None:
    """A frozen terminal blocks the screen's writes; `systemctl stop` must still end it."""
    with TerminalProgram(DEMO, env=_env(), rows=45, columns=160) as program:
        program.wait_for(b"Recent", START_SECONDS)
        assert program.process is not None
        program.stop_reading()
        deadline = time.monotonic() + 20
        while not _writer_blocked(program.process.pid) and time.monotonic() < deadline:
            time.sleep(0.2)
        time.sleep(2)  # the writer's queue fills up behind it, and the screen's loop waits on it
        program.send_signal(signal.SIGTERM)
        _gone_within(program.process, STOP_BOUND)
        assert program.process.returncode in (0, 128 + signal.SIGTERM)


def test_demo_still_stops_cleanly_on_sigterm() -> None:
    """The stop that does not depend on the screen's loop leaves the normal one intact: exit
    code 0 and the terminal restored."""
    with TerminalProgram(DEMO, env=_env(), rows=45, columns=160) as program:
        program.wait_for(b"Recent", START_SECONDS)
        program.send_signal(signal.SIGTERM)
        run = program.wait(STOP_BOUND)
    assert_terminal_restored(run)


@needs("tmux", "tmux")
def test_demo_ends_when_its_tmux_session_is_killed() -> None:
    marker = uuid.uuid4().hex[:8]
    # The marker (an unused environment variable) finds this demo's process among others.
    command = f"LOBBY_E2E_MARKER={marker} {' '.join(DEMO)}"
    session = start_session("lobby-lost", command, _env())
    try:
        deadline = time.monotonic() + START_SECONDS
        while True:
            screen = screen_of(session, check=False)
            if "Recent calls" in screen:
                break
            assert time.monotonic() < deadline, f"the demo did not come up:\n{screen}"
            time.sleep(0.5)
        pid = _pid_with_marker(marker)
    finally:
        tmux(session, "kill-session", "-t", session, check=False)
    started = time.monotonic()
    while Path(f"/proc/{pid}").exists() and _is_zombie(pid) is False:
        if time.monotonic() - started > HANGUP_BOUND:
            busy = _busy_threads(pid)
            os.kill(pid, signal.SIGKILL)
            pytest.fail(f"still running {HANGUP_BOUND:g} s later (busy threads: {busy})")
        time.sleep(0.1)


def _pid_with_marker(marker: str) -> int:
    wanted = f"LOBBY_E2E_MARKER={marker}".encode()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            environ = Path(f"/proc/{entry}/environ").read_bytes().split(b"\0")
            command = Path(f"/proc/{entry}/cmdline").read_bytes()
        except OSError:
            continue
        if wanted in environ and b"demo" in command:
            return int(entry)
    raise AssertionError("the demo's process was not found")


def _is_zombie(pid: int) -> bool | None:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return None
