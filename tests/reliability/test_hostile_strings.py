"""Hostile strings through the whole pipeline, to the bytes written to a real terminal.

`lobby-display run` draws on a pseudo-terminal against a simulator whose names and labels are
hostile from the start (markup, ANSI and OSC sequences, bidi overrides, NUL, 100 KB names,
combining floods, line breaks of every kind: the first page of tickets alone is over 1 MB),
and is sent calls whose labels are a corpus of its own, one of them with bytes that are not
UTF-8, then an event whose category and name are hostile (the feed's error quotes them in the
log file, which must hold no ESC, BEL or C1 control either). Every label
must be drawn literally, and no byte written to the terminal may be anything but what Textual
itself writes: the hostile sequences (`ESC ] 0;pwned`, `ESC [2J`, C1 controls, hyperlinks)
never appear.
"""

from __future__ import annotations

import json
import os
import re
import signal
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from lobby_display.simulator import Feed, ServiceAccount, SimulatorServer
from tests.helpers.terminal import TerminalProgram, assert_terminal_restored

#: Labels sent as calls, and what the screen must show of each (literally).
CORPUS: list[tuple[str, bytes]] = [
    ("[bold]HB01", b"[bold]HB01"),
    ("[link='https://x']HB02", b"[link='https://x']HB02"),
    ("\x1b]0;pwned\x07HB03", b"]0;pwnedHB03"),
    ("\x1b[2JHB04", b"[2JHB04"),
    ("HB05\x1b[", b"HB05["),
    ("\u202eHB06\u202c", b"HB06"),
    ("HB07\x00\x00", b"HB07"),
    ("\x9b31mHB08", b"31mHB08"),
    ("HB09\u200b\u2066x", b"HB09x"),
    ("HB10" + "W" * 100 * 1024, b"HB10WWWW"),
]
#: An event no client knows, with a hostile category and name (a link, a clear screen, a bell).
HOSTILE_EVENT = json.dumps(
    {
        "resource": "ticket",
        "actionCategory": "\x1b]8;;https://x\x1b\\UNHEARD\x1b]8;;\x1b\\",
        "actionName": "\x1b[2J\x1b[H\x07FROB\x9b2J",
        "data": {"meterId": "M1"},
    }
).encode()
#: What a log line must never hold: ESC, BEL, a C1 control (as UTF-8).
LOG_CONTROLS = re.compile(rb"\x1b|\x07|\xc2[\x80-\x9f]")
#: A label whose bytes in the stream are not UTF-8.
INVALID_UTF8 = (b"\xff\xfe\xc3HB11", b"HB11")

#: The escape sequences Textual 8.2.8 writes: SGR colours, cursor moves, its DEC private modes
#: (alternate screen, cursor, focus, paste, sync output; mouse modes only turned off: see
#: FORBIDDEN), the kitty keyboard protocol,
#: mode queries, and the pointer-shape OSC 22; and the display's own two questions before the
#: screen starts (DA1, and the cell size where the pty does not give it: graphics.terminal).
ALLOWED_ESCAPES = re.compile(
    rb"\x1b\[c|\x1b\[16t|"
    rb"\x1b\[[0-9;:]*m"
    rb"|\x1b\[\d+;\d+H"
    rb"|\x1b\[\?\d+[hl]"
    rb"|\x1b\[[<>=]\d*u"
    rb"|\x1b\[\?\d+\$p"
    rb"|\x1b\]22;[a-z-]+\x07"
)
#: Every escape sequence (or lone ESC) in the output.
ANY_ESCAPE = re.compile(rb"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[^\[\]])?")
#: What must never reach the terminal, whatever the context.
FORBIDDEN = {
    b"\x1b]0;": "an OSC window title",
    b"\x1b]8;": "an OSC 8 hyperlink",
    b"\x1b[2J": "a clear-screen",
    b"pwned\x07": "the hostile OSC's BEL",
    b"\x00": "a NUL",
    "\u202e".encode(): "a bidi override",
    "\u2066".encode(): "a bidi isolate",
    b"\xc2\x9b": "a C1 CSI",
    # The mouse is off (README): no mouse tracking, in any of its modes or encodings.
    b"\x1b[?1000h": "mouse tracking (clicks)",
    b"\x1b[?1001h": "mouse tracking (highlight)",
    b"\x1b[?1002h": "mouse tracking (drags)",
    b"\x1b[?1003h": "mouse tracking (every motion)",
    b"\x1b[?1005h": "mouse tracking (UTF-8 coordinates)",
    b"\x1b[?1006h": "mouse tracking (SGR coordinates)",
    b"\x1b[?1015h": "mouse tracking (urxvt coordinates)",
    b"\x1b[?1016h": "mouse tracking (pixel coordinates)",
}


def ticket_event(record: dict[str, Any], ticket_id: str, label: str) -> bytes:
    """A call of a new ticket, as the simulator's events look, with `label`."""
    data = {**record, "ticketId": ticket_id, "label": label, "state": 200, "recalledCount": 0}
    envelope = {
        "resource": "ticket",
        "actionCategory": "TICKET",
        "actionName": "UPDATE",
        "data": data,
    }
    return json.dumps(envelope, separators=(",", ":"), ensure_ascii=False).encode()


def call_template(sim: SimulatorServer) -> dict[str, Any]:
    """A ticket record of the place, called now."""

    def make(simulator: Any) -> dict[str, Any]:
        place = simulator.place
        ticket = next(iter(place.tickets.values()))
        record: dict[str, Any] = place.records.ticket(ticket)
        record["timeline"] = {**record["timeline"], "calledAt": place.records.moment(place.elapsed)}
        return record

    return sim.call(make)


def publish(sim: SimulatorServer, data: bytes) -> None:
    sim.call(lambda simulator: simulator.hub.publish_raw(Feed.TICKETS, data))


@pytest.fixture
def hostile_place(account: ServiceAccount) -> Any:
    with SimulatorServer(
        seed=4, speed=0.001, queues=5, tickets=40, heartbeat=0.5, hostile=True, account=account
    ) as sim:
        yield sim


def test_hostile_names_and_labels_are_drawn_literally_and_no_escape_reaches_the_terminal(
    hostile_place: SimulatorServer, tmp_path: Path
) -> None:
    sim = hostile_place
    config = sim.write_config(tmp_path, locales=["en_US"], log={"file": str(tmp_path / "log")})
    env = {**os.environ, "TEXTUAL_ANIMATIONS": "none", "TERM": "xterm-256color"}
    argv = [sys.executable, "-m", "lobby_display", "run", "--config", str(config)]
    with TerminalProgram(argv, env=env, rows=50, columns=160) as screen:
        screen.wait_for(b"Live", timeout=60)
        sim.burst(200, count=60)
        sim.wait_burst(30)
        # The place's own hostile names and labels are drawn, literally.
        screen.wait_for(b"[bold red]", timeout=30)
        screen.wait_for(b"[link='https://x']", timeout=30)
        template = call_template(sim)
        for number, (label, shown) in enumerate(CORPUS):
            publish(sim, ticket_event(template, f"hostile-{number}", label))
            screen.wait_for(shown, timeout=15)
        bad, shown = INVALID_UTF8
        placeholder = "@@NOT-UTF-8@@"
        event = ticket_event(template, "hostile-bytes", placeholder)
        publish(sim, event.replace(placeholder.encode(), bad))
        screen.wait_for(shown, timeout=15)
        # An event no client knows, whose category and name are hostile: the feed's error
        # quotes them in the log.
        publish(sim, HOSTILE_EVENT)
        log_file = tmp_path / "log"
        deadline = time.monotonic() + 15
        while b"could not read tickets event" not in log_file.read_bytes():
            assert time.monotonic() < deadline, "the hostile event was not logged"
            time.sleep(0.1)
        assert screen.process is not None and screen.process.poll() is None, "the display died"
        screen.send_signal(signal.SIGTERM)
        run = screen.wait(timeout=30)

    # The log holds the service's text, never its control characters (escaped as text).
    logged = log_file.read_bytes()
    assert b"FROB" in logged
    found = sorted({match.group() for match in LOG_CONTROLS.finditer(logged)})
    assert not found, f"terminal controls in the log file: {found}"

    assert_terminal_restored(run)
    output = run.output
    for sequence, what in FORBIDDEN.items():
        assert sequence not in output, f"{what} reached the terminal"
    foreign = sorted(
        {
            match.group()
            for match in ANY_ESCAPE.finditer(output)
            if not ALLOWED_ESCAPES.fullmatch(match.group())
        }
    )
    assert not foreign, f"escape sequences Textual does not write: {foreign[:10]}"
    controls = set(re.findall(rb"[\x00-\x06\x08\x0b-\x0c\x0e-\x1a\x1c-\x1f\x7f]", output))
    assert not controls, f"control bytes reached the terminal: {sorted(controls)}"
