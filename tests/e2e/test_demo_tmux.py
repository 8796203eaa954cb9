"""End to end: `lobby-display demo` in a real terminal (tmux) shows called tickets and queues."""

from __future__ import annotations

import os
import re
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from lobby_display.simulator.names import PLACE, SERVICES
from tests.helpers.needs import needs
from tests.helpers.tmux import screen as screen_of
from tests.helpers.tmux import start_session, tmux

pytestmark = [
    pytest.mark.e2e,
    needs("tmux", "tmux"),
]

#: How long the demo may take to show a call (start-up, first snapshot, first call).
BOUND_SECONDS = 45.0
#: A ticket label as the recent-calls list prints it, followed by its counter.
LABEL = re.compile(r"\b([A-Z]{1,2}-?\d{3})\b\s+(Desk|Office|Room|Window)\b")


@pytest.fixture
def demo_session(tmp_path: Path) -> Iterator[str]:
    """A tmux session of 160x45 running the demo in English; killed after the test."""
    program = Path(sys.executable).with_name("lobby-display")
    command = f"{program} demo --locales en_US --speed 4; sleep 60"
    env = {**os.environ, "TERM": "xterm-256color", "TEXTUAL_ANIMATIONS": "none"}
    session = start_session("lobby-e2e", command, env)
    try:
        yield session
    finally:
        tmux(session, "kill-server", check=False)


def test_demo_shows_a_called_ticket_and_the_queues(demo_session: str) -> None:
    queue_names = [service.names["en_US"] for service in SERVICES]
    deadline = time.monotonic() + BOUND_SECONDS
    screen = ""
    while time.monotonic() < deadline:
        screen = screen_of(demo_session)
        called = LABEL.search(screen)
        queues = [name for name in queue_names if name in screen]
        if called and queues and PLACE["en_US"] in screen:
            break
        time.sleep(0.5)
    else:
        pytest.fail(f"no called ticket and queue name within {BOUND_SECONDS:.0f} s:\n{screen}")
    assert "Traceback" not in screen
    assert "Now calling" in screen
    assert "Recent calls" in screen
    assert "Demonstration" in screen


@pytest.mark.parametrize("key", ["C-c", "C-q"])
def test_ctrl_c_or_the_quit_chord_ends_the_demo_and_restores_the_terminal(
    demo_session: str, key: str
) -> None:
    """The demo quits like any terminal program (Ctrl-C, which its status line shows) and with
    the kiosk's chord; the kiosk itself keeps its single chord (`test_screen_kiosk.py`)."""
    deadline = time.monotonic() + BOUND_SECONDS
    while "Now calling" not in (screen := screen_of(demo_session)):
        assert time.monotonic() < deadline, "the demo did not come up"
        time.sleep(0.5)
    assert "Ctrl+C to quit" in screen
    tmux(demo_session, "send-keys", "-t", demo_session, key)
    deadline = time.monotonic() + 15
    while "Now calling" in (screen := screen_of(demo_session)):
        assert time.monotonic() < deadline, f"{key} did not quit:\n{screen}"
        time.sleep(0.3)
    assert "Traceback" not in screen
