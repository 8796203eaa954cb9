"""`lobby-display run` as systemd runs it: ready before the network, clean stop, no blank restart.

The real program on a pseudo-terminal, against the simulator, with a real sd_notify socket.
"""

from __future__ import annotations

import os
import signal
import socket
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from lobby_display.simulator import SimulatorServer
from lobby_display.simulator.names import PLACE, SERVICES
from tests.helpers.terminal import TerminalProgram, assert_terminal_restored

PROGRAM = str(Path(sys.executable).with_name("lobby-display"))
PLACE_NAME = PLACE["en_US"].encode()
QUEUE_NAMES = [service.names["en_US"].encode() for service in SERVICES]


@pytest.fixture
def notify_socket(tmp_path: Path) -> Iterator[socket.socket]:
    """The datagram socket systemd would listen on for sd_notify messages."""
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    listener.bind(str(tmp_path / "notify"))
    listener.settimeout(0.2)
    yield listener
    listener.close()


def received(listener: socket.socket, wanted: bytes, timeout: float = 30) -> list[bytes]:
    """Read notifications until one contains `wanted`; all of them, in order."""
    messages: list[bytes] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            messages.append(listener.recv(4096))
        except TimeoutError:
            continue
        if wanted in messages[-1]:
            return messages
    raise AssertionError(f"{wanted!r} never came; got {messages!r}")


def kiosk(config: Path, notify: socket.socket) -> TerminalProgram:
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in ("RUNTIME_DIRECTORY", "STATE_DIRECTORY", "CREDENTIALS_DIRECTORY")
    }
    env.update(NOTIFY_SOCKET=str(notify.getsockname()), TEXTUAL_ANIMATIONS="none")
    return TerminalProgram([PROGRAM, "run", "--config", str(config)], env, rows=45, columns=160)


def wait_for_any(program: TerminalProgram, markers: list[bytes], timeout: float = 30) -> bytes:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        output = program.output
        for marker in markers:
            if marker in output:
                return marker
        time.sleep(0.1)
    raise AssertionError(f"none of {markers!r} appeared; output ended {program.output[-1500:]!r}")


def test_stop_and_restart_without_a_blank_screen(
    start_simulator: Callable[..., SimulatorServer],
    tmp_path: Path,
    notify_socket: socket.socket,
) -> None:
    sim = start_simulator()
    config = sim.write_config(
        tmp_path,
        locales=["en_US"],
        state={"directory": str(tmp_path / "state")},
        log={"file": str(tmp_path / "display.log")},
    )
    with kiosk(config, notify_socket) as program:
        assert any(b"READY=1" in m for m in received(notify_socket, b"READY=1"))
        program.wait_for(PLACE_NAME)
        wait_for_any(program, QUEUE_NAMES)
        program.wait_for(b"Live")
        program.send_signal(signal.SIGTERM)
        run = program.wait()
    assert_terminal_restored(run)
    assert any(b"STOPPING=1" in m for m in received(notify_socket, b"STOPPING=1", 5))
    assert (tmp_path / "state" / "board.json").is_file()

    # The service is gone when the display comes back: it shows the last board, out of date,
    # and says it is connecting, instead of a blank screen.
    sim.stop()
    with kiosk(config, notify_socket) as program:
        received(notify_socket, b"READY=1")
        program.wait_for(PLACE_NAME)
        wait_for_any(program, QUEUE_NAMES)
        program.wait_for(b"Out of date")
        program.send_signal(signal.SIGTERM)
        run = program.wait()
    assert_terminal_restored(run)
    log = (tmp_path / "display.log").read_text()
    assert "showing the board saved at" in log
    assert "Traceback" not in log
