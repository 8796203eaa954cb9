"""Hostile strings through the operations commands: `check`, `discover` and `screenshot` print
the service's text on the installer's terminal, and none of it may drive that terminal.

The simulator is hostile (`--hostile`): its names and labels carry markup, escape sequences,
bidi overrides, NUL and floods, and its short codes (the place's time zone and language, the
queues' and counters', each ticket's `lang`) carry OSC 52 (the clipboard), OSC 0 (the title), a
screen clear with a bell, OSC 8 links and C1 controls. For `screenshot`, the tickets feed also
sends every new connection an event whose `actionCategory` and `actionName` are hostile, so the
feed is never live and the command prints its error. Each command runs as the installer runs it,
and its output, as bytes, holds no ESC, no BEL and no C1 control.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from lobby_display.simulator import ServiceAccount, SimulatorServer
from lobby_display.updates import Feed

#: An event no client knows, with a hostile category and name (a link, a clear screen, a bell).
HOSTILE_EVENT = json.dumps(
    {
        "resource": "ticket",
        "actionCategory": "\x1b]8;;https://x\x1b\\UNHEARD\x1b]8;;\x1b\\",
        "actionName": "\x1b[2J\x1b[H\x07FROB\x9b2J",
        "data": {"meterId": "M1"},
    }
).encode()
#: What must never be in a command's output: ESC, BEL, and the C1 controls (as UTF-8).
CONTROLS = re.compile(rb"\x1b|\x07|\xc2[\x80-\x9f]")


@pytest.fixture
def hostile(account: ServiceAccount) -> Iterator[SimulatorServer]:
    """A hostile simulated place (names, labels and codes)."""
    with SimulatorServer(
        seed=4, speed=0.001, queues=3, tickets=12, heartbeat=0.5, hostile=True, account=account
    ) as sim:
        yield sim


def run(command: str, config: Path, *extra: str) -> tuple[int, bytes]:
    """`lobby-display COMMAND --config CONFIG ...` as an installer runs it: its exit status and
    everything it wrote (standard output then standard error), as bytes."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("LOBBY_DISPLAY_")}
    for name in ("CREDENTIALS_DIRECTORY", "STATE_DIRECTORY", "RUNTIME_DIRECTORY"):
        env.pop(name, None)
    env["TEXTUAL_ANIMATIONS"] = "none"
    done = subprocess.run(
        [sys.executable, "-m", "lobby_display", command, "--config", str(config), *extra],
        capture_output=True,
        env=env,
        timeout=90,
        check=False,
    )
    return done.returncode, done.stdout + done.stderr


def assert_no_controls(output: bytes, command: str) -> None:
    found = sorted({match.group() for match in CONTROLS.finditer(output)})
    assert not found, f"{command} wrote terminal controls {found}: {output[:2000]!r}"


def test_discover_prints_hostile_names_and_codes_as_plain_text(
    hostile: SimulatorServer, tmp_path: Path
) -> None:
    config = hostile.write_config(tmp_path, locales=["en_US"])
    code, output = run("discover", config)
    assert code == 0, output[-2000:]
    assert_no_controls(output, "discover")
    # The time zone is shown, cleaned: the text of the sequence is left, never the sequence.
    (zone,) = [line for line in output.decode().splitlines() if "time zone" in line]
    assert "Europe/Paris" in zone, zone


def test_check_prints_hostile_names_and_codes_as_plain_text(
    hostile: SimulatorServer, tmp_path: Path
) -> None:
    config = hostile.write_config(tmp_path, locales=["en_US"])
    code, output = run("check", config)
    assert b"place" in output and b"Europe/Paris" in output, output[-2000:]
    assert code in (0, 1)
    assert_no_controls(output, "check")


def test_screenshot_prints_a_feed_error_quoting_a_hostile_event_as_plain_text(
    hostile: SimulatorServer, tmp_path: Path
) -> None:
    hostile.call(lambda sim: sim.hub.after_first.__setitem__(Feed.TICKETS, HOSTILE_EVENT))
    config = hostile.write_config(tmp_path, locales=["en_US"])
    code, output = run("screenshot", config, "--output", str(tmp_path / "shot.svg"))
    assert code == 0, output[-2000:]
    assert_no_controls(output, "screenshot")
    # The feed's error is printed, with the event's words left as plain text.
    assert b"not live: tickets" in output and b"FROB" in output, output[-2000:]
