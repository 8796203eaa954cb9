"""The real `lobby-display run`, wired as systemd runs it: what a stand-in cannot prove.

The program on a pseudo-terminal against the simulator, with a real sd_notify socket:

- `lobby-display screenshot` asks it for its own screen: its SIGUSR1 handler (kiosk.py) writes
  what it shows, and it keeps running;
- SIGHUP (`systemctl reload`) applies the file's new `[display]` settings to the running screen
  (a 12-hour clock instead of a 24-hour one) and keeps its board: same process, feeds still
  live, no second start;
- the watchdog: with `WATCHDOG_USEC` set, the app itself pings `WATCHDOG=1` again and again;
- `NO_COLOR`: the screen is drawn in greys only (and in colours without it).
"""

from __future__ import annotations

import html
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from lobby_display.process import PID_FILE_NAME
from lobby_display.simulator import SimulatorServer
from lobby_display.simulator.names import PLACE, SERVICES
from tests.helpers.terminal import TerminalProgram

PROGRAM = str(Path(sys.executable).with_name("lobby-display"))
PLACE_NAME = PLACE["en_US"]
QUEUE_NAMES = [service.names["en_US"] for service in SERVICES]
#: A 12-hour clock's time ("3:07 PM", CLDR puts a narrow no-break space before the period).
TWELVE_HOUR = re.compile(r"\b\d{1,2}:\d\d[\s\u202f\xa0]?[AP]M\b")
#: A 24-hour clock's time, as the header shows it.
TWENTY_FOUR_HOUR = re.compile(r"\b\d{1,2}:\d\d\b")


@pytest.fixture
def notify(tmp_path: Path) -> Iterator[socket.socket]:
    """The datagram socket systemd would listen on for sd_notify messages."""
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    listener.bind(str(tmp_path / "notify"))
    listener.settimeout(0.2)
    yield listener
    listener.close()


def received(
    listener: socket.socket, done: Callable[[list[str]], bool], timeout: float = 60
) -> list[str]:
    """Notifications, in order, until `done(all so far)` holds (a generous bound, then fail)."""
    messages: list[str] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            messages.append(listener.recv(4096).decode())
        except TimeoutError:
            continue
        if done(messages):
            return messages
    raise AssertionError(f"never came; got {messages!r}")


def said(messages: list[str], line: str) -> int:
    """How many of `messages` hold `line` (sd_notify messages are newline-separated)."""
    return sum(line in message.split("\n") for message in messages)


def environment(tmp_path: Path, notify: socket.socket, **extra: str) -> dict[str, str]:
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("LOBBY_DISPLAY_", "WATCHDOG_"))
        and key not in ("RUNTIME_DIRECTORY", "STATE_DIRECTORY", "CREDENTIALS_DIRECTORY")
    }
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700, exist_ok=True)
    env.update(
        NOTIFY_SOCKET=str(notify.getsockname()),
        RUNTIME_DIRECTORY=str(runtime),
        TEXTUAL_ANIMATIONS="none",
        **extra,
    )
    return env


def write_config(sim: SimulatorServer, tmp_path: Path, **display: Any) -> Path:
    return sim.write_config(
        tmp_path,
        locales=["en_US"],
        state={"directory": str(tmp_path / "state")},
        log={"file": str(tmp_path / "display.log")},
        display={"clock": "24h", **display},
    )


def screenshot(config: Path, env: dict[str, str], output: Path) -> str:
    """`lobby-display screenshot` as an operator runs it; returns the SVG's text (and checks
    that the running display answered, not a screen rendered by the command)."""
    done = subprocess.run(
        [PROGRAM, "screenshot", "--config", str(config), "--output", str(output)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    pid = (Path(env["RUNTIME_DIRECTORY"]) / PID_FILE_NAME).read_text().strip()
    assert f"from the running display (PID {pid})" in done.stdout, done.stdout + done.stderr
    return html.unescape(output.read_text(encoding="utf-8")).replace("\xa0", " ")


def shown_live(config: Path, env: dict[str, str], output: Path, timeout: float = 60) -> str:
    """Screenshots of the running display until it shows the place, a queue and "Live"."""
    deadline = time.monotonic() + timeout
    while True:
        text = screenshot(config, env, output)
        if PLACE_NAME in text and "Live" in text and any(n in text for n in QUEUE_NAMES):
            return text
        assert time.monotonic() < deadline, f"the display never showed a live board: {text}"
        time.sleep(0.5)


def test_screenshot_asks_the_running_display_for_its_own_screen(
    start_simulator: Callable[..., SimulatorServer], tmp_path: Path, notify: socket.socket
) -> None:
    sim = start_simulator()
    config = write_config(sim, tmp_path)
    env = environment(tmp_path, notify)
    command = [PROGRAM, "run", "--config", str(config)]
    with TerminalProgram(command, env, rows=45, columns=160) as program:
        received(notify, lambda messages: said(messages, "READY=1") > 0)
        program.wait_for(PLACE_NAME.encode(), 60)
        pid = int((tmp_path / "run" / PID_FILE_NAME).read_text())
        assert program.process is not None and pid == program.process.pid, (
            "the PID file names the display itself"
        )
        text = shown_live(config, env, tmp_path / "now.svg")
        assert text.startswith("<svg")
        assert program.process is not None and program.process.poll() is None, (
            "the display keeps running after the screenshot"
        )
        program.send_signal(signal.SIGTERM)
        assert program.wait(60).returncode == 0


def test_sighup_applies_new_settings_to_the_running_board(
    start_simulator: Callable[..., SimulatorServer], tmp_path: Path, notify: socket.socket
) -> None:
    sim = start_simulator()
    config = write_config(sim, tmp_path, clock="24h")
    env = environment(tmp_path, notify)
    command = [PROGRAM, "run", "--config", str(config)]
    with TerminalProgram(command, env, rows=45, columns=160) as program:
        received(notify, lambda messages: said(messages, "READY=1") > 0)
        before = shown_live(config, env, tmp_path / "before.svg")
        assert TWENTY_FOUR_HOUR.search(before) and not TWELVE_HOUR.search(before), before

        write_config(sim, tmp_path, clock="12h")
        program.send_signal(signal.SIGHUP)
        messages = received(notify, lambda messages: said(messages, "READY=1") > 0)
        assert any(message.startswith("RELOADING=1") for message in messages), messages

        deadline = time.monotonic() + 60
        while not TWELVE_HOUR.search(after := screenshot(config, env, tmp_path / "after.svg")):
            assert time.monotonic() < deadline, f"the clock never turned 12-hour: {after}"
            time.sleep(0.5)
        # The same board, still live: the reload touched the screen, not the feeds.
        assert PLACE_NAME in after and "Live" in after, after
        assert any(name in after for name in QUEUE_NAMES), after
        assert program.process is not None and program.process.poll() is None
        assert int((tmp_path / "run" / PID_FILE_NAME).read_text()) == program.process.pid
        program.send_signal(signal.SIGTERM)
        assert program.wait(60).returncode == 0
    log = (tmp_path / "display.log").read_text()
    assert "Traceback" not in log
    assert "restarting the feeds" not in log
    assert "restart the display" not in log, "only [display] changed"


def test_the_running_app_pings_the_watchdog(
    start_simulator: Callable[..., SimulatorServer], tmp_path: Path, notify: socket.socket
) -> None:
    sim = start_simulator()
    config = write_config(sim, tmp_path)
    # systemd's WatchdogSec=2: the app pings every second (half of it, sd_watchdog_enabled(3)).
    env = environment(tmp_path, notify, WATCHDOG_USEC="2000000")
    with TerminalProgram([PROGRAM, "run", "--config", str(config)], env, rows=45, columns=160) as (
        program
    ):
        # Three pings, each from a tick of the UI's own loop, and the screen said it is up.
        messages = received(
            notify,
            lambda messages: said(messages, "WATCHDOG=1") >= 3 and said(messages, "READY=1") > 0,
        )
        assert said(messages, "READY=1") == 1
        program.send_signal(signal.SIGTERM)
        assert program.wait(60).returncode == 0


#: The greys of the 16-colour SGR codes (black, white, bright black, bright white, as text and
#: background) and of the 256-colour palette (0, 7, 8, 15, the cube's diagonal, the ramp).
GREYS = {(code,) for code in (30, 37, 40, 47, 90, 97, 100, 107)} | {
    (index,) for index in (0, 7, 8, 15, 16, 59, 102, 145, 188, 231, *range(232, 256))
}
#: An SGR sequence (colours and attributes), its parameters captured.
SGR = re.compile(rb"\x1b\[([0-9;:]*)m")


def colours(output: bytes) -> set[tuple[int, ...]]:
    """Every colour the output sets: (r, g, b) for 24-bit ones, (n,) for 256- or 16-colour ones."""
    found: set[tuple[int, ...]] = set()
    for match in SGR.finditer(output):
        numbers = [int(part or 0) for part in re.split(rb"[;:]", match.group(1))]
        index = 0
        while index < len(numbers):
            code = numbers[index]
            if code in (38, 48, 58) and numbers[index + 1 : index + 2] == [2]:
                found.add(tuple(numbers[index + 2 : index + 5]))
                index += 5
            elif code in (38, 48, 58) and numbers[index + 1 : index + 2] == [5]:
                found.add((numbers[index + 2],))
                index += 3
            else:
                if 30 <= code <= 37 or 40 <= code <= 47 or 90 <= code <= 97 or 100 <= code <= 107:
                    found.add((code,))
                index += 1
    return found


@pytest.mark.parametrize("no_color", [False, True], ids=["colours", "NO_COLOR"])
def test_no_color_turns_the_screen_grey(
    start_simulator: Callable[..., SimulatorServer],
    tmp_path: Path,
    notify: socket.socket,
    no_color: bool,
) -> None:
    """README: NO_COLOR is honoured; the board is then drawn in shades of grey only."""
    sim = start_simulator()
    config = write_config(sim, tmp_path)
    env = environment(tmp_path, notify, **({"NO_COLOR": "1"} if no_color else {}))
    if not no_color:
        env.pop("NO_COLOR", None)
    with TerminalProgram([PROGRAM, "run", "--config", str(config)], env, rows=45, columns=160) as (
        program
    ):
        program.wait_for(PLACE_NAME.encode(), 60)
        program.wait_for(b"Live", 60)
        program.send_signal(signal.SIGTERM)
        run = program.wait(60)
    assert run.returncode == 0
    tinted = {
        colour
        for colour in colours(run.output)
        if (len(colour) == 1 and colour not in GREYS) or (len(colour) == 3 and len(set(colour)) > 1)
    }
    if no_color:
        assert not tinted, f"colours on a NO_COLOR screen: {sorted(tinted)[:10]}"
    else:
        assert tinted, "the board has its colours without NO_COLOR (the check above can fail)"
